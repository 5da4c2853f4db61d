package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"slices"
	"strings"
	"time"

	"go.mau.fi/whatsmeow/proto/waE2E"

	"github.com/wagraph/wagraph/whatsapp"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// Message is a message as the simulated phone of an account decrypted it
// (sandbox.md, SandboxMessage). The attachment itself is not part of it:
// Media reads it, so an inbox stays small on the control API.
type Message struct {
	ID   string `json:"id"`
	From string `json:"from"` // the sender's phone number
	Chat string `json:"chat"` // the sender's user JID, or the group's JID
	// Type is text, image, video, audio, voice, document, sticker, location,
	// live_location, contact, contacts, poll, reaction, revoke, edit,
	// protocol (other protocol messages) or unknown.
	Type        string   `json:"type"`
	Text        string   `json:"text,omitempty"` // text, reaction emoji, edited text, poll name
	Caption     string   `json:"caption,omitempty"`
	FileName    string   `json:"fileName,omitempty"`
	Mimetype    string   `json:"mimetype,omitempty"`
	MediaSHA256 string   `json:"mediaSha256,omitempty"` // hex, of the decrypted attachment
	MediaSize   int64    `json:"mediaSize,omitempty"`
	Latitude    *float64 `json:"latitude,omitempty"`
	Longitude   *float64 `json:"longitude,omitempty"`
	Name        string   `json:"name,omitempty"` // location or contact name
	Address     string   `json:"address,omitempty"`
	VCard       string   `json:"vcard,omitempty"` // contacts: the vCards one after the other
	GIFPlayback bool     `json:"gifPlayback"`
	VoiceNote   bool     `json:"voiceNote"`
	Waveform    []byte   `json:"waveform,omitempty"` // voice notes: 64 loudness values 0-100
	Seconds     uint32   `json:"seconds,omitempty"`
	Mentions    []string `json:"mentions,omitempty"` // JID strings
	// QuotedID is the message this one quotes; for a reaction, revoke or
	// edit, the message it acts on.
	QuotedID  string    `json:"quotedId,omitempty"`
	Revoked   bool      `json:"revoked"` // its sender deleted it for everyone since
	Timestamp time.Time `json:"timestamp"`
	// Reactions are the reactions on it, one per account, as the phone
	// shows them; Edited says its sender edited it (Text or Caption is then
	// the new one).
	Reactions []Reaction `json:"reactions"`
	Edited    bool       `json:"edited"`
	ViewOnce  bool       `json:"viewOnce"`
	// Sticker says it is a sticker (Animated: one that moves); Forwarded
	// that it came marked as forwarded.
	Sticker   bool `json:"sticker"`
	Animated  bool `json:"animated"`
	Forwarded bool `json:"forwarded"`
	// Poll is a poll's question and options; LinkPreview the preview a
	// text carried of its first URL.
	Poll        *Poll        `json:"poll,omitempty"`
	LinkPreview *LinkPreview `json:"linkPreview,omitempty"`
}

// Poll is what a poll asks, as the phone shows it.
type Poll struct {
	Question        string   `json:"question"`
	Options         []string `json:"options"`
	SelectableCount int      `json:"selectableCount"`
}

// LinkPreview is the preview a text carried: its URL as matched in the
// text, title and description, and whether a thumbnail came with it.
type LinkPreview struct {
	URL          string `json:"url"`
	Title        string `json:"title,omitempty"`
	Description  string `json:"description,omitempty"`
	HasThumbnail bool   `json:"hasThumbnail"`
}

// Reaction is an emoji an account (From, a phone) put on a message.
type Reaction struct {
	Emoji string `json:"emoji"`
	From  string `json:"from"`
}

// inboxOf maps what the phone of phone decrypted. Copies of the account's
// own messages (its linked devices send them to its phone too, wrapped as
// DeviceSentMessage) are left out: the inbox is what the account received.
// A revoke marks the message it deletes.
func inboxOf(n *wafake.Network, log *slog.Logger, phone string, received []wafake.Received) []Message {
	out := make([]Message, 0, len(received))
	byID := map[string]int{}
	for _, r := range received {
		if r.From.User == phone {
			continue
		}
		m := messageOf(n, log, r)
		i, target := byID[m.QuotedID]
		target = target && out[i].Chat == m.Chat
		switch {
		case !target:
		case m.Type == "revoke" && out[i].From == m.From:
			// Only the sender revokes its message, in the same chat.
			out[i].Revoked = true
		case m.Type == "edit" && out[i].From == m.From && m.Timestamp.Sub(out[i].Timestamp) <= whatsapp.EditWindow:
			// Only the sender edits, within the window (the phone ignores
			// a later edit, as WhatsApp's apps do).
			out[i].Edited = true
			if out[i].Type == "text" {
				out[i].Text = m.Text
			} else {
				out[i].Caption = m.Caption
			}
		case m.Type == "reaction":
			out[i].Reactions = slices.DeleteFunc(out[i].Reactions, func(r Reaction) bool { return r.From == m.From })
			if m.Text != "" {
				out[i].Reactions = append(out[i].Reactions, Reaction{Emoji: m.Text, From: m.From})
			}
		}
		byID[m.ID] = len(out)
		out = append(out, m)
	}
	return out
}

// messageOf maps one decrypted message.
func messageOf(n *wafake.Network, log *slog.Logger, r wafake.Received) Message {
	m := Message{ID: r.ID, From: r.From.User, Chat: r.Chat.ToNonAD().String(), Timestamp: r.Timestamp.UTC()}
	msg := unwrap(r.Message)
	m.ViewOnce = r.Message.GetViewOnceMessage() != nil || r.Message.GetViewOnceMessageV2() != nil ||
		r.Message.GetViewOnceMessageV2Extension() != nil || msg.GetImageMessage().GetViewOnce() ||
		msg.GetVideoMessage().GetViewOnce() || msg.GetAudioMessage().GetViewOnce()
	var ci *waE2E.ContextInfo
	attached := false
	switch {
	case msg.GetConversation() != "":
		m.Type, m.Text = "text", msg.GetConversation()
	case msg.GetExtendedTextMessage() != nil:
		t := msg.GetExtendedTextMessage()
		m.Type, m.Text, ci = "text", t.GetText(), t.GetContextInfo()
		if t.MatchedText != nil {
			m.LinkPreview = &LinkPreview{URL: t.GetMatchedText(), Title: t.GetTitle(), Description: t.GetDescription(), HasThumbnail: len(t.GetJPEGThumbnail()) > 0}
		}
	case msg.GetImageMessage() != nil:
		img := msg.GetImageMessage()
		m.Type, m.Caption, m.Mimetype, ci, attached = "image", img.GetCaption(), img.GetMimetype(), img.GetContextInfo(), true
	case msg.GetVideoMessage() != nil:
		v := msg.GetVideoMessage()
		m.Type, m.Caption, m.Mimetype, ci, attached = "video", v.GetCaption(), v.GetMimetype(), v.GetContextInfo(), true
		m.GIFPlayback, m.Seconds = v.GetGifPlayback(), v.GetSeconds()
	case msg.GetPtvMessage() != nil:
		v := msg.GetPtvMessage()
		m.Type, m.Mimetype, m.Seconds, ci, attached = "video", v.GetMimetype(), v.GetSeconds(), v.GetContextInfo(), true
	case msg.GetAudioMessage() != nil:
		a := msg.GetAudioMessage()
		m.Type, m.Mimetype, m.Seconds, ci, attached = "audio", a.GetMimetype(), a.GetSeconds(), a.GetContextInfo(), true
		if a.GetPTT() {
			m.Type, m.VoiceNote, m.Waveform = "voice", true, a.GetWaveform()
		}
	case msg.GetDocumentMessage() != nil:
		d := msg.GetDocumentMessage()
		m.Type, m.FileName, m.Caption, m.Mimetype, ci, attached = "document", d.GetFileName(), d.GetCaption(), d.GetMimetype(), d.GetContextInfo(), true
	case msg.GetStickerMessage() != nil:
		s := msg.GetStickerMessage()
		m.Type, m.Mimetype, ci, attached = "sticker", s.GetMimetype(), s.GetContextInfo(), true
		m.Sticker, m.Animated = true, s.GetIsAnimated()
	case msg.GetLocationMessage() != nil:
		l := msg.GetLocationMessage()
		m.Type, m.Name, m.Address, ci = "location", l.GetName(), l.GetAddress(), l.GetContextInfo()
		m.Latitude, m.Longitude = ptr(l.GetDegreesLatitude()), ptr(l.GetDegreesLongitude())
	case msg.GetLiveLocationMessage() != nil:
		l := msg.GetLiveLocationMessage()
		m.Type, m.Caption, ci = "live_location", l.GetCaption(), l.GetContextInfo()
		m.Latitude, m.Longitude = ptr(l.GetDegreesLatitude()), ptr(l.GetDegreesLongitude())
	case msg.GetContactMessage() != nil:
		c := msg.GetContactMessage()
		m.Type, m.Name, m.VCard, ci = "contact", c.GetDisplayName(), c.GetVcard(), c.GetContextInfo()
	case msg.GetContactsArrayMessage() != nil:
		c := msg.GetContactsArrayMessage()
		m.Type, m.Name, ci = "contacts", c.GetDisplayName(), c.GetContextInfo()
		var cards []string
		for _, one := range c.GetContacts() {
			cards = append(cards, one.GetVcard())
		}
		m.VCard = strings.Join(cards, "")
	case poll(msg) != nil:
		p := poll(msg)
		m.Type, m.Text, ci = "poll", p.GetName(), p.GetContextInfo()
		m.Poll = &Poll{Question: p.GetName(), SelectableCount: int(p.GetSelectableOptionsCount())}
		for _, o := range p.GetOptions() {
			m.Poll.Options = append(m.Poll.Options, o.GetOptionName())
		}
	case msg.GetReactionMessage() != nil:
		rm := msg.GetReactionMessage()
		m.Type, m.Text, m.QuotedID = "reaction", rm.GetText(), rm.GetKey().GetID()
	case msg.GetProtocolMessage() != nil:
		p := msg.GetProtocolMessage()
		switch p.GetType() {
		case waE2E.ProtocolMessage_REVOKE:
			m.Type, m.QuotedID = "revoke", p.GetKey().GetID()
		case waE2E.ProtocolMessage_MESSAGE_EDIT:
			m.Type, m.QuotedID = "edit", p.GetKey().GetID()
			edited := unwrap(p.GetEditedMessage())
			m.Text = edited.GetConversation()
			if t := edited.GetExtendedTextMessage(); t != nil {
				m.Text = t.GetText()
			} else if c := captionOf(edited); c != "" {
				m.Caption = c
			}
		default:
			m.Type = "protocol"
		}
	default:
		m.Type = "unknown"
	}
	if ci != nil {
		m.Forwarded = ci.GetIsForwarded()
		m.QuotedID = ci.GetStanzaID()
		if len(ci.GetMentionedJID()) > 0 {
			m.Mentions = ci.GetMentionedJID()
		}
	}
	if len(m.Waveform) == 0 {
		m.Waveform = nil // the same on both sides of the control API's JSON
	}
	if attached {
		data, err := n.MediaOf(r.Message)
		if err != nil {
			// The phone could not read it: the message is still listed,
			// without a hash and size.
			log.Warn("sandbox: the recipient's phone cannot read an attachment", "message", r.ID, "err", err)
		} else {
			sum := sha256.Sum256(data)
			m.MediaSHA256, m.MediaSize = hex.EncodeToString(sum[:]), int64(len(data))
		}
	}
	return m
}

// unwrap looks through the containers clients put around a message.
func unwrap(msg *waE2E.Message) *waE2E.Message {
	for range 8 {
		var inner *waE2E.Message
		switch {
		case msg.GetDeviceSentMessage().GetMessage() != nil:
			inner = msg.GetDeviceSentMessage().GetMessage()
		case msg.GetEphemeralMessage().GetMessage() != nil:
			inner = msg.GetEphemeralMessage().GetMessage()
		case msg.GetViewOnceMessage().GetMessage() != nil:
			inner = msg.GetViewOnceMessage().GetMessage()
		case msg.GetViewOnceMessageV2().GetMessage() != nil:
			inner = msg.GetViewOnceMessageV2().GetMessage()
		case msg.GetViewOnceMessageV2Extension().GetMessage() != nil:
			inner = msg.GetViewOnceMessageV2Extension().GetMessage()
		case msg.GetDocumentWithCaptionMessage().GetMessage() != nil:
			inner = msg.GetDocumentWithCaptionMessage().GetMessage()
		case msg.GetEditedMessage().GetMessage() != nil:
			inner = msg.GetEditedMessage().GetMessage()
		default:
			return msg
		}
		msg = inner
	}
	return msg
}

func poll(msg *waE2E.Message) *waE2E.PollCreationMessage {
	for _, p := range []*waE2E.PollCreationMessage{
		msg.GetPollCreationMessage(), msg.GetPollCreationMessageV2(),
		msg.GetPollCreationMessageV3(), msg.GetPollCreationMessageV5(),
	} {
		if p != nil {
			return p
		}
	}
	return nil
}

func captionOf(msg *waE2E.Message) string {
	switch {
	case msg.GetImageMessage() != nil:
		return msg.GetImageMessage().GetCaption()
	case msg.GetVideoMessage() != nil:
		return msg.GetVideoMessage().GetCaption()
	case msg.GetDocumentMessage() != nil:
		return msg.GetDocumentMessage().GetCaption()
	}
	return ""
}

func ptr[T any](v T) *T { return &v }

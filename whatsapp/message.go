package whatsapp

// The shape of a message in events (events.md, "Data of the message
// kinds"), for received and sent messages alike, and the publication of
// events that are not status changes.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waCommon"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/wagraph/wagraph/internal/events/payload"
)

// The message event kinds (events.md).
const (
	KindInboundMessage   = "inbound-message.upsert"  // a message not from this account
	KindOutboundMessage  = "outbound-message.upsert" // a message from this account: sent here or on another device
	KindMessagesSend     = "messages.send"           // {id, chat, status: sent|failed, error?, timestamp}
	KindMessagesUpdate   = "messages.update"         // {id, chat, status, timestamp, …}
	KindMessagesReaction = "messages.reaction"       // {id, chat, sender, reaction: {text, key}, …}
	KindMessageReceipt   = "message-receipt.update"  // receipts in groups, per participant
)

// Timestamp formats t as the events' timestamps are written.
func Timestamp(t time.Time) string { return t.UTC().Format(payload.TimestampLayout) }

// content is what a message says, whatever its kind.
type content struct {
	typ                               string // events.md's type; "" for what is not a chat message
	text, caption, fileName, mimetype string
	size                              uint64
	lat, lng                          *float64
	name, address, vcard              string
	quotedID                          string   // the quoted message; for a reaction, revoke or edit the message acted on
	mentions                          []string // JID strings
	pollOptions                       []string
	pollSelectable                    int
	reactionKey                       *waCommon.MessageKey
	hasMedia                          bool
	media                             *MediaRef // nil when the attachment cannot be downloaded
	// viewOnce: an image, video or voice note its recipient may open
	// once (contentOfEvent adds the wrapper whatsmeow took off).
	viewOnce bool
	// beyond says why a poll is beyond WhatsApp's bounds (PollBeyondBounds):
	// it is then no poll, but a message of type unknown.
	beyond string
}

// contentOfEvent is contentOf of a message whatsmeow unwrapped: a view-once
// wrapper it took off makes the content view-once, whether or not the
// attachment inside says so too.
func contentOfEvent(evt *events.Message) content {
	c := contentOf(evt.Message)
	c.viewOnce = c.viewOnce || evt.IsViewOnce
	return c
}

// contentOf reads a message as whatsmeow unwrapped it (device-sent,
// ephemeral, view-once, document-with-caption and edit wrappers are gone).
// A type of "" is a message that is no chat message: sender key
// distribution, app state keys, history sync notices and other protocol
// messages, poll votes (encrypted; not decrypted here).
func contentOf(msg *waE2E.Message) content {
	var c content
	var ci *waE2E.ContextInfo
	media := func(typ, caption string, a attachment, info *waE2E.ContextInfo) {
		c.typ, c.caption, c.mimetype, c.size, ci, c.hasMedia = typ, caption, a.GetMimetype(), a.GetFileLength(), info, true
		c.media = refOf(a, c.fileName)
	}
	switch {
	case msg == nil:
	case msg.Conversation != nil:
		c.typ, c.text = "text", msg.GetConversation()
	case msg.ExtendedTextMessage != nil:
		t := msg.GetExtendedTextMessage()
		c.typ, c.text, ci = "text", t.GetText(), t.GetContextInfo()
	case msg.ImageMessage != nil:
		i := msg.GetImageMessage()
		media("image", i.GetCaption(), i, i.GetContextInfo())
		c.viewOnce = i.GetViewOnce()
	case msg.VideoMessage != nil:
		v := msg.GetVideoMessage()
		media("video", v.GetCaption(), v, v.GetContextInfo())
		c.viewOnce = v.GetViewOnce()
	case msg.PtvMessage != nil: // a round video note
		v := msg.GetPtvMessage()
		media("video", v.GetCaption(), v, v.GetContextInfo())
		c.viewOnce = v.GetViewOnce()
	case msg.AudioMessage != nil:
		a := msg.GetAudioMessage()
		typ := "audio"
		if a.GetPTT() {
			typ = "voice"
		}
		media(typ, "", a, a.GetContextInfo())
		c.viewOnce = a.GetViewOnce()
	case msg.DocumentMessage != nil:
		d := msg.GetDocumentMessage()
		c.fileName = d.GetFileName()
		media("document", d.GetCaption(), d, d.GetContextInfo())
	case msg.StickerMessage != nil:
		st := msg.GetStickerMessage()
		media("sticker", "", st, st.GetContextInfo())
	case msg.LocationMessage != nil:
		l := msg.GetLocationMessage()
		c.lat, c.lng = position(l.GetDegreesLatitude(), l.GetDegreesLongitude())
		c.typ, c.name, c.address, ci = "location", l.GetName(), l.GetAddress(), l.GetContextInfo()
	case msg.LiveLocationMessage != nil:
		l := msg.GetLiveLocationMessage()
		c.lat, c.lng = position(l.GetDegreesLatitude(), l.GetDegreesLongitude())
		c.typ, c.caption, ci = "location", l.GetCaption(), l.GetContextInfo()
	case msg.ContactMessage != nil:
		k := msg.GetContactMessage()
		c.typ, c.name, c.vcard, ci = "contact", k.GetDisplayName(), k.GetVcard(), k.GetContextInfo()
	case msg.ContactsArrayMessage != nil:
		k := msg.GetContactsArrayMessage()
		c.typ, c.name, ci = "contact", k.GetDisplayName(), k.GetContextInfo()
		var cards []string
		for _, one := range k.GetContacts() {
			cards = append(cards, one.GetVcard())
		}
		c.vcard = strings.Join(cards, "\n")
	case pollOf(msg) != nil:
		p := pollOf(msg)
		options, beyond := boundedPoll(p)
		if beyond != "" {
			// Not a poll WhatsApp's apps would show: nothing of it is
			// kept (its options could be thousands, each of any length).
			c.typ, c.beyond = "unknown", beyond
			break
		}
		c.typ, c.text, c.pollOptions, ci = "poll", p.GetName(), options, p.GetContextInfo()
		c.pollSelectable = int(p.GetSelectableOptionsCount())
	case msg.ReactionMessage != nil:
		r := msg.GetReactionMessage()
		c.typ, c.text, c.quotedID, c.reactionKey = "reaction", r.GetText(), r.GetKey().GetID(), r.GetKey()
	case msg.ProtocolMessage != nil:
		p := msg.GetProtocolMessage()
		switch p.GetType() {
		case waE2E.ProtocolMessage_REVOKE:
			c.typ, c.quotedID = "revoke", p.GetKey().GetID()
		case waE2E.ProtocolMessage_MESSAGE_EDIT:
			c.typ, c.quotedID = "edit", p.GetKey().GetID()
			edited := contentOf(p.GetEditedMessage())
			c.text, c.caption = edited.text, edited.caption
		}
	case msg.PollUpdateMessage != nil, msg.SenderKeyDistributionMessage != nil, msg.KeepInChatMessage != nil,
		msg.EncReactionMessage != nil, msg.PinInChatMessage != nil:
		// Not chat messages of their own (or encrypted ones not read here).
	default:
		// Something WhatsApp's apps show that is not read here; a message
		// with nothing but its context info is no message at all.
		msg.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
			if fd.Name() != "messageContextInfo" {
				c.typ = "unknown"
			}
			return c.typ == ""
		})
	}
	if ci != nil {
		c.quotedID = ci.GetStanzaID()
		c.mentions = ci.GetMentionedJID()
	}
	return c
}

// position is a location's coordinates, or none when either is NaN or
// infinite: a peer's double can be anything, JSON has no such number, and
// an event that cannot be encoded would never be stored (FuzzMessageEvent
// found it).
func position(lat, lng float64) (*float64, *float64) {
	if math.IsNaN(lat) || math.IsInf(lat, 0) || math.IsNaN(lng) || math.IsInf(lng, 0) {
		return nil, nil
	}
	return &lat, &lng
}

func pollOf(msg *waE2E.Message) *waE2E.PollCreationMessage {
	for _, p := range []*waE2E.PollCreationMessage{msg.GetPollCreationMessage(), msg.GetPollCreationMessageV2(), msg.GetPollCreationMessageV3()} {
		if p != nil {
			return p
		}
	}
	return nil
}

// person is a user as far as WhatsApp told its phone number, its LID, or
// both.
type person struct{ pn, lid types.JID }

// personOf resolves a user from the addresses a stanza gave (any mix of
// phone JIDs and LIDs, device or not), completing the missing one from the
// LID map whatsmeow keeps.
func personOf(ctx context.Context, cli *whatsmeow.Client, addrs ...types.JID) person {
	var p person
	for _, j := range addrs {
		switch j.Server {
		case types.DefaultUserServer:
			p.pn = j.ToNonAD()
		case types.HiddenUserServer:
			p.lid = j.ToNonAD()
		}
	}
	if p.pn.IsEmpty() && !p.lid.IsEmpty() {
		if pn, err := cli.Store.LIDs.GetPNForLID(ctx, p.lid); err == nil && !pn.IsEmpty() {
			p.pn = pn.ToNonAD()
		}
	}
	if p.lid.IsEmpty() && !p.pn.IsEmpty() {
		if lid, err := cli.Store.LIDs.GetLIDForPN(ctx, p.pn); err == nil && !lid.IsEmpty() {
			p.lid = lid.ToNonAD()
		}
	}
	return p
}

// jid is the person's address: the phone JID when known, as the message
// store and sends use it.
// phoneText and lidText are the person's number and LID as events carry
// them: null when WhatsApp did not tell.
func (p person) phoneText() payload.Text {
	if p.pn.IsEmpty() {
		return ""
	}
	return payload.Text(p.pn.User)
}

func (p person) lidText() payload.Text {
	if p.lid.IsEmpty() {
		return ""
	}
	return payload.Text(p.lid.String())
}

func (p person) jid() types.JID {
	if !p.pn.IsEmpty() {
		return p.pn
	}
	return p.lid
}

// own is the account of cli.
func own(cli *whatsmeow.Client) person {
	return person{pn: cli.Store.GetJID().ToNonAD(), lid: cli.Store.GetLID().ToNonAD()}
}

// chatOf is the chat of a message: the group, or the other user of a direct
// chat by phone JID when known (LID-addressed chats included), so a chat
// has one name in the message store whichever way WhatsApp addressed it.
func chatOf(ctx context.Context, cli *whatsmeow.Client, src *types.MessageSource) types.JID {
	if src.IsGroup || (src.Chat.Server != types.HiddenUserServer && src.Chat.Server != types.DefaultUserServer) {
		return src.Chat
	}
	alt := src.SenderAlt
	if src.IsFromMe {
		alt = src.RecipientAlt
	}
	if c := personOf(ctx, cli, src.Chat, alt).jid(); !c.IsEmpty() {
		return c
	}
	return src.Chat
}

// senderOf is who sent a message.
func senderOf(ctx context.Context, cli *whatsmeow.Client, src *types.MessageSource) person {
	if src.IsFromMe {
		return own(cli)
	}
	return personOf(ctx, cli, src.Sender, src.SenderAlt)
}

// describe is a message's record and its data in events.md's shape: every
// key is present, null when the message has no such value (mediaUrl is
// null here: the URL is the app's, which sets it for a record with Media).
// chat and sender are the resolved chat and sender.
func describe(info *types.MessageInfo, chat types.JID, sender person, c content) (*Message, *payload.Message) {
	rec := &Message{
		ID: info.ID, Chat: chat.String(), Sender: sender.jid().String(), FromMe: info.IsFromMe,
		Type: c.typ, Text: c.text, Caption: c.caption, Timestamp: info.Timestamp.UTC(), Media: c.media, ViewOnce: c.viewOnce,
	}
	d := &payload.Message{
		ID: info.ID, Chat: rec.Chat, Sender: rec.Sender, FromMe: info.IsFromMe,
		PushName: payload.Text(info.PushName), Timestamp: payload.At(info.Timestamp),
		Type: c.typ, Text: payload.Text(c.text), Caption: payload.Text(c.caption), FileName: payload.Text(c.fileName),
		Mimetype: payload.Text(c.mimetype), Name: payload.Text(c.name), Address: payload.Text(c.address),
		VCard: payload.Text(c.vcard), QuotedID: payload.Text(c.quotedID), IsGroup: chat.Server == types.GroupServer,
		ViewOnce: c.viewOnce,
	}
	d.SenderPhone = sender.phoneText()
	d.SenderLID = sender.lidText()
	if c.hasMedia {
		size := int64(c.size)
		d.Size = &size
	}
	if c.lat != nil {
		lat, lng := *c.lat, *c.lng
		d.Latitude, d.Longitude = &lat, &lng
	}
	if len(c.mentions) > 0 {
		d.Mentions = append([]string(nil), c.mentions...)
	}
	d.PollOptions = c.pollOptions
	if c.typ == "poll" {
		rec.Poll = &PollSpec{Options: c.pollOptions, Selectable: c.pollSelectable}
	}
	return rec, d
}

// errStale: the client whose event is being published is no longer the
// session's.
var errStale = errors.New("whatsapp: the client is no longer the session's")

// kindsOf names the kinds of evs, for logs and errors.
func kindsOf(evs []Event) string {
	kinds := make([]string, len(evs))
	for i, ev := range evs {
		kinds[i] = ev.Kind
	}
	return strings.Join(kinds, ", ")
}

// publishEvents hands evs to the publisher in order, under the session's
// emitMu so that they keep their place among the session's other events.
// With cli set they are published only while cli is the session's client
// (WhatsApp re-sends what a replaced client did not acknowledge); with cli
// nil (an operation) whatever the client. Nothing is published about a
// deleted session. It stops at the first failure; a BatchPublisher gets
// them all at once.
func (m *Manager) publishEvents(s *session, cli *whatsmeow.Client, evs ...Event) error {
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	s.mu.Lock()
	deleted, stale := s.deleted, cli != nil && (s.cli != cli || m.closing.Load())
	s.mu.Unlock()
	switch {
	case deleted:
		return nil
	case stale:
		return errStale
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if bp, ok := m.pub.(BatchPublisher); ok && len(evs) > 1 {
		if err := bp.PublishAll(ctx, s.id, evs); err != nil {
			s.log.Error("publishing events failed", "kinds", kindsOf(evs), "err", err)
			m.storeFailed(s)
			return fmt.Errorf("publish %s: %w", kindsOf(evs), err)
		}
		return nil
	}
	for _, ev := range evs {
		if err := m.pub.Publish(ctx, s.id, ev); err != nil {
			s.log.Error("publishing an event failed", "kind", ev.Kind, "err", err)
			m.storeFailed(s)
			return fmt.Errorf("publish %s: %w", ev.Kind, err)
		}
	}
	return nil
}

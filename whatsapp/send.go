package whatsapp

// Sending messages: the message of each kind, its media uploaded, the
// recipient checked, and the events of the outcome.

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"

	"github.com/wagraph/wagraph/internal/events/payload"
	"github.com/wagraph/wagraph/internal/fault"
)

// Media is media prepared by the app (internal/media), ready to upload.
// Its JSON is how a send travels to the process running its session and
// how a scheduled send is stored (the bytes apart there).
type Media struct {
	Data []byte `json:"data,omitempty"`
	// Body, when Data is empty, holds the bytes out of memory (a forward's
	// download, MediaFile): they are uploaded from there, and read whole
	// only to travel to another process (MarshalJSON). Whoever set it
	// closes it once the send has ended.
	Body      Body   `json:"-"`
	Mimetype  string `json:"mimetype"`
	FileName  string `json:"fileName,omitempty"`
	Thumbnail []byte `json:"thumbnail,omitempty"` // JPEG or nil
	Width     uint32 `json:"width,omitempty"`
	Height    uint32 `json:"height,omitempty"`
	Seconds   uint32 `json:"seconds,omitempty"`
	Waveform  []byte `json:"waveform,omitempty"` // voice notes: 64 values 0..100
	Animated  bool   `json:"animated,omitempty"` // a sticker that moves
}

// MarshalJSON carries a Body's bytes as Data: the process running the
// session has no access to this one's files.
func (md Media) MarshalJSON() ([]byte, error) {
	type plain Media // without this method
	p := plain(md)
	if len(p.Data) == 0 && md.Body != nil {
		data, err := readBody(md.Body)
		if err != nil {
			return nil, err
		}
		p.Data = data
	}
	return json.Marshal(p)
}

// Quote is the message an outgoing one quotes (the app looks it up in its
// store).
type Quote struct {
	ID     string    `json:"id"`
	Sender types.JID `json:"sender"`
	Chat   types.JID `json:"chat"`
	Text   string    `json:"text"`
}

// Outgoing is one message to send. Its JSON is how a send travels to the
// process running its session and how a scheduled send is stored
// (internal/messaging): a field added here is carried and stored with no
// other change. JIDs are their strings.
type Outgoing struct {
	ID          string       `json:"id,omitempty"` // a reserved id (NewMessageID); "" = a new one
	To          types.JID    `json:"to"`           // a user (s.whatsapp.net or lid) or a group (g.us)
	Type        string       `json:"type"`         // a builder's name (Builders): "text", "image", …
	Text        string       `json:"text,omitempty"`
	Caption     string       `json:"caption,omitempty"`
	Media       *Media       `json:"media,omitempty"`
	GIFPlayback bool         `json:"gifPlayback,omitempty"`
	VoiceNote   bool         `json:"voiceNote,omitempty"` // audio as push-to-talk, with Media's Waveform and Seconds
	ViewOnce    bool         `json:"viewOnce,omitempty"`  // image, video or audio the recipient can open once
	Latitude    float64      `json:"latitude,omitempty"`
	Longitude   float64      `json:"longitude,omitempty"`
	Name        string       `json:"name,omitempty"`        // location
	Address     string       `json:"address,omitempty"`     // location
	ContactName string       `json:"contactName,omitempty"` // the contact's display name
	VCard       string       `json:"vcard,omitempty"`
	Mentions    []types.JID  `json:"mentions,omitempty"`
	Quoted      *Quote       `json:"quoted,omitempty"`
	Poll        *PollSpec    `json:"poll,omitempty"`        // a poll: its options (Text is the question)
	LinkPreview *LinkPreview `json:"linkPreview,omitempty"` // a text's preview of its first URL
	Forwarded   bool         `json:"forwarded,omitempty"`   // shown as forwarded (forwardMessage)
}

// Sent is a message WhatsApp acknowledged.
type Sent struct {
	ID        string
	Chat      types.JID
	Timestamp time.Time // WhatsApp's
	// Recipient is who WhatsApp addressed: a send's person by phone and
	// LID as far as the session knows them; set by Send.
	Recipient Identity
}

// Identity is a person or group a message went to: the JID WhatsApp
// addressed, and a person's phone number (digits) and LID when known.
type Identity struct {
	JID   types.JID
	Phone string
	LID   types.JID
}

// voiceNoteMimetype is the only format WhatsApp's apps play as a voice
// note.
const voiceNoteMimetype = "audio/ogg; codecs=opus"

// NewMessageID returns a new message id in the format WhatsApp Web uses. It
// needs no client: scheduled sends reserve their id when they are stored.
func NewMessageID() string {
	var none *whatsmeow.Client // whatsmeow's generator takes the account's JID when it has one; the random part suffices
	return none.GenerateMessageID()
}

// Send sends out from the session and returns once WhatsApp acknowledged
// it; it then publishes outbound-message.upsert and messages.send (sent). A
// user recipient must be on WhatsApp (422 otherwise). A failure publishes
// messages.send (failed) with the error.
func (m *Manager) Send(ctx context.Context, sessionID string, out Outgoing) (Sent, error) {
	s, cli, err := m.sessionClient(sessionID)
	if out.ID == "" {
		out.ID = NewMessageID()
	}
	var sent Sent
	if err == nil {
		sent, err = m.send(ctx, s, cli, out)
	}
	if err != nil {
		if s != nil {
			m.sendFailed(s, out, err)
		}
		return Sent{}, err
	}
	return sent, nil
}

func (m *Manager) send(ctx context.Context, s *session, cli *whatsmeow.Client, out Outgoing) (Sent, error) {
	to, err := m.recipient(ctx, s, cli, out.To)
	if err != nil {
		return Sent{}, err
	}
	msg, err := buildMessage(ctx, s.id, cli, out)
	if err != nil {
		return Sent{}, err
	}
	resp, err := cli.SendMessage(ctx, to, msg, whatsmeow.SendRequestExtra{ID: out.ID})
	if err != nil {
		if refused := m.limitFault(ctx, s, serverCode(err), err); refused != nil {
			return Sent{}, refused
		}
		return Sent{}, sendFault(s.id, to, "send the message", err)
	}
	sent := Sent{ID: resp.ID, Chat: to, Timestamp: resp.Timestamp, Recipient: Identity{JID: to}}
	if to.Server != types.GroupServer {
		p := personOf(ctx, cli, to)
		sent.Recipient.Phone, sent.Recipient.LID = p.pn.User, p.lid
	}
	err = m.publishEvents(s, nil, m.ownMessage(s, cli, sent, msg), Event{Kind: KindMessagesSend, Data: &payload.MessageStatus{
		ID: sent.ID, Chat: to.String(), Status: "sent", Timestamp: payload.At(sent.Timestamp),
	}})
	if err != nil {
		// WhatsApp has the message: the caller learns it was sent.
		s.log.Warn("a sent message's events were not stored", "message_id", sent.ID, "err", err)
	}
	return sent, nil
}

// ownMessage is the outbound-message.upsert of a message sent here.
func (m *Manager) ownMessage(s *session, cli *whatsmeow.Client, sent Sent, msg *waE2E.Message) Event {
	s.mu.Lock()
	pushName := s.st.pushName
	s.mu.Unlock()
	me := own(cli)
	info := &types.MessageInfo{
		MessageSource: types.MessageSource{Chat: sent.Chat, Sender: me.pn, IsFromMe: true, IsGroup: sent.Chat.Server == types.GroupServer},
		ID:            sent.ID, PushName: pushName, Timestamp: sent.Timestamp,
	}
	viewOnce := false
	if inner := msg.GetViewOnceMessageV2().GetMessage(); inner != nil {
		msg, viewOnce = inner, true // described as its media, as whatsmeow unwraps a received one
	}
	c := contentOf(msg)
	c.viewOnce = c.viewOnce || viewOnce
	rec, data := describe(info, sent.Chat, me, c)
	return Event{Kind: KindOutboundMessage, Data: data, Message: rec}
}

func (m *Manager) sendFailed(s *session, out Outgoing, cause error) {
	err := m.publishEvents(s, nil, SendFailed(out, cause))
	if err != nil {
		s.log.Warn("a failed send's event was not stored", "message_id", out.ID, "err", err)
	}
}

// SendFailed is the messages.send (failed) of out, which failed with cause:
// its fault's message, never an internal error's text.
func SendFailed(out Outgoing, cause error) Event {
	msg := "internal error"
	if f := fault.From(cause); f != nil {
		msg = f.Message
	}
	return Event{Kind: KindMessagesSend, Data: &payload.MessageStatus{
		ID: out.ID, Chat: out.To.String(), Status: "failed", Error: payload.Text(msg), Timestamp: payload.At(time.Now()),
	}}
}

// serverCode is the error code of WhatsApp's answer when err is whatsmeow's
// ErrServerReturnedError ("server returned error 463"); 0 otherwise.
func serverCode(err error) int {
	if !errors.Is(err, whatsmeow.ErrServerReturnedError) {
		return 0
	}
	msg := err.Error()
	code, _ := strconv.Atoi(msg[strings.LastIndexByte(msg, ' ')+1:])
	return code
}

// recipient checks the recipient: a user's number must be on WhatsApp,
// and WhatsApp's canonical JID of it is what the message goes to (it can
// differ from the number given, as for Brazilian mobile numbers). LIDs and
// groups are taken as they are. A number found lately is not asked again
// (recipients.go).
func (m *Manager) recipient(ctx context.Context, s *session, cli *whatsmeow.Client, to types.JID) (types.JID, error) {
	switch {
	case to.Device != 0 || to.User == "":
		return to, fault.InvalidField("number", "number must name a user or a group, not %q", to.String())
	case to.Server == types.GroupServer, to.Server == types.HiddenUserServer:
		return to, nil
	case to.Server != types.DefaultUserServer:
		return to, fault.InvalidField("number", "number %q: the server must be s.whatsapp.net, g.us or lid", to.String())
	}
	if jid, ok := s.recipients.lookup(to.User, time.Now()); ok {
		return jid, nil
	}
	res, err := cli.IsOnWhatsApp(ctx, []string{"+" + to.User})
	if err != nil {
		return to, classify(s.id, "check the number", err)
	}
	if len(res) == 0 || !res[0].IsIn {
		return to, fault.New(fault.WhatsAppRefused, "number %s is not on WhatsApp", to.User)
	}
	jid := to
	// whatsmeow asks in LID addressing mode: WhatsApp names the user by LID
	// and gives the number as PhoneNumber (user.go IsOnWhatsApp).
	for _, j := range []types.JID{res[0].PhoneNumber, res[0].JID} {
		if j.Server == types.DefaultUserServer && j.User != "" {
			jid = j.ToNonAD()
			break
		}
	}
	s.recipients.remember(to.User, jid, time.Now())
	return jid, nil
}

// contextInfo carries the mentions, the quote and the forwarded mark of
// out; nil when it has none.
func contextInfo(out Outgoing) *waE2E.ContextInfo {
	if len(out.Mentions) == 0 && out.Quoted == nil && !out.Forwarded {
		return nil
	}
	ci := &waE2E.ContextInfo{}
	if out.Forwarded {
		// WhatsApp's apps count the hops; a score of 5 or more shows
		// "forwarded many times". The store does not know earlier hops.
		ci.IsForwarded, ci.ForwardingScore = proto.Bool(true), proto.Uint32(1)
	}
	for _, j := range out.Mentions {
		ci.MentionedJID = append(ci.MentionedJID, j.ToNonAD().String())
	}
	if q := out.Quoted; q != nil {
		ci.StanzaID = proto.String(q.ID)
		if !q.Sender.IsEmpty() {
			ci.Participant = proto.String(q.Sender.ToNonAD().String())
		}
		if !q.Chat.IsEmpty() && q.Chat.ToNonAD() != out.To.ToNonAD() {
			ci.RemoteJID = proto.String(q.Chat.String()) // a message of another chat
		}
		ci.QuotedMessage = &waE2E.Message{Conversation: proto.String(q.Text)}
	}
	return ci
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return proto.String(s)
}

func nonZero(n uint32) *uint32 {
	if n == 0 {
		return nil
	}
	return proto.Uint32(n)
}

// Revoke deletes a message the session sent, for everyone in chat; it
// publishes outbound-message.upsert (the revoke) and messages.update
// (revoked). The Sent is the revoke's own.
func (m *Manager) Revoke(ctx context.Context, sessionID string, chat types.JID, messageID string) (Sent, error) {
	if messageID == "" {
		return Sent{}, fault.InvalidField("messageId", "messageId must not be empty")
	}
	s, cli, err := m.sessionClient(sessionID)
	if err != nil {
		return Sent{}, err
	}
	msg := cli.BuildRevoke(chat, types.EmptyJID, messageID)
	resp, err := cli.SendMessage(ctx, chat, msg)
	if err != nil {
		return Sent{}, sendFault(s.id, chat, "revoke the message", err)
	}
	sent := Sent{ID: resp.ID, Chat: chat, Timestamp: resp.Timestamp}
	err = m.publishEvents(s, nil, m.ownMessage(s, cli, sent, msg), Event{Kind: KindMessagesUpdate, Data: &payload.MessageStatus{
		ID: messageID, Chat: chat.String(), Status: "revoked", Timestamp: payload.At(sent.Timestamp), MessageID: payload.Text(sent.ID),
		Sender: payload.Text(own(cli).jid().String()), ByMe: true,
	}})
	if err != nil {
		s.log.Warn("a revoke's events were not stored", "message_id", messageID, "err", err)
	}
	return sent, nil
}

// sendFault classifies a failed send to to. WhatsApp refuses a message
// with an error code in its ack: in groups 401 (only admins may send), 403
// (not a participant) and 404 (no such group) say why; to a user, 404 says
// there is no such user.
func sendFault(id string, to types.JID, action string, err error) error {
	code := serverCode(err)
	group := to.Server == types.GroupServer
	switch {
	case group && code == 401:
		return fault.Wrap(err, fault.WhatsAppRefused, "session %s could not %s: only admins can send messages to group %s", id, action, to)
	case group && code == 403:
		return fault.Wrap(err, fault.WhatsAppRefused, "session %s could not %s: the account is not a participant of group %s", id, action, to)
	case group && code == 404:
		return fault.Wrap(err, fault.NotFound, "group %s not found", to)
	case code == 404:
		// A user WhatsApp does not have: a LID no account has (a number
		// is checked before the send, recipient).
		return fault.Wrap(err, fault.WhatsAppRefused, "session %s could not %s: %s is not on WhatsApp (no account has it)", id, action, to)
	case code != 0:
		return fault.Wrap(err, fault.WhatsAppRefused, "session %s: WhatsApp refused to %s to %s (error %d)", id, action, to, code)
	case group:
		return groupFault(id, to, action, err)
	}
	return classify(id, action, err)
}

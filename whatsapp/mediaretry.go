package whatsapp

// Media retry: WhatsApp's media hosts delete a blob after some weeks, and
// a download then fails with NOT_FOUND. The phone still has the media and
// uploads it again when asked (RequestMediaRetry); its answer becomes
// messages.media-update, and, when it succeeded, the message's record with
// the media's new location.

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waMmsRetry"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/wagraph/wagraph/internal/events/payload"
	"github.com/wagraph/wagraph/internal/fault"
)

// KindMediaUpdate is the phone's answer to a media retry:
// {id, chat, fromMe, mediaUrl, error, timestamp}.
const KindMediaUpdate = "messages.media-update"

// maxRetries bounds the media retries a session waits for at once.
const maxRetries = 256

// mediaRetries are the messages whose media the session asked the phone
// for, by message id: the answer is encrypted with the media key, which
// only the request had. Its zero value is ready.
type mediaRetries struct {
	mu      sync.Mutex
	order   []string
	pending map[string]Message
}

func (p *mediaRetries) add(msg Message) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pending == nil {
		p.pending = map[string]Message{}
	}
	if _, ok := p.pending[msg.ID]; !ok {
		p.order = append(p.order, msg.ID)
	}
	p.pending[msg.ID] = msg
	for len(p.order) > maxRetries {
		delete(p.pending, p.order[0])
		p.order = p.order[1:]
	}
}

func (p *mediaRetries) take(id string) (Message, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	msg, ok := p.pending[id]
	delete(p.pending, id)
	return msg, ok
}

// RequestMediaRetry asks the account's phone to upload the media of msg (a
// stored message record with media) again. The answer comes as
// messages.media-update; on success the event carries msg with the new
// location, to replace the stored record's. The request is remembered
// until the answer, in memory: an answer after a restart reports an error.
func (m *Manager) RequestMediaRetry(ctx context.Context, sessionID string, msg Message) error {
	if msg.Media == nil || len(msg.Media.MediaKey) == 0 {
		return fault.New(fault.NotFound, "message %s has no media", msg.ID)
	}
	chat, err := types.ParseJID(msg.Chat)
	if err != nil {
		return fmt.Errorf("message %s: chat %q: %w", msg.ID, msg.Chat, err)
	}
	sender, err := types.ParseJID(msg.Sender)
	if err != nil {
		return fmt.Errorf("message %s: sender %q: %w", msg.ID, msg.Sender, err)
	}
	s, cli, err := m.sessionClient(sessionID)
	if err != nil {
		return err
	}
	info := &types.MessageInfo{ID: msg.ID, MessageSource: types.MessageSource{
		Chat: chat, Sender: sender, IsFromMe: msg.FromMe, IsGroup: chat.Server == types.GroupServer,
	}}
	s.retries.add(msg)
	if err := cli.SendMediaRetryReceipt(ctx, info, msg.Media.MediaKey); err != nil {
		s.retries.take(msg.ID)
		return classify(sessionID, "ask the phone for the media", err)
	}
	return nil
}

// handleMediaRetry publishes the phone's answer to a media retry.
// whatsmeow acknowledges the notification whatever the handler returns.
func (r *clientRun) handleMediaRetry(evt *events.MediaRetry) bool {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	d := &payload.MediaUpdate{ID: evt.MessageID, FromMe: evt.FromMe, Timestamp: payload.At(evt.Timestamp)}
	ev := Event{Kind: KindMediaUpdate, Data: d}
	msg, ok := r.s.retries.take(evt.MessageID)
	if ok {
		d.Chat = msg.Chat
	} else {
		d.Chat = chatOf(ctx, r.cli, &types.MessageSource{Chat: evt.ChatID, IsGroup: evt.ChatID.Server == types.GroupServer}).String()
	}
	switch notif, err := r.decryptRetry(evt, msg, ok); {
	case err != nil:
		d.Error = payload.Text(err.Error())
	case notif.GetResult() != waMmsRetry.MediaRetryNotification_SUCCESS || notif.GetDirectPath() == "":
		d.Error = payload.Text("the phone could not upload the media again: " + notif.GetResult().String())
	default:
		media := *msg.Media
		media.DirectPath = notif.GetDirectPath()
		msg.Media = &media
		ev.Message = &msg
	}
	return r.m.publishEvents(r.s, r.cli, ev) == nil
}

// decryptRetry reads the phone's answer with the media key of the request;
// its error is worded for the event's error.
func (r *clientRun) decryptRetry(evt *events.MediaRetry, msg Message, requested bool) (*waMmsRetry.MediaRetryNotification, error) {
	if !requested {
		return nil, errors.New("no media retry of this message is pending (the gateway restarted since it asked): ask again")
	}
	notif, err := whatsmeow.DecryptMediaRetryNotification(evt, msg.Media.MediaKey)
	switch {
	case errors.Is(err, whatsmeow.ErrMediaNotAvailableOnPhone):
		return nil, errors.New("the phone no longer has the media")
	case err != nil:
		r.s.log.Warn("a media retry answer could not be read", "message_id", evt.MessageID, "err", err)
		return nil, errors.New("the phone's answer could not be read")
	}
	return notif, nil
}

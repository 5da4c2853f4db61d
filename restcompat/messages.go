package restcompat

import (
	"context"
	"net/http"
	"time"

	"github.com/wagraph/wagraph/graph"
	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/fault"
)

// sendResultJSON is the data of a send's success: the seed shows an empty
// object; messageId and timestamp (or scheduledAt) are additions it ignores.
type sendResultJSON struct {
	MessageID   string        `json:"messageId" required:"true" description:"The message id; reserved at once for a delayed send."`
	Timestamp   timestamp     `json:"timestamp,omitempty" description:"When WhatsApp accepted the message; absent for a delayed send."`
	ScheduledAt timestamp     `json:"scheduledAt,omitempty" description:"When a delayed send will be made; absent when sent now."`
	Recipient   *identityJSON `json:"recipient,omitempty" description:"Who WhatsApp addressed, for a send made now (absent for a delayed send)."`
}

// identityJSON is who a send went to (GraphQL's Identity).
type identityJSON struct {
	Input string  `json:"input" required:"true" description:"The address as given (the send's number)."`
	JID   string  `json:"jid" required:"true" description:"The JID WhatsApp addressed."`
	Phone *string `json:"phone" required:"true" description:"The person's number (digits); null for a group, or when WhatsApp does not tell."`
	LID   *string `json:"lid" required:"true" description:"The person's LID (…@lid); null for a group, or when WhatsApp does not tell."`
}

func toSendJSON(res *model.SendResult) sendResultJSON {
	out := sendResultJSON{MessageID: res.MessageID}
	if res.Timestamp != nil {
		out.Timestamp = timestamp(model.FormatTime(*res.Timestamp))
	}
	if res.ScheduledAt != nil {
		out.ScheduledAt = timestamp(model.FormatTime(*res.ScheduledAt))
	}
	if p := res.Recipient; p != nil {
		out.Recipient = &identityJSON{Input: p.Input, JID: p.Jid, Phone: p.Phone, LID: p.Lid}
	}
	return out
}

// keyed is r's context carrying its Idempotency-Key header's key to the
// send it asks for (graph.WithIdempotencyKey): every route of
// messaging.KeyedSends (pIdempotencyKey).
func keyed(r *http.Request) context.Context {
	if key := r.Header.Get("Idempotency-Key"); key != "" {
		return graph.WithIdempotencyKey(r.Context(), key)
	}
	return r.Context()
}

// sendBody is a send's REST body, which gives the resolver's input.
type sendBody[In any] interface{ input() In }

// send serves a send whose body is a B: its input goes to the send
// mutation, with the Idempotency-Key header's key.
func send[B sendBody[In], In any](mutate func(m graph.MutationResolver, ctx context.Context, sessionID string, in In) (*model.SendResult, error)) handling {
	return withBody(false, func(h *Handler, w http.ResponseWriter, r *http.Request, in B) {
		res, err := mutate(h.m, keyed(r), r.PathValue("sessionId"), in.input())
		if err != nil {
			writeError(w, r, h.log, err)
			return
		}
		ok(w, http.StatusOK, toSendJSON(res))
	})
}

func (h *Handler) deleteMessage(w http.ResponseWriter, r *http.Request) {
	if _, err := h.m.DeleteMessage(r.Context(), r.PathValue("sessionId"), r.PathValue("messageId")); err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusOK, empty{})
}

// messageJSON is a stored message (GET /session/{id}/message/{messageId}).
type messageJSON struct {
	ID        string    `json:"id" required:"true"`
	Chat      string    `json:"chat" required:"true" description:"JID of the chat."`
	Sender    string    `json:"sender" required:"true" description:"JID of the sender."`
	FromMe    bool      `json:"fromMe" required:"true"`
	Type      string    `json:"type" required:"true" description:"text, image, video, document, audio, location, contact, …"`
	Text      *string   `json:"text" required:"true"`
	Caption   *string   `json:"caption" required:"true"`
	MediaURL  *string   `json:"mediaUrl" required:"true" description:"Path of this service's media route for the message (GET /api/v1/session/{sessionId}/message/{messageId}/media); null without media."`
	Status    string    `json:"status" required:"true" description:"Delivery status."`
	Timestamp timestamp `json:"timestamp" required:"true"`
	ViewOnce  bool      `json:"viewOnce" required:"true" description:"An image, video or voice note its recipient may open once: never forwarded, and its media served once (the first successful download through the media route is the one view; after it the route answers 404)."`
	// Section 2 of surface.md: who sent it by every address, and what
	// happened to it since.
	SenderPhone *string        `json:"senderPhone" required:"true" description:"The sender's phone number (digits), when ever learned, whichever address the message used."`
	SenderLID   *string        `json:"senderLid" required:"true" description:"The sender's LID (…@lid), when ever learned."`
	Edited      bool           `json:"edited" required:"true" description:"Whether the sender edited the message (text or caption is the edited one)."`
	Reactions   []reactionJSON `json:"reactions" required:"true" description:"The message's current reactions: one per person."`
}

// reactionJSON is an emoji on a message, and who put it there.
type reactionJSON struct {
	Emoji  string `json:"emoji" required:"true"`
	Sender string `json:"sender" required:"true" description:"The JID of who reacted."`
	FromMe bool   `json:"fromMe" required:"true" description:"Whether this account reacted."`
}

// toMessageJSON is a stored message as REST answers it.
func toMessageJSON(m *model.Message) messageJSON {
	out := messageJSON{
		ID: m.ID, Chat: m.Chat, Sender: m.Sender, FromMe: m.FromMe, Type: m.Type, Text: m.Text,
		Caption: m.Caption, MediaURL: m.MediaURL, Status: m.Status, Timestamp: timestamp(model.FormatTime(m.Timestamp)),
		ViewOnce: m.ViewOnce, SenderPhone: m.SenderPhone, SenderLID: m.SenderLid, Edited: m.Edited,
		Reactions: make([]reactionJSON, len(m.Reactions)),
	}
	for i, r := range m.Reactions {
		out.Reactions[i] = reactionJSON{Emoji: r.Emoji, Sender: r.Sender, FromMe: r.FromMe}
	}
	return out
}

// optionalTime is t as REST writes it; nil stays null.
func optionalTime(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := model.FormatTime(*t)
	return &s
}

func (h *Handler) getMessage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("messageId")
	m, err := h.q.Message(r.Context(), r.PathValue("sessionId"), id)
	if err == nil && m == nil {
		err = fault.New(fault.NotFound, "message %s not found in session %s", id, r.PathValue("sessionId"))
	}
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusOK, toMessageJSON(m))
}

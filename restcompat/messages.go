package restcompat

import (
	"context"
	"net/http"

	"github.com/wagraph/wagraph/graph"
	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/fault"
)

// sendJSON is the data of a send's success: the seed shows an empty object;
// messageId and timestamp (or scheduledAt) are additions it ignores.
type sendJSON struct {
	MessageID   string        `json:"messageId"`
	Timestamp   string        `json:"timestamp,omitempty"`
	ScheduledAt string        `json:"scheduledAt,omitempty"`
	Recipient   *identityJSON `json:"recipient,omitempty"`
}

// identityJSON is who a send went to (GraphQL's Identity).
type identityJSON struct {
	Input string  `json:"input"`
	JID   string  `json:"jid"`
	Phone *string `json:"phone"`
	LID   *string `json:"lid"`
}

func toSendJSON(res *model.SendResult) sendJSON {
	out := sendJSON{MessageID: res.MessageID}
	if res.Timestamp != nil {
		out.Timestamp = model.FormatTime(*res.Timestamp)
	}
	if res.ScheduledAt != nil {
		out.ScheduledAt = model.FormatTime(*res.ScheduledAt)
	}
	if p := res.Recipient; p != nil {
		out.Recipient = &identityJSON{Input: p.Input, JID: p.Jid, Phone: p.Phone, LID: p.Lid}
	}
	return out
}

// sendHandler decodes a send body of type In and calls the send mutation.
func sendHandler[In any](h *Handler, send func(ctx context.Context, sessionID string, in In) (*model.SendResult, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var in In
		if err := decodeBody(r, &in, false); err != nil {
			writeError(w, r, h.log, err)
			return
		}
		ctx := r.Context()
		if key := r.Header.Get("Idempotency-Key"); key != "" {
			ctx = graph.WithIdempotencyKey(ctx, key)
		}
		res, err := send(ctx, r.PathValue("sessionId"), in)
		if err != nil {
			writeError(w, r, h.log, err)
			return
		}
		ok(w, http.StatusOK, toSendJSON(res))
	}
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
	ID        string  `json:"id"`
	Chat      string  `json:"chat"`
	Sender    string  `json:"sender"`
	FromMe    bool    `json:"fromMe"`
	Type      string  `json:"type"`
	Text      *string `json:"text"`
	Caption   *string `json:"caption"`
	MediaURL  *string `json:"mediaUrl"`
	Status    string  `json:"status"`
	Timestamp string  `json:"timestamp"`
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
	ok(w, http.StatusOK, messageJSON{
		ID: m.ID, Chat: m.Chat, Sender: m.Sender, FromMe: m.FromMe, Type: m.Type, Text: m.Text,
		Caption: m.Caption, MediaURL: m.MediaURL, Status: m.Status, Timestamp: model.FormatTime(m.Timestamp),
	})
}

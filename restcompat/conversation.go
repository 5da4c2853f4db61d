package restcompat

import (
	"context"
	"net/http"

	"github.com/wagraph/wagraph/graph/model"
)

// The bodies of the conversation routes (surface.md, section 1): named as
// the GraphQL arguments.
type (
	markReadBody struct {
		MessageIDs []string `json:"messageIds"`
	}
	presenceBody struct {
		State string  `json:"state"`
		Chat  *string `json:"chat"`
	}
	chatBody struct {
		Chat string `json:"chat"`
	}
)

// doneHandler decodes a body of type In (optional: an absent body is the
// zero In) and calls a mutation that answers only whether it was done: the
// success's data is {}.
func doneHandler[In any](h *Handler, optional bool, call func(ctx context.Context, r *http.Request, in In) (bool, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var in In
		if err := decodeBody(r, &in, optional); err != nil {
			writeError(w, r, h.log, err)
			return
		}
		if _, err := call(r.Context(), r, in); err != nil {
			writeError(w, r, h.log, err)
			return
		}
		ok(w, http.StatusOK, empty{})
	}
}

func (h *Handler) markRead(ctx context.Context, r *http.Request, in markReadBody) (bool, error) {
	return h.m.MarkRead(ctx, r.PathValue("sessionId"), r.PathValue("chat"), in.MessageIDs)
}

func (h *Handler) sendPresence(ctx context.Context, r *http.Request, in presenceBody) (bool, error) {
	return h.m.SendPresence(ctx, r.PathValue("sessionId"), model.PresenceState(in.State), in.Chat)
}

func (h *Handler) subscribePresence(ctx context.Context, r *http.Request, in chatBody) (bool, error) {
	return h.m.SubscribePresence(ctx, r.PathValue("sessionId"), in.Chat)
}

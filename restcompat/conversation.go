package restcompat

import (
	"context"
	"net/http"

	"github.com/wagraph/wagraph/graph"
	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/fault"
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

type (
	reactionBody struct {
		Emoji *string `json:"emoji"`
	}
	editBody struct {
		Text string `json:"text"`
	}
	forwardBody struct {
		Number string `json:"number"`
	}
)

// messageAction decodes a body of type In and calls a mutation on the
// message of the path that answers a send's result.
func messageAction[In any](h *Handler, call func(ctx context.Context, sessionID, messageID string, in In) (*model.SendResult, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var in In
		if err := decodeBody(r, &in, false); err != nil {
			writeError(w, r, h.log, err)
			return
		}
		ctx := r.Context()
		if key := r.Header.Get("Idempotency-Key"); key != "" {
			ctx = graph.WithIdempotencyKey(ctx, key) // a forward is a send
		}
		res, err := call(ctx, r.PathValue("sessionId"), r.PathValue("messageId"), in)
		if err != nil {
			writeError(w, r, h.log, err)
			return
		}
		ok(w, http.StatusOK, toSendJSON(res))
	}
}

func (h *Handler) sendReaction(ctx context.Context, sessionID, messageID string, in reactionBody) (*model.SendResult, error) {
	if in.Emoji == nil {
		return nil, fault.InvalidField("emoji", "emoji is required: one emoji, or \"\" to take the reaction back")
	}
	return h.m.SendReaction(ctx, sessionID, messageID, *in.Emoji)
}

func (h *Handler) editMessage(ctx context.Context, sessionID, messageID string, in editBody) (*model.SendResult, error) {
	return h.m.EditMessage(ctx, sessionID, messageID, in.Text)
}

func (h *Handler) forwardMessage(ctx context.Context, sessionID, messageID string, in forwardBody) (*model.SendResult, error) {
	return h.m.ForwardMessage(ctx, sessionID, messageID, in.Number, nil)
}

// pollJSON is a poll's tally (GET …/message/{messageId}/poll), shaped as
// GraphQL's Poll.
type pollJSON struct {
	MessageID       string           `json:"messageId"`
	Question        string           `json:"question"`
	SelectableCount int              `json:"selectableCount"`
	Options         []pollOptionJSON `json:"options"`
}

type pollOptionJSON struct {
	Name   string         `json:"name"`
	Votes  int            `json:"votes"`
	Voters []identityJSON `json:"voters"`
}

func (h *Handler) getPoll(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("messageId")
	p, err := h.q.Poll(r.Context(), r.PathValue("sessionId"), id)
	if err == nil && p == nil {
		err = fault.New(fault.NotFound, "poll %s not found in session %s", id, r.PathValue("sessionId"))
	}
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	out := pollJSON{MessageID: p.MessageID, Question: p.Question, SelectableCount: p.SelectableCount, Options: make([]pollOptionJSON, len(p.Options))}
	for i, o := range p.Options {
		po := pollOptionJSON{Name: o.Name, Votes: o.Votes, Voters: make([]identityJSON, len(o.Voters))}
		for j, v := range o.Voters {
			po.Voters[j] = identityJSON{Input: v.Input, JID: v.Jid, Phone: v.Phone, LID: v.Lid}
		}
		out.Options[i] = po
	}
	ok(w, http.StatusOK, out)
}

type rejectCallBody struct {
	From string `json:"from"`
}

func (h *Handler) rejectCall(ctx context.Context, r *http.Request, in rejectCallBody) (bool, error) {
	return h.m.RejectCall(ctx, r.PathValue("sessionId"), r.PathValue("callId"), in.From)
}

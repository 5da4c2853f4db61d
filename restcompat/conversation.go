package restcompat

import (
	"context"

	"github.com/swaggest/jsonschema-go"

	"net/http"

	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/fault"
)

// The bodies of the conversation routes (surface.md, section 1): named as
// the GraphQL arguments.
type (
	markReadRequest struct {
		MessageIDs []messageID `json:"messageIds" description:"The messages to mark read; absent or empty: every stored received message of the chat not yet read (at most 1000)." maxItems:"1000"`
	}
	presenceRequest struct {
		State string     `json:"state" required:"true" description:"AVAILABLE and UNAVAILABLE are the account's own presence (no chat); COMPOSING (typing), RECORDING (a voice note) and PAUSED are shown in chat." enum:"AVAILABLE,UNAVAILABLE,COMPOSING,RECORDING,PAUSED"`
		Chat  *recipient `json:"chat" nullable:"false" description:"The chat COMPOSING, RECORDING or PAUSED is shown in; required with those, refused with AVAILABLE and UNAVAILABLE."`
	}
	subscribePresenceRequest struct {
		Chat recipient `json:"chat" required:"true" description:"The user whose availability to follow (not a group)."`
	}
)

// done serves a route whose body is an In (optional: an absent body is
// the zero In) and whose mutation answers only whether it was done: the
// success's data is {}.
func done[In any](optional bool, call func(h *Handler, ctx context.Context, r *http.Request, in In) (bool, error)) handling {
	return withBody(optional, func(h *Handler, w http.ResponseWriter, r *http.Request, in In) {
		if _, err := call(h, r.Context(), r, in); err != nil {
			writeError(w, r, h.log, err)
			return
		}
		ok(w, http.StatusOK, empty{})
	})
}

func (h *Handler) markRead(ctx context.Context, r *http.Request, in markReadRequest) (bool, error) {
	return h.m.MarkRead(ctx, r.PathValue("sessionId"), r.PathValue("chat"), toStrings(in.MessageIDs))
}

func (h *Handler) sendPresence(ctx context.Context, r *http.Request, in presenceRequest) (bool, error) {
	return h.m.SendPresence(ctx, r.PathValue("sessionId"), model.PresenceState(in.State), (*string)(in.Chat))
}

func (h *Handler) subscribePresence(ctx context.Context, r *http.Request, in subscribePresenceRequest) (bool, error) {
	return h.m.SubscribePresence(ctx, r.PathValue("sessionId"), string(in.Chat))
}

// messageID is the id of a message of the session.
type messageID string

func (messageID) PrepareJSONSchema(s *jsonschema.Schema) error {
	s.WithMinLength(1).WithMaxLength(128).WithDescription("A message id of this session, at most 128 bytes.")
	return nil
}

type (
	reactionRequest struct {
		Emoji *string `json:"emoji" required:"true" nullable:"false" description:"One emoji; \"\" takes the account's reaction back." maxLength:"64"`
	}
	editMessageRequest struct {
		Text string `json:"text" required:"true" description:"The new text of a text message (at most 65536 characters), or the new caption of an image, video or document (at most 1024)." minLength:"1" maxLength:"65536"`
	}
	forwardRequest struct {
		Number recipient `json:"number" required:"true"`
	}
)

// messageAction serves a route whose body is an In and whose mutation, on
// the message of the path, answers a send's result.
func messageAction[In any](call func(h *Handler, ctx context.Context, sessionID, messageID string, in In) (*model.SendResult, error)) handling {
	return withBody(false, func(h *Handler, w http.ResponseWriter, r *http.Request, in In) {
		res, err := call(h, keyed(r), r.PathValue("sessionId"), r.PathValue("messageId"), in)
		if err != nil {
			writeError(w, r, h.log, err)
			return
		}
		ok(w, http.StatusOK, toSendJSON(res))
	})
}

func (h *Handler) sendReaction(ctx context.Context, sessionID, messageID string, in reactionRequest) (*model.SendResult, error) {
	if in.Emoji == nil {
		return nil, fault.InvalidField("emoji", "emoji is required: one emoji, or \"\" to take the reaction back")
	}
	return h.m.SendReaction(ctx, sessionID, messageID, *in.Emoji, nil)
}

func (h *Handler) editMessage(ctx context.Context, sessionID, messageID string, in editMessageRequest) (*model.SendResult, error) {
	return h.m.EditMessage(ctx, sessionID, messageID, in.Text, nil)
}

func (h *Handler) forwardMessage(ctx context.Context, sessionID, messageID string, in forwardRequest) (*model.SendResult, error) {
	return h.m.ForwardMessage(ctx, sessionID, messageID, string(in.Number), nil)
}

// pollJSON is a poll's tally (GET …/message/{messageId}/poll), shaped as
// GraphQL's Poll.
type pollJSON struct {
	MessageID       string           `json:"messageId" required:"true"`
	Question        string           `json:"question" required:"true"`
	SelectableCount int              `json:"selectableCount" required:"true" description:"How many options a voter may choose; 0: any number."`
	Options         []pollOptionJSON `json:"options" required:"true"`
	_               struct{}         `additionalProperties:"false"`
}

type pollOptionJSON struct {
	Name   string         `json:"name" required:"true"`
	Votes  int            `json:"votes" required:"true"`
	Voters []identityJSON `json:"voters" required:"true"`
	_      struct{}       `additionalProperties:"false"`
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

type rejectCallRequest struct {
	From recipient `json:"from" required:"true" description:"The caller: the call event's from (a user, not a group)."`
}

func (h *Handler) rejectCall(ctx context.Context, r *http.Request, in rejectCallRequest) (bool, error) {
	return h.m.RejectCall(ctx, r.PathValue("sessionId"), r.PathValue("callId"), string(in.From))
}

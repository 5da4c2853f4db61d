package restcompat

import (
	"context"
	"net/http"
)

// historyRoutes: older messages of a chat from the phone (surface.md,
// section 2).
func historyRoutes() []route {
	return []route{
		{
			method: "POST", path: "/session/{sessionId}/chat/{chat}/history", id: "requestHistory", tag: "conversation",
			summary:     "Ask the phone for older messages of a chat",
			description: "Asks the phone for up to count (1-100, default 50) messages of the chat older than the oldest one stored; with none stored, the chat's most recent ones. The answer comes later as messaging-history.set (syncType ON_DEMAND, chat the chat asked about), its messages stored like every other; it is empty when the phone holds nothing older. Needs a CONNECTED session.",
			params:      []param{pSession, pChat},
			handling:    done(true, (*Handler).requestHistory),
			bodyExample: `{"count":50}`,
			status:      200, answer: "The request was sent to the phone.",
			data:        empty{},
			dataExample: `{}`,
			failures:    []int{409, 422, 502, 504},
		},
	}
}

// historyRequest is the body of requestHistory, named as the GraphQL
// arguments.
type historyRequest struct {
	Count *int `json:"count" nullable:"false" minimum:"1" maximum:"100" description:"How many older messages to ask for; absent: 50."`
}

func (h *Handler) requestHistory(ctx context.Context, r *http.Request, in historyRequest) (bool, error) {
	return h.m.RequestHistory(ctx, r.PathValue("sessionId"), r.PathValue("chat"), in.Count)
}

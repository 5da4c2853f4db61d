package restcompat

import (
	"net/http"

	"github.com/wagraph/wagraph/graph"
	"github.com/wagraph/wagraph/graph/model"
)

// limitsRoutes: WhatsApp's limits on reaching new contacts (Session.limits).
func limitsRoutes() []route {
	return []route{
		{
			method: "GET", path: "/session/{sessionId}/limits", id: "sessionLimits", tag: "sessions",
			summary:     "Get the account's limits on reaching new contacts",
			description: "What WhatsApp said of the account's limits: when the reach-out timelock it put on the account ends (until then WhatsApp refuses messages to contacts new to the account, and such a send fails with 422 naming the limit and its end), and the quota of new contacts. null: WhatsApp said nothing, or the limit ended. Stored: answers whatever the session's status.",
			params:      []param{pSession},
			handling:    noBody((*Handler).getLimits),
			status:      200, answer: "The limits.",
			data:        limitsJSON{},
			dataExample: `{"reachoutTimelockUntil":"2026-01-03T03:04:09.000Z","newContactQuota":null}`,
		},
	}
}

// limitsJSON is Session.limits.
type limitsJSON struct {
	ReachoutTimelockUntil *timestamp `json:"reachoutTimelockUntil" required:"true" description:"When the reach-out timelock WhatsApp put on the account ends; null when there is none."`
	NewContactQuota       *int       `json:"newContactQuota" required:"true" description:"How many more new contacts the account may message, when WhatsApp says so; WhatsApp's notifications as this gateway reads them carry no such number yet: null."`
	_                     struct{}   `description:"What WhatsApp said of the account's limits on reaching new contacts."`
}

func (h *Handler) getLimits(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("sessionId")
	s, err := h.q.Session(r.Context(), id)
	if err == nil && s == nil {
		err = graph.SessionNotFound(id)
	}
	var l *model.SessionLimits
	if err == nil {
		l, err = h.s.Limits(r.Context(), s)
	}
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	out := limitsJSON{NewContactQuota: l.NewContactQuota}
	if l.ReachoutTimelockUntil != nil {
		t := timestamp(model.FormatTime(*l.ReachoutTimelockUntil))
		out.ReachoutTimelockUntil = &t
	}
	ok(w, http.StatusOK, out)
}

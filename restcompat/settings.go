package restcompat

import (
	"net/http"

	"github.com/wagraph/wagraph/graph"
	"github.com/wagraph/wagraph/graph/model"
)

// settingsJSON is a session's settings as GET …/settings shows them.
type settingsJSON struct {
	SendRate          *string  `json:"sendRate" required:"true" description:"At most this many sends, as given: \"<n>/s\", \"<n>/m\" or \"<n>/h\"; sends beyond it are queued durably and sent in order (their result has scheduledAt), never refused. null: none."`
	SendJitter        string   `json:"sendJitter" required:"true" description:"A random extra wait, up to this, before each queued send (0s to 1m0s)."`
	SimulateTyping    bool     `json:"simulateTyping" required:"true" description:"Before each text, COMPOSING for a time growing with its length (at most 5 s), then PAUSED."`
	AutoMarkRead      bool     `json:"autoMarkRead" required:"true" description:"Inbound messages are marked read when stored."`
	AutoRejectCalls   bool     `json:"autoRejectCalls" required:"true" description:"Incoming calls are rejected."`
	CallRejectMessage *string  `json:"callRejectMessage" required:"true" description:"Sent to a caller whose call autoRejectCalls rejected; null: nothing is sent."`
	Proxy             *string  `json:"proxy" required:"true" description:"The proxy of the session's WhatsApp connection and media, its password shown as ***; null: none."`
	_                 struct{} `description:"A session's settings."`
}

// settingsRequest changes a session's settings: a field left out keeps
// its value.
type settingsRequest struct {
	SendRate          *string `json:"sendRate" description:"\"<n>/s\", \"<n>/m\" or \"<n>/h\" (at most 1000/s); \"\" removes the rate." nullable:"false"`
	SendJitter        *string `json:"sendJitter" description:"A duration such as \"500ms\" or \"2s\", from 0s to 1m." nullable:"false"`
	SimulateTyping    *bool   `json:"simulateTyping" nullable:"false"`
	AutoMarkRead      *bool   `json:"autoMarkRead" nullable:"false"`
	AutoRejectCalls   *bool   `json:"autoRejectCalls" nullable:"false"`
	CallRejectMessage *string `json:"callRejectMessage" description:"At most 4096 characters; \"\" sends nothing." maxLength:"4096" nullable:"false"`
	Proxy             *string `json:"proxy" description:"socks5://[user:pass@]host:port or http(s)://[user:pass@]host:port; \"\" removes it." nullable:"false"`
}

func (h *Handler) getSettings(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("sessionId")
	s, err := h.q.Session(r.Context(), id)
	if err == nil && s == nil {
		err = graph.SessionNotFound(id)
	}
	h.writeSettings(w, r, s, err)
}

func (h *Handler) putSettings(w http.ResponseWriter, r *http.Request, in settingsRequest) {
	s, err := h.m.UpdateSessionSettings(r.Context(), r.PathValue("sessionId"), model.SessionSettingsInput{
		SendRate: in.SendRate, SendJitter: in.SendJitter, SimulateTyping: in.SimulateTyping, AutoMarkRead: in.AutoMarkRead,
		AutoRejectCalls: in.AutoRejectCalls, CallRejectMessage: in.CallRejectMessage, Proxy: in.Proxy,
	})
	h.writeSettings(w, r, s, err)
}

// writeSettings answers the settings of the session a resolver returned,
// or its error.
func (h *Handler) writeSettings(w http.ResponseWriter, r *http.Request, s *model.Session, err error) {
	var set *model.SessionSettings
	if err == nil {
		set, err = h.s.Settings(r.Context(), s)
	}
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusOK, settingsJSON{
		SendRate: set.SendRate, SendJitter: set.SendJitter, SimulateTyping: set.SimulateTyping, AutoMarkRead: set.AutoMarkRead,
		AutoRejectCalls: set.AutoRejectCalls, CallRejectMessage: set.CallRejectMessage, Proxy: set.Proxy,
	})
}

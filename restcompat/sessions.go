package restcompat

import (
	"net/http"

	"github.com/wagraph/wagraph/graph"
	"github.com/wagraph/wagraph/graph/model"
)

// sessionJSON is a session as GET /session/{id} shows it.
type sessionJSON struct {
	ID        string  `json:"id"`
	Name      string  `json:"name"`
	Status    string  `json:"status"`
	JID       *string `json:"jid"`
	PushName  *string `json:"pushName"`
	CreatedAt string  `json:"createdAt"`
}

func toSessionJSON(s *model.Session) sessionJSON {
	return sessionJSON{
		ID: s.ID, Name: s.Name, Status: string(s.Status), JID: s.Jid, PushName: s.PushName,
		CreatedAt: model.FormatTime(s.CreatedAt),
	}
}

func (h *Handler) createSession(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Name *string `json:"name"`
	}
	if err := decodeBody(r, &req, true); err != nil {
		writeError(w, r, h.log, err)
		return
	}
	res, err := h.m.CreateSession(r.Context(), req.Name)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusCreated, struct {
		ID     string `json:"id"`
		Name   string `json:"name"`
		Status string `json:"status"`
		Token  string `json:"token"`
	}{res.Session.ID, res.Session.Name, string(res.Session.Status), res.Token})
}

func (h *Handler) listSessions(w http.ResponseWriter, r *http.Request) {
	ss, err := h.q.Sessions(r.Context())
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	out := make([]sessionJSON, len(ss))
	for i, s := range ss {
		out[i] = toSessionJSON(s)
	}
	ok(w, http.StatusOK, out)
}

func (h *Handler) getSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("sessionId")
	s, err := h.q.Session(r.Context(), id)
	if err == nil && s == nil {
		err = graph.SessionNotFound(id)
	}
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusOK, toSessionJSON(s))
}

func (h *Handler) deleteSession(w http.ResponseWriter, r *http.Request) {
	if _, err := h.m.DeleteSession(r.Context(), r.PathValue("sessionId")); err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusOK, empty{})
}

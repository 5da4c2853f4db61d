package restcompat

import (
	"net/http"

	"github.com/wagraph/wagraph/graph/model"
)

func (h *Handler) createGroup(w http.ResponseWriter, r *http.Request) {
	var in model.CreateGroupInput
	if err := decodeBody(r, &in, false); err != nil {
		writeError(w, r, h.log, err)
		return
	}
	g, err := h.m.CreateGroup(r.Context(), r.PathValue("sessionId"), in)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusOK, struct {
		ID          string `json:"id"`
		Name        string `json:"name"`
		Description string `json:"description"`
	}{g.ID, g.Name, g.Description})
}

func (h *Handler) updateGroup(w http.ResponseWriter, r *http.Request) {
	var in model.UpdateGroupInput
	if err := decodeBody(r, &in, false); err != nil {
		writeError(w, r, h.log, err)
		return
	}
	if _, err := h.m.UpdateGroup(r.Context(), r.PathValue("sessionId"), r.PathValue("jid"), in); err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusOK, empty{})
}

func (h *Handler) sendGroupInvite(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Number  string `json:"number"`
		Message string `json:"message"`
	}
	if err := decodeBody(r, &in, false); err != nil {
		writeError(w, r, h.log, err)
		return
	}
	res, err := h.m.SendGroupInvite(r.Context(), r.PathValue("sessionId"), r.PathValue("jid"), in.Number, in.Message)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusOK, toSendJSON(res))
}

// participantJSON is one participant's outcome of a demote.
type participantJSON struct {
	Status  string `json:"status"`
	Code    *int   `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

// demoteGroup answers 200 even when some participants failed, keyed by each
// number exactly as it was sent (the seed's shape, without an envelope).
func (h *Handler) demoteGroup(w http.ResponseWriter, r *http.Request) {
	var numbers []string
	if err := decodeBody(r, &numbers, false); err != nil {
		writeError(w, r, h.log, err)
		return
	}
	res, err := h.m.DemoteGroupParticipants(r.Context(), r.PathValue("sessionId"), r.PathValue("jid"), numbers)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	out := make(map[string]participantJSON, len(res))
	for _, p := range res {
		pj := participantJSON{Status: "success"}
		if !p.Ok {
			pj = participantJSON{Status: "failed", Code: p.Code}
			if p.Message != nil {
				pj.Message = *p.Message
			}
		}
		out[p.Participant] = pj
	}
	writeJSON(w, http.StatusOK, struct {
		Status map[string]participantJSON `json:"status"`
	}{out})
}

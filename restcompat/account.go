package restcompat

import (
	"context"
	"net/http"

	"github.com/wagraph/wagraph/graph/model"
)

func (h *Handler) updateDisplayPicture(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Identifier string `json:"identifier"`
		Source     string `json:"source"`
	}
	if err := decodeBody(r, &in, false); err != nil {
		writeError(w, r, h.log, err)
		return
	}
	if _, err := h.m.UpdateDisplayPicture(r.Context(), r.PathValue("sessionId"), in.Identifier, in.Source); err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusOK, empty{})
}

func (h *Handler) updateProfileName(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Name string `json:"name"`
	}
	if err := decodeBody(r, &in, false); err != nil {
		writeError(w, r, h.log, err)
		return
	}
	if _, err := h.m.UpdateProfileName(r.Context(), r.PathValue("sessionId"), in.Name); err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusOK, empty{})
}

func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("sessionId")
	if _, err := h.m.Logout(r.Context(), id); err != nil {
		writeError(w, r, h.log, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Status  string `json:"status"`
		Message string `json:"message"`
	}{"success", "Session " + id + " logged out"})
}

// privacyJSON is the seed's bare privacy object (callAdd is an addition).
type privacyJSON struct {
	LastSeen       string `json:"lastSeen"`
	Online         string `json:"online"`
	ProfilePicture string `json:"profilePicture"`
	Status         string `json:"status"`
	ReadReceipts   string `json:"readReceipts"`
	GroupsAdd      string `json:"groupsAdd"`
	CallAdd        string `json:"callAdd"`
}

func (h *Handler) getPrivacy(w http.ResponseWriter, r *http.Request) {
	p, err := h.q.Privacy(r.Context(), r.PathValue("sessionId"))
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	writeJSON(w, http.StatusOK, privacyJSON{
		LastSeen: p.LastSeen, Online: p.Online, ProfilePicture: p.ProfilePicture, Status: p.Status,
		ReadReceipts: p.ReadReceipts, GroupsAdd: p.GroupsAdd, CallAdd: p.CallAdd,
	})
}

// The bodies of the privacy PUTs: one field each, decoded strictly like
// every other body.
type (
	privacyBody struct {
		Privacy string `json:"privacy"`
	}
	modeBody struct {
		Mode string `json:"mode"`
	}
)

func (b privacyBody) value() string { return b.Privacy }
func (b modeBody) value() string    { return b.Mode }

// privacySetter serves one of the privacy PUTs: its body's one field is
// the value the mutation takes.
func privacySetter[B interface{ value() string }](h *Handler, set func(ctx context.Context, sessionID, value string) (*model.PrivacySettings, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var in B
		if err := decodeBody(r, &in, false); err != nil {
			writeError(w, r, h.log, err)
			return
		}
		if _, err := set(r.Context(), r.PathValue("sessionId"), in.value()); err != nil {
			writeError(w, r, h.log, err)
			return
		}
		ok(w, http.StatusOK, empty{})
	}
}

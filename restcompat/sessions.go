package restcompat

import (
	"context"
	"encoding/base64"
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/wagraph/wagraph/graph"
	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/fault"
)

// sessionJSON is a session as GET /session/{id} shows it.
type sessionJSON struct {
	ID           string  `json:"id"`
	Name         string  `json:"name"`
	Status       string  `json:"status"`
	StatusReason *string `json:"statusReason"`
	JID          *string `json:"jid"`
	PushName     *string `json:"pushName"`
	CreatedAt    string  `json:"createdAt"`
	// Owner is the --node-id of the process running the session, for
	// admin tokens only (graphql.md's Session.owner): absent for others.
	Owner *string `json:"owner,omitempty"`
}

// sessionJSON is the record of s, with its owner for an admin.
func (h *Handler) sessionJSON(ctx context.Context, s *model.Session) (sessionJSON, error) {
	owner, err := h.s.Owner(ctx, s)
	return sessionJSON{
		ID: s.ID, Name: s.Name, Status: string(s.Status), StatusReason: s.StatusReason, JID: s.Jid, PushName: s.PushName,
		CreatedAt: model.FormatTime(s.CreatedAt), Owner: owner,
	}, err
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
		if out[i], err = h.sessionJSON(r.Context(), s); err != nil {
			writeError(w, r, h.log, err)
			return
		}
	}
	ok(w, http.StatusOK, out)
}

func (h *Handler) getSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("sessionId")
	s, err := h.q.Session(r.Context(), id)
	if err == nil && s == nil {
		err = graph.SessionNotFound(id)
	}
	h.writeSession(w, r, s, err)
}

func (h *Handler) deleteSession(w http.ResponseWriter, r *http.Request) {
	if _, err := h.m.DeleteSession(r.Context(), r.PathValue("sessionId")); err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusOK, empty{})
}

func (h *Handler) connectSession(w http.ResponseWriter, r *http.Request) {
	s, err := h.m.ConnectSession(r.Context(), r.PathValue("sessionId"))
	h.writeSession(w, r, s, err)
}

// writeSession answers the session a resolver returned, or its error.
func (h *Handler) writeSession(w http.ResponseWriter, r *http.Request, s *model.Session, err error) {
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	out, err := h.sessionJSON(r.Context(), s)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusOK, out)
}

// getQR answers the current QR code as JSON, or as the PNG itself when the
// client accepts image/png (and not JSON first).
func (h *Handler) getQR(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("sessionId")
	s, err := h.q.Session(r.Context(), id)
	if err == nil && s == nil {
		err = graph.SessionNotFound(id)
	}
	if err == nil && (s.Status != model.SessionStatusPairing || s.QRCode == nil || s.QRImage == nil) {
		err = fault.New(fault.Conflict, "session %s is not pairing (status: %s): connect it first; a linked session has no QR code", id, s.Status)
	}
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	if wantsPNG(r) {
		png, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(*s.QRImage, "data:image/png;base64,"))
		if err != nil {
			writeError(w, r, h.log, fmt.Errorf("QR image of session %s: %w", id, err))
			return
		}
		w.Header().Set("Content-Type", "image/png")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(png)
		return
	}
	image := ""
	if s.QRImage != nil {
		image = *s.QRImage
	}
	ok(w, http.StatusOK, struct {
		Code  string `json:"code"`
		Image string `json:"image"`
	}{*s.QRCode, image})
}

func (h *Handler) pairPhone(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Number string `json:"number"`
	}
	if err := decodeBody(r, &in, false); err != nil {
		writeError(w, r, h.log, err)
		return
	}
	code, err := h.m.PairPhone(r.Context(), r.PathValue("sessionId"), in.Number)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusOK, struct {
		Code string `json:"code"`
	}{code})
}

// wantsPNG reports whether the Accept header prefers image/png to JSON.
func wantsPNG(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case "image/png", "image/*":
			return true
		case "application/json":
			return false
		}
	}
	return false
}

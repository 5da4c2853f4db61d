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
	ID           string        `json:"id" required:"true" description:"The session's id."`
	Name         string        `json:"name" required:"true" description:"The session's name, unique among its user's sessions."`
	Status       sessionStatus `json:"status" required:"true"`
	StatusReason *string       `json:"statusReason" required:"true" description:"Why the session is in its status when nobody asked for it (\"client outdated: WhatsApp refused version 2.3000.N\"); null otherwise."`
	JID          *string       `json:"jid" required:"true" description:"The linked account's JID; null until linked."`
	PushName     *string       `json:"pushName" required:"true" description:"The linked account's display name; null until known."`
	CreatedAt    timestamp     `json:"createdAt" required:"true"`
	// Owner is the --node-id of the process running the session, for
	// admin tokens only (graphql.md's Session.owner): absent for others.
	Owner *string  `json:"owner,omitempty" description:"For admin tokens only (absent for others): the --node-id of the process running the session, the holder of its lease in a cluster of processes on one PostgreSQL database (absent while none holds it)."`
	_     struct{} `description:"A session: one linked WhatsApp account."`
}

// createdSessionJSON is a session just created, with its token.
type createdSessionJSON struct {
	ID     string        `json:"id" required:"true" description:"The session's id."`
	Name   string        `json:"name" required:"true" description:"The given name, or the generated one when none was given."`
	Status sessionStatus `json:"status" required:"true"`
	Token  string        `json:"token" required:"true" description:"The new session token (wgs_…); shown only here." pattern:"^wgs_"`
}

// qrCodeJSON is the QR code of a pairing session.
type qrCodeJSON struct {
	Code  string `json:"code" required:"true" description:"The text encoded in the QR code."`
	Image string `json:"image" required:"true" description:"The QR code as a PNG data URI." pattern:"^data:image/png;base64,"`
}

// schemaName keeps the initialism the Go name cannot.
func (qrCodeJSON) schemaName() string { return "QRCode" }

// pairingCodeJSON is the code a phone links with.
type pairingCodeJSON struct {
	Code string `json:"code" required:"true" description:"Enter it on the phone under Linked devices." examples:"[\"ABCD-EFGH\"]"`
}

type createSessionRequest struct {
	Name *string `json:"name" description:"Optional. Absent, empty or blank: the server names the session session-N (N the user's session count including this one, raised past names already taken). Names are stored trimmed and as given, and are unique among one user's sessions, compared as read: ignoring case, width and compatibility forms (NFKC), invisible characters and runs of spaces (409 naming name on a duplicate; other users may use the same name, and a deleted session's name is free again); at most 100 characters, no control characters, no bidirectional formatting characters (U+202A to U+202E, U+2066 to U+2069), no word mixing scripts (a Cyrillic letter in a Latin word), a visible character at least." maxLength:"100" pattern:"^[^\\u0000-\\u001F\\u007F]*$" nullable:"false"`
}

type pairPhoneRequest struct {
	Number phoneNumber `json:"number" required:"true" description:"The phone number of the account to link."`
}

// sessionJSON is the record of s, with its owner for an admin.
func (h *Handler) sessionJSON(ctx context.Context, s *model.Session) (sessionJSON, error) {
	owner, err := h.s.Owner(ctx, s)
	return sessionJSON{
		ID: s.ID, Name: s.Name, Status: sessionStatus(s.Status), StatusReason: s.StatusReason, JID: s.Jid, PushName: s.PushName,
		CreatedAt: timestamp(model.FormatTime(s.CreatedAt)), Owner: owner,
	}, err
}

func (h *Handler) createSession(w http.ResponseWriter, r *http.Request, req createSessionRequest) {
	res, err := h.m.CreateSession(r.Context(), req.Name)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusCreated, createdSessionJSON{res.Session.ID, res.Session.Name, sessionStatus(res.Session.Status), res.Token})
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
	ok(w, http.StatusOK, qrCodeJSON{*s.QRCode, image})
}

func (h *Handler) pairPhone(w http.ResponseWriter, r *http.Request, in pairPhoneRequest) {
	code, err := h.m.PairPhone(r.Context(), r.PathValue("sessionId"), string(in.Number))
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusOK, pairingCodeJSON{code})
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

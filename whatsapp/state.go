package whatsapp

import (
	"context"
	"encoding/json"
	"time"

	"go.mau.fi/whatsmeow/types"

	"github.com/wagraph/wagraph/internal/events/payload"
)

// This file is the one home of what a session's state reads as outside the
// manager that runs it: a state followed through the session's events
// (Applied), the state of a session another process runs (HeldState) and
// of one nobody runs (UnheldState). The manager's own changes (session.go)
// and these are kept in step by state_test.go.

// Applied is st after the session's event of kind with data (its JSON), as
// the manager changed its own state when it published it: connection.update
// carries the status, QR code, pairing code, passkey step and reason; creds.update what
// the account became. connectedAt is when the session became CONNECTED
// (the manager saves it in the record before it publishes the change); it
// is asked only on that change. Other kinds leave st as it is.
func (st SessionState) Applied(kind string, data []byte, connectedAt func() time.Time) SessionState {
	switch kind {
	case KindConnectionUpdate:
		var c payload.Connection
		if json.Unmarshal(data, &c) != nil || c.Status == "" {
			return st // not a state (nothing the manager publishes)
		}
		if c.Limits != nil {
			return st // WhatsApp's notice of a limit (limits.go): its reason is the limit's, the state unchanged
		}
		was := st.Status
		st.Status, st.Reason = Status(c.Status), string(c.Reason)
		if qr := string(c.QR); qr != st.QRCode {
			st.QRCode, st.QRImage = qr, qrDataURL(qr)
		}
		st.PairingCode = string(c.PairingCode)
		st.Passkey = PasskeyStep{}
		if p := c.Passkey; p != nil {
			st.Passkey = PasskeyStep{Status: PasskeyStatus(p.Status), PublicKey: string(p.PublicKey), Code: string(p.Code), ExpiresAt: p.ExpiresAt.Time}
		}
		if st.Status != StatusPairing {
			st.PairingCode, st.Passkey = "", PasskeyStep{}
		}
		switch st.Status {
		case StatusLoggedOut: // the device is gone (sessionState.loggedOut)
			st.JID, st.LID, st.Phone, st.PushName = "", "", "", ""
		case StatusConnected:
			if was != StatusConnected && connectedAt != nil {
				st.ConnectedAt = connectedAt().UTC()
			}
		}
	case KindCredsUpdate:
		var c payload.Creds
		if json.Unmarshal(data, &c) != nil {
			return st
		}
		if c.JID != "" {
			st.JID, st.Phone = string(c.JID), jidUser(string(c.JID))
		}
		if c.Phone != "" {
			st.Phone = string(c.Phone)
		}
		if c.LID != "" {
			st.LID = string(c.LID)
		}
		if c.PushName != "" {
			st.PushName = string(c.PushName)
		}
	}
	return st
}

// jidUser is the user part of a JID, as public shows a device's JID
// (its phone number: "4915550001:3@s.whatsapp.net" → "4915550001").
func jidUser(jid string) string {
	j, err := types.ParseJID(jid)
	if err != nil {
		return ""
	}
	return j.User
}

// StoredSession is a session's id and stored record, as a list of
// sessions reads them in one query.
type StoredSession struct {
	ID     string
	Record StatusRecord
}

// HeldState is the state of a session another process of a cluster runs,
// as its record shows it: the holder saves every change of status, reason,
// device, push name and connection time (fenced to its lease). What it
// keeps only in memory (the QR and pairing codes, the LID) is read from the
// holder itself (Status) or followed through the events.
func HeldState(rec StatusRecord) SessionState {
	st := SessionState{Status: rec.Status, Reason: rec.Reason, PushName: rec.PushName, ConnectedAt: rec.ConnectedAt}
	if st.Status == "" {
		st.Status = StatusDisconnected
	}
	if rec.JID != "" {
		st.JID, st.Phone = rec.JID, jidUser(rec.JID)
	}
	return st
}

// UnheldReason is the reason a session nobody runs in a cluster shows
// while its record says it was running.
const UnheldReason = "no process of the cluster runs it at the moment: one takes it over shortly"

// UnheldState is the state of a session no process of a cluster runs: its
// record as the manager loads it (StoredState), a status a process left
// behind reading DISCONNECTED with UnheldReason.
func UnheldState(rec StatusRecord) SessionState {
	st := StoredState(rec)
	if rec.Status.Running() {
		st.Reason = UnheldReason
	}
	return st
}

// Running reports whether a session saved with status was running then
// (CONNECTING, PAIRING, CONNECTED): a process runs it, or one that did
// not close cleanly left the status behind.
func (s Status) Running() bool {
	return s != StatusDisconnected && s != StatusLoggedOut && s != ""
}

// States returns the state of each of sessions, in their order, without
// reading the database: a session this manager has loaded shows its live
// state, any other what its record (read with the list) says, as loading
// it would (StoredState). It never fails: the error is a cluster's router's
// (its States), whose signature this shares.
func (m *Manager) States(_ context.Context, sessions []StoredSession) ([]SessionState, error) {
	out := make([]SessionState, len(sessions))
	m.mu.Lock()
	loaded := make([]*session, len(sessions))
	for i, ss := range sessions {
		loaded[i] = m.sessions[ss.ID]
	}
	m.mu.Unlock()
	for i, ss := range sessions {
		if s := loaded[i]; s != nil {
			s.mu.Lock()
			out[i] = s.st.public()
			s.mu.Unlock()
			continue
		}
		out[i] = StoredState(ss.Record)
	}
	return out, nil
}

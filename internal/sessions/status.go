// Package sessions is the home of the session record outside the WhatsApp
// adapter: the Service (who reaches a session, the sessions a caller
// reaches, their creation and deletion; the API's only way to the
// records) and the status store the session manager persists into.
package sessions

import (
	"context"
	"fmt"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/ent/predicate"
	entsession "github.com/wagraph/wagraph/ent/session"
	"github.com/wagraph/wagraph/internal/textrule"
	"github.com/wagraph/wagraph/whatsapp"
)

// StatusStore keeps the manager's status records in the session table
// (whatsapp.StatusStore).
type StatusStore struct{ db *ent.Client }

// NewStatusStore returns the status store over db.
func NewStatusStore(db *ent.Client) StatusStore { return StatusStore{db: db} }

// LoadStatus reads a session's status record; found is false when the
// session does not exist.
func (s StatusStore) LoadStatus(ctx context.Context, id string) (whatsapp.StatusRecord, bool, error) {
	row, err := s.db.Session.Get(ctx, id)
	if ent.IsNotFound(err) {
		return whatsapp.StatusRecord{}, false, nil
	}
	if err != nil {
		return whatsapp.StatusRecord{}, false, fmt.Errorf("load session %s: %w", id, err)
	}
	return statusRecord(row), true, nil
}

// statusRecord is the status record a session's row holds.
func statusRecord(row *ent.Session) whatsapp.StatusRecord {
	rec := whatsapp.StatusRecord{Status: whatsapp.Status(row.Status)}
	if row.StatusReason != nil {
		rec.Reason = *row.StatusReason
	}
	if row.Jid != nil {
		rec.JID = *row.Jid
	}
	if row.PushName != nil {
		rec.PushName = *row.PushName
	}
	if row.ConnectedAt != nil {
		rec.ConnectedAt = *row.ConnectedAt
	}
	return rec
}

// SaveStatus writes a session's status record.
func (s StatusStore) SaveStatus(ctx context.Context, id string, rec whatsapp.StatusRecord) error {
	saved, err := s.SaveStatusIf(ctx, id, rec)
	if err == nil && !saved {
		err = fmt.Errorf("save status of session %s: the session does not exist", id)
	}
	return err
}

// SaveStatusIf writes a session's status record when the session's row
// also meets cond, in one statement: a cluster's fencing (the write lands
// only while the writer holds the session's lease). saved is false when
// nothing was written.
func (s StatusStore) SaveStatusIf(ctx context.Context, id string, rec whatsapp.StatusRecord, cond ...predicate.Session) (saved bool, err error) {
	// The push name is the account's profile name from WhatsApp, and a
	// reason may quote WhatsApp: with a NUL, PostgreSQL would refuse this
	// and every later save (textrule).
	rec.PushName, rec.JID, rec.Reason = textrule.Clean(rec.PushName), textrule.Clean(rec.JID), textrule.Clean(rec.Reason)
	u := s.db.Session.Update().Where(append([]predicate.Session{entsession.ID(id)}, cond...)...).
		SetStatus(entsession.Status(rec.Status))
	if rec.Reason != "" {
		u.SetStatusReason(rec.Reason)
	} else {
		u.ClearStatusReason()
	}
	if rec.JID != "" {
		u.SetJid(rec.JID)
	} else {
		u.ClearJid()
	}
	if rec.PushName != "" {
		u.SetPushName(rec.PushName)
	} else {
		u.ClearPushName()
	}
	if !rec.ConnectedAt.IsZero() {
		u.SetConnectedAt(rec.ConnectedAt.UTC())
	}
	n, err := u.Save(ctx)
	if err != nil {
		return false, fmt.Errorf("save status of session %s: %w", id, err)
	}
	return n > 0, nil
}

// Linked lists the sessions with a linked device, to log in at start.
func (s StatusStore) Linked(ctx context.Context) ([]string, error) {
	ids, err := s.db.Session.Query().Where(entsession.JidNotNil()).IDs(ctx)
	if err != nil {
		return nil, fmt.Errorf("list linked sessions: %w", err)
	}
	return ids, nil
}

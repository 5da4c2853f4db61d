package events

import (
	"context"
	"errors"
	"fmt"

	"github.com/wagraph/wagraph/ent"
	entevent "github.com/wagraph/wagraph/ent/event"
)

// ErrNotFound is the error of Find for an id the session's log does not
// hold (never stored, pruned, or another session's).
var ErrNotFound = errors.New("event not found")

// Find returns the stored event id of a session.
func (l *Log) Find(ctx context.Context, sessionID, id string) (Envelope, error) {
	row, err := l.db.Event.Query().Where(entevent.ID(id), entevent.SessionID(sessionID)).Only(ctx)
	if ent.IsNotFound(err) {
		return Envelope{}, fmt.Errorf("event %s of session %s: %w", id, sessionID, ErrNotFound)
	}
	if err != nil {
		return Envelope{}, fmt.Errorf("read event %s of session %s: %w", id, sessionID, err)
	}
	return envelopeOf(row), nil
}

// Last returns the session's latest stored event; found is false when its
// log is empty.
func (l *Log) Last(ctx context.Context, sessionID string) (env Envelope, found bool, err error) {
	row, err := l.db.Event.Query().Where(entevent.SessionID(sessionID)).
		Order(ent.Desc(entevent.FieldSeq)).First(ctx)
	if ent.IsNotFound(err) {
		return Envelope{}, false, nil
	}
	if err != nil {
		return Envelope{}, false, fmt.Errorf("read the last event of session %s: %w", sessionID, err)
	}
	return envelopeOf(row), true, nil
}

// Before returns up to limit events of a session with seq below beforeSeq
// (0: from the newest), the newest first; kinds, when not empty, keeps only
// those kinds. limit is clamped to [1, MaxPage]. A reader shows the latest
// events with it, and pages back from the oldest it shows.
func (l *Log) Before(ctx context.Context, sessionID string, beforeSeq int64, kinds []Kind, limit int) ([]Envelope, error) {
	limit = min(max(limit, 1), MaxPage)
	ps := afterIn(sessionID, 0, kinds)
	if beforeSeq > 0 {
		ps = append(ps, entevent.SeqLT(beforeSeq))
	}
	rows, err := l.db.Event.Query().Where(ps...).Order(ent.Desc(entevent.FieldSeq)).Limit(limit).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("read events of session %s before %d: %w", sessionID, beforeSeq, err)
	}
	out := make([]Envelope, len(rows))
	for i, r := range rows {
		out[i] = envelopeOf(r)
	}
	return out, nil
}

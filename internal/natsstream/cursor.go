package natsstream

import (
	"context"
	"fmt"

	"entgo.io/ent/dialect/sql"

	"github.com/wagraph/wagraph/ent"
	entevent "github.com/wagraph/wagraph/ent/event"
	entsession "github.com/wagraph/wagraph/ent/session"
	"github.com/wagraph/wagraph/ent/streamcursor"
)

// cursor is a session behind the stream: the last seq acknowledged.
type cursor struct {
	sessionID string
	seq       int64
}

// behind reads the sessions held whose log goes past their cursor, and
// the events of all sessions held not yet acknowledged (the lag). Two
// queries whatever the number of sessions: each session's last seq is one
// step down the (session_id, seq) index.
func (p *Publisher) behind(ctx context.Context) ([]cursor, int64, error) {
	q := p.opts.DB.Session.Query()
	cq := p.opts.DB.StreamCursor.Query().Where(streamcursor.Stream(p.stream))
	if p.opts.Held != nil {
		held := p.opts.Held()
		if len(held) == 0 {
			return nil, 0, nil
		}
		q.Where(entsession.IDIn(held...))
		cq.Where(streamcursor.SessionIDIn(held...))
	}
	var lasts []struct {
		ID   string        `json:"id"`
		Last sql.NullInt64 `json:"last"`
	}
	err := q.Where(func(s *sql.Selector) {
		ev := sql.Table(entevent.Table)
		last := sql.Dialect(s.Dialect()).Select(sql.Max(ev.C(entevent.FieldSeq))).From(ev).
			Where(sql.ColumnsEQ(ev.C(entevent.FieldSessionID), s.C(entsession.FieldID)))
		s.AppendSelectExprAs(sql.ExprFunc(func(b *sql.Builder) {
			b.Nested(func(b *sql.Builder) { b.Join(last) })
		}), "last")
	}).Select(entsession.FieldID).Scan(ctx, &lasts)
	if err != nil {
		return nil, 0, fmt.Errorf("read the sessions' last events: %w", err)
	}
	rows, err := cq.All(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("read the stream's cursors: %w", err)
	}
	at := make(map[string]int64, len(rows))
	for _, r := range rows {
		at[r.SessionID] = r.Seq
	}
	var (
		out []cursor
		lag int64
	)
	for _, l := range lasts {
		if l.Last.Valid && l.Last.Int64 > at[l.ID] {
			out = append(out, cursor{l.ID, at[l.ID]})
			lag += l.Last.Int64 - at[l.ID]
		}
	}
	return out, lag, nil
}

// save moves the sessions' cursors forward, never back, in one
// transaction: a process that lost a session and finishes a page late
// leaves the new holder's cursor as it is.
func (p *Publisher) save(ctx context.Context, moved []cursor) error {
	now := p.opts.Now().UTC()
	return ent.WithTx(ctx, p.opts.DB, func(tx *ent.Tx) error {
		for _, c := range moved {
			n, err := tx.StreamCursor.Update().
				Where(streamcursor.SessionID(c.sessionID), streamcursor.Stream(p.stream), streamcursor.SeqLT(c.seq)).
				SetSeq(c.seq).SetUpdatedAt(now).Save(ctx)
			if err != nil {
				return fmt.Errorf("save the stream cursor of session %s: %w", c.sessionID, err)
			}
			if n > 0 {
				continue
			}
			// No row below seq: none yet, or one at or past it (kept). A
			// session deleted meanwhile has no row to make: its id is
			// checked first, so the insert never fails the transaction.
			exists, err := tx.Session.Query().Where(entsession.ID(c.sessionID)).Exist(ctx)
			if err != nil {
				return fmt.Errorf("save the stream cursor of session %s: %w", c.sessionID, err)
			}
			if !exists {
				continue
			}
			err = tx.StreamCursor.Create().SetSessionID(c.sessionID).SetStream(p.stream).SetSeq(c.seq).SetUpdatedAt(now).
				OnConflictColumns(streamcursor.FieldSessionID, streamcursor.FieldStream).DoNothing().Exec(ctx)
			if err != nil {
				return fmt.Errorf("save the stream cursor of session %s: %w", c.sessionID, err)
			}
		}
		return nil
	})
}

package events

import (
	"context"
	stdsql "database/sql"
	"fmt"
	"strings"

	"entgo.io/ent/dialect"

	"github.com/wagraph/wagraph/ent"
	entevent "github.com/wagraph/wagraph/ent/event"
)

// lastSeqs returns the highest seq stored for each session (absent: none).
// On SQLite one query per session (in the process: no round trip), each
// the last entry of the (session_id, seq) index: SQLite answers a MAX
// grouped by session by walking every event of the session, which grows
// with the log and cost a sender milliseconds per batch once a session
// had tens of thousands of events (issue 11, goal 2). On PostgreSQL one
// statement for all of them (lastSeqsAtOnce).
func (l *Log) lastSeqs(ctx context.Context, tx *ent.Tx, sessions []string) (map[string]int64, error) {
	if l.dialect == dialect.Postgres && len(sessions) > 1 {
		return lastSeqsAtOnce(ctx, tx, sessions)
	}
	next := make(map[string]int64, len(sessions))
	for _, id := range sessions {
		seqs, err := tx.Event.Query().Where(entevent.SessionID(id)).
			Order(ent.Desc(entevent.FieldSeq)).Limit(1).Select(entevent.FieldSeq).Ints(ctx)
		if err != nil {
			return nil, fmt.Errorf("read last seq of session %s: %w", id, err)
		}
		if len(seqs) > 0 {
			next[id] = int64(seqs[0])
		}
	}
	return next, nil
}

// lastSeqsAtOnce is lastSeqs in one statement, for PostgreSQL: there each
// query is a round trip to the server, and the batching goroutine's
// round trips are the serial step of the inbound path (issue 35). Each
// session's MAX is still the last entry of the (session_id, seq) index
// (PostgreSQL answers a MAX under an equality on the index's first column
// from the index's end).
func lastSeqsAtOnce(ctx context.Context, tx *ent.Tx, sessions []string) (map[string]int64, error) {
	var q strings.Builder
	q.WriteString("SELECT v.id, (SELECT MAX(e.seq) FROM events e WHERE e.session_id = v.id) FROM (VALUES ")
	args := make([]any, len(sessions))
	for i, id := range sessions {
		if i > 0 {
			q.WriteString(", ")
		}
		fmt.Fprintf(&q, "($%d::text)", i+1)
		args[i] = id
	}
	q.WriteString(") AS v(id)")
	rows, err := tx.QueryContext(ctx, q.String(), args...)
	if err != nil {
		return nil, fmt.Errorf("read last seqs of sessions %v: %w", sessions, err)
	}
	defer rows.Close()
	next := make(map[string]int64, len(sessions))
	for rows.Next() {
		var id string
		var seq stdsql.NullInt64
		if err := rows.Scan(&id, &seq); err != nil {
			return nil, fmt.Errorf("read last seqs of sessions %v: %w", sessions, err)
		}
		if seq.Valid {
			next[id] = seq.Int64
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read last seqs of sessions %v: %w", sessions, err)
	}
	return next, nil
}

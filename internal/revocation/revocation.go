// Package revocation carries the end of tokens and sessions from the
// process that ended them to every other process on the same PostgreSQL
// database. A token revoked or a session deleted on one process must close
// what it holds open on every other (websockets, SSE streams, cached token
// checks, cached session owners) at once, not when a cache expires: a
// socket's token is checked when it opens, and a revocation is exactly the
// moment its holder must lose it.
//
// The notice travels as a PostgreSQL notification on Channel, sent after
// the change committed. On SQLite there is one process and nothing to tell:
// the Announcer does nothing.
package revocation

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
)

// Channel is the notification channel of the notices.
const Channel = "wagraph_revocations"

// maxPayload keeps a notification under PostgreSQL's 8000-byte bound:
// a notice about many tokens is split.
const maxPayload = 7000

// Notice says which tokens ended and, when a session was deleted, which.
type Notice struct {
	Tokens  []string `json:"tokens,omitempty"`
	Session string   `json:"session,omitempty"`
}

// Announcer sends notices to the other processes.
type Announcer struct {
	db  *sql.DB // nil: a single process, nobody to tell
	log *slog.Logger
}

// NewAnnouncer returns an Announcer over the PostgreSQL database db; nil
// db gives one that tells nobody (SQLite). log (nil discards) gets what
// could not be sent.
func NewAnnouncer(db *sql.DB, log *slog.Logger) *Announcer {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Announcer{db: db, log: log}
}

// Announce sends n, in several notifications when its tokens do not fit in
// one (each holds the session, so that every part ends it). Call it after
// the change committed: a process told earlier could read the token as
// still valid and cache that.
func (a *Announcer) Announce(ctx context.Context, n Notice) error {
	if a == nil || a.db == nil || (len(n.Tokens) == 0 && n.Session == "") {
		return nil
	}
	for _, part := range split(n) {
		payload, err := json.Marshal(part)
		if err != nil {
			return fmt.Errorf("revocation: encode notice: %w", err)
		}
		if _, err := a.db.ExecContext(ctx, "SELECT pg_notify($1, $2)", Channel, string(payload)); err != nil {
			// The others still find out: at their next recheck of the
			// token, or when their listener reconnects.
			a.log.Warn("telling the other processes of a revocation failed", "session_id", n.Session, "tokens", len(n.Tokens), "err", err)
			return fmt.Errorf("revocation: notify: %w", err)
		}
	}
	return nil
}

// split cuts n into notices whose payloads stay under maxPayload.
func split(n Notice) []Notice {
	var out []Notice
	cur := Notice{Session: n.Session}
	size := len(n.Session) + 32
	for _, t := range n.Tokens {
		if size+len(t)+3 > maxPayload && len(cur.Tokens) > 0 {
			out = append(out, cur)
			cur, size = Notice{Session: n.Session}, len(n.Session)+32
		}
		cur.Tokens = append(cur.Tokens, t)
		size += len(t) + 3
	}
	return append(out, cur)
}

// Decode reads a notification's payload.
func Decode(payload string) (Notice, error) {
	var n Notice
	if err := json.Unmarshal([]byte(payload), &n); err != nil {
		return Notice{}, fmt.Errorf("revocation: decode notice: %w", err)
	}
	return n, nil
}

package cluster

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// The statements of the leases. Every expiry is computed and compared on
// the database's clock (now()), so the processes' clocks need not agree; a
// process measures its own deadline from when it sent the renewal, which
// is never later than the database's now() of it.

// insertNode writes this process's row ($1 id, $2 address, $3 key, $4
// TTL in ms); each use adds what it does on a conflict.
const insertNode = `
	INSERT INTO cluster_nodes (id, advertise_addr, secret, started_at, expires_at)
	VALUES ($1, $2, $3, now(), now() + $4::float8 * interval '1 millisecond')`

// register writes this process's row, unless a live process has its id;
// took reports whether it did. A row left by a process gone is taken over
// with this process's address and key.
func (n *Node) register(ctx context.Context) (took bool, err error) {
	res, err := n.db.ExecContext(ctx, insertNode+`
		ON CONFLICT (id) DO UPDATE SET advertise_addr = EXCLUDED.advertise_addr, secret = EXCLUDED.secret,
			started_at = EXCLUDED.started_at, expires_at = EXCLUDED.expires_at
		WHERE cluster_nodes.expires_at <= now()`,
		n.id, n.addr, n.secret, n.ttlMS())
	if err != nil {
		return false, fmt.Errorf("cluster: register node: %w", err)
	}
	rows, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("cluster: register node: %w", err)
	}
	return rows == 1, nil
}

// renew extends this process's row and every lease it still holds, in one
// transaction, and returns those leases (session → fence). A lease past
// its expiry is not renewed: another process may have taken it.
func (n *Node) renew(ctx context.Context) (map[string]int64, error) {
	tx, err := n.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("cluster: renew: %w", err)
	}
	defer tx.Rollback()
	// The row is this process's only while it carries its key: never
	// renew a row another process took over.
	res, err := tx.ExecContext(ctx, `
		UPDATE cluster_nodes SET expires_at = now() + $3::float8 * interval '1 millisecond'
		WHERE id = $1 AND secret = $2`, n.id, n.secret, n.ttlMS())
	if err != nil {
		return nil, fmt.Errorf("cluster: renew node: %w", err)
	}
	if k, err := res.RowsAffected(); err != nil || k != 1 {
		// Gone (forgotten after an hour expired: this process stalled that
		// long): written again, unless another process has the id now.
		res, err := tx.ExecContext(ctx, insertNode+` ON CONFLICT (id) DO NOTHING`, n.id, n.addr, n.secret, n.ttlMS())
		if err != nil {
			return nil, fmt.Errorf("cluster: renew node: %w", err)
		}
		if k, err := res.RowsAffected(); err != nil || k != 1 {
			return nil, fmt.Errorf("cluster: renew node: another process has taken node id %s", n.id)
		}
	}
	rows, err := tx.QueryContext(ctx, `
		UPDATE session_leases SET expires_at = now() + $2::float8 * interval '1 millisecond'
		WHERE holder = $1 AND expires_at > now()
		RETURNING session_id, fence`, n.id, n.ttlMS())
	if err != nil {
		return nil, fmt.Errorf("cluster: renew leases: %w", err)
	}
	held, err := scanLeases(rows)
	if err != nil {
		return nil, fmt.Errorf("cluster: renew leases: %w", err)
	}
	// Rows of processes gone for an hour, and leases of sessions deleted
	// while nobody ran them: nobody will renew them.
	if _, err := tx.ExecContext(ctx, `DELETE FROM cluster_nodes WHERE expires_at < now() - interval '1 hour'`); err != nil {
		return nil, fmt.Errorf("cluster: forget old nodes: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `
		DELETE FROM session_leases l WHERE l.expires_at < now() - interval '1 hour'
		AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = l.session_id)`); err != nil {
		return nil, fmt.Errorf("cluster: forget the leases of deleted sessions: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("cluster: renew: %w", err)
	}
	return held, nil
}

// counts returns how many processes are live and how many sessions exist.
func (n *Node) counts(ctx context.Context) (live, total int, err error) {
	err = n.db.QueryRowContext(ctx, `
		SELECT (SELECT count(*) FROM cluster_nodes WHERE expires_at > now()),
		       (SELECT count(*) FROM sessions)`).Scan(&live, &total)
	if err != nil {
		return 0, 0, fmt.Errorf("cluster: count nodes and sessions: %w", err)
	}
	return live, total, nil
}

// acquire takes up to limit leases of sessions nobody holds (never held, or
// expired, or given back), oldest sessions first; only sessionID's when it
// is set. Two processes taking the same one: the second waits for the
// first's row lock, then finds the lease valid and skips it (the ON
// CONFLICT's WHERE is evaluated again after the wait).
func (n *Node) acquire(ctx context.Context, sessionID string, limit int) (map[string]int64, error) {
	rows, err := n.db.QueryContext(ctx, `
		INSERT INTO session_leases (session_id, holder, expires_at, fence)
		SELECT s.id, $1, now() + $2::float8 * interval '1 millisecond', 1
		FROM sessions s LEFT JOIN session_leases l ON l.session_id = s.id
		WHERE (l.session_id IS NULL OR l.expires_at <= now()) AND ($3 = '' OR s.id = $3)
		ORDER BY s.created_at, s.id
		LIMIT $4
		ON CONFLICT (session_id) DO UPDATE
		SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at, fence = session_leases.fence + 1
		WHERE session_leases.expires_at <= now()
		RETURNING session_id, fence`, n.id, n.ttlMS(), sessionID, limit)
	if err != nil {
		return nil, fmt.Errorf("cluster: acquire leases: %w", err)
	}
	got, err := scanLeases(rows)
	if err != nil {
		return nil, fmt.Errorf("cluster: acquire leases: %w", err)
	}
	return got, nil
}

// release gives one lease back: expired at once, no holder, its fence kept
// so the next holder's is higher.
func (n *Node) release(ctx context.Context, sessionID string, fence int64) error {
	_, err := n.db.ExecContext(ctx, `
		UPDATE session_leases SET holder = '', expires_at = now()
		WHERE session_id = $1 AND holder = $2 AND fence = $3`, sessionID, n.id, fence)
	return err
}

// leave gives every lease back and deletes this process's row.
func (n *Node) leave(ctx context.Context) error {
	tx, err := n.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `UPDATE session_leases SET holder = '', expires_at = now() WHERE holder = $1`, n.id); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM cluster_nodes WHERE id = $1`, n.id); err != nil {
		return err
	}
	return tx.Commit()
}

// Holder is the process holding a session's lease.
type Holder struct {
	Node      string // its id
	Addr      string // its advertised address
	Fence     int64
	ExpiresAt time.Time // on the database's clock
	Self      bool      // this process
	secret    []byte
}

// HolderOf returns the live holder of a session's lease; ErrNoHolder when
// nobody holds it (never taken, expired, given back, or its process is
// gone).
func (n *Node) HolderOf(ctx context.Context, sessionID string) (Holder, error) {
	var h Holder
	var exp sql.NullTime
	err := n.db.QueryRowContext(ctx, `
		SELECT l.holder, l.fence, l.expires_at, c.advertise_addr, c.secret
		FROM session_leases l JOIN cluster_nodes c ON c.id = l.holder
		WHERE l.session_id = $1 AND l.expires_at > now() AND c.expires_at > now()`, sessionID).
		Scan(&h.Node, &h.Fence, &exp, &h.Addr, &h.secret)
	if errors.Is(err, sql.ErrNoRows) {
		return Holder{}, ErrNoHolder
	}
	if err != nil {
		return Holder{}, fmt.Errorf("cluster: read the holder of session %s: %w", sessionID, err)
	}
	h.ExpiresAt = exp.Time.UTC()
	h.Self = h.Node == n.id
	return h, nil
}

// HoldersOf returns which of sessionIDs a live process holds (by its node id),
// in one read: the sessions missing from it nobody runs.
func (n *Node) HoldersOf(ctx context.Context, sessionIDs []string) (map[string]string, error) {
	held := make(map[string]string, len(sessionIDs))
	if len(sessionIDs) == 0 {
		return held, nil
	}
	rows, err := n.db.QueryContext(ctx, `
		SELECT l.session_id, l.holder
		FROM session_leases l JOIN cluster_nodes c ON c.id = l.holder
		WHERE l.session_id = ANY($1) AND l.expires_at > now() AND c.expires_at > now()`, sessionIDs)
	if err != nil {
		return nil, fmt.Errorf("cluster: read the holders of %d sessions: %w", len(sessionIDs), err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, holder string
		if err := rows.Scan(&id, &holder); err != nil {
			return nil, fmt.Errorf("cluster: read the holders of %d sessions: %w", len(sessionIDs), err)
		}
		held[id] = holder
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("cluster: read the holders of %d sessions: %w", len(sessionIDs), err)
	}
	return held, nil
}

// Live reports whether the process named id is in the cluster: its row
// not expired. A process killed stops being live within the lease TTL.
func (n *Node) Live(ctx context.Context, id string) (bool, error) {
	var live bool
	err := n.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM cluster_nodes WHERE id = $1 AND expires_at > now())`, id).Scan(&live)
	if err != nil {
		return false, fmt.Errorf("cluster: read whether node %s is live: %w", id, err)
	}
	return live, nil
}

// forget removes the lease row of a deleted session held here.
func (n *Node) forget(ctx context.Context, sessionID string) error {
	n.mu.Lock()
	delete(n.held, sessionID)
	n.mu.Unlock()
	_, err := n.db.ExecContext(ctx, `DELETE FROM session_leases WHERE session_id = $1 AND holder = $2`, sessionID, n.id)
	return err
}

func scanLeases(rows *sql.Rows) (map[string]int64, error) {
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var id string
		var fence int64
		if err := rows.Scan(&id, &fence); err != nil {
			return nil, err
		}
		out[id] = fence
	}
	return out, rows.Err()
}

// ttlMS is the TTL as the statements take it.
func (n *Node) ttlMS() float64 { return float64(n.ttl.Milliseconds()) }

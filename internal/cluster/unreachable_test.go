package cluster

import (
	"bytes"
	"context"
	"database/sql"
	"net"
	neturl "net/url"
	"sync"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/storage"
	"github.com/wagraph/wagraph/internal/testclient"
)

// TestUnreachableDatabaseStopsSessionsBeforeExpiry: a process that can no
// longer renew its leases stops every session it runs before they expire,
// whether its database refuses at once (pool closed) or stops answering
// (connections hang: before a renewal, or in the middle of a tick, after
// the renewal), and even while a claim is stuck on the database; another
// process takes the sessions only after that, so none runs twice.
func TestUnreachableDatabaseStopsSessionsBeforeExpiry(t *testing.T) {
	type breaker func(t *testing.T, db *sql.DB, p *pgProxy, n *Node)
	tests := []struct {
		name   string
		break_ breaker
	}{
		{name: "pool closed", break_: func(t *testing.T, db *sql.DB, _ *pgProxy, _ *Node) { db.Close() }},
		{name: "connections hang", break_: func(t *testing.T, _ *sql.DB, p *pgProxy, _ *Node) { p.cut() }},
		{name: "connections hang after a renewal", break_: func(t *testing.T, _ *sql.DB, p *pgProxy, _ *Node) {
			p.cutOn([]byte("count(*) FROM cluster_nodes"))
			select {
			case <-p.broken:
			case <-time.After(testTTL):
				t.Fatal("the process did not count the nodes within a TTL")
			}
		}},
		{name: "a claim hangs", break_: func(t *testing.T, _ *sql.DB, p *pgProxy, n *Node) {
			p.cut()
			// An operation's claim with no deadline of its own, stuck on
			// the database while the ticks wait for it.
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				_, _ = n.Claim(ctx, "s99")
			}()
			t.Cleanup(func() {
				cancel()
				<-done
			})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc, d := openCluster(t)
			ids := createSessions(t, d.Ent, 4)
			w := newWorld()
			t.Cleanup(func() { w.checkNoOverlap(t) })

			p := newPGProxy(t, loc.URL)
			adb, err := sql.Open(storage.PostgresDriver, p.url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { adb.Close() })
			a := start(t, adb, w.local("a"))
			testclient.Until(t, 2*testTTL, "a runs every session", func() bool { return a.local.count() == len(ids) })

			tt.break_(t, adb, p, a.Node)
			b := start(t, d.SQL, w.local("b"))
			testclient.Until(t, 2*testTTL, "a stops every session", func() bool { return a.local.count() == 0 })
			a.mu.Lock()
			lastRenewal := a.lastOK
			a.mu.Unlock()
			stored := leases(t, d.SQL)
			for _, id := range ids {
				rel, ok := a.local.releasedAt(id)
				if !ok {
					t.Errorf("session %s stopped on a without a Release", id)
					continue
				}
				if expiry := lastRenewal.Add(testTTL); !rel.Before(expiry) {
					t.Errorf("session %s released %s after the last renewal began: not before its lease expired (TTL %s)",
						id, rel.Sub(lastRenewal).Round(time.Millisecond), testTTL)
				}
				if l := stored[id]; l.holder == a.ID() && !rel.Before(l.expires) {
					t.Errorf("session %s released at %s, its stored lease expired at %s", id, rel.Format(time.StampMilli), l.expires.Format(time.StampMilli))
				}
				t.Logf("session %s released %s after the last renewal began", id, rel.Sub(lastRenewal).Round(time.Millisecond))
			}
			testclient.Until(t, 2*testTTL, "b runs every session once a's leases expired", func() bool { return b.local.count() == len(ids) })
		})
	}
}

// pgProxy stands between a process and PostgreSQL, and can stop carrying
// anything at once (a network gone quiet: connections stay open, nothing
// arrives), or when a client sends a statement.
type pgProxy struct {
	t      *testing.T
	ln     net.Listener
	target string
	url    string
	broken chan struct{} // closed once cut

	mu      sync.Mutex
	trigger []byte
	isCut   bool
	conns   []net.Conn
}

func newPGProxy(t *testing.T, dbURL string) *pgProxy {
	t.Helper()
	u, err := neturl.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &pgProxy{t: t, ln: ln, target: u.Host, broken: make(chan struct{})}
	u.Host = ln.Addr().String()
	q := u.Query()
	// Every statement's text on the wire (no statement cache), so that
	// cutOn sees the one it waits for however often it ran before.
	q.Set("default_query_exec_mode", "exec")
	u.RawQuery = q.Encode()
	p.url = u.String()
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.accept()
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, c := range p.conns {
			c.Close()
		}
	})
	return p
}

func (p *pgProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			go p.pipe(c, nil, false) // the network is gone: nothing reaches the server
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.track(s)
		go p.pipe(c, s, true)
		go p.pipe(s, c, false)
	}
}

// track records a connection to close at the end; it reports whether the
// proxy still carries data.
func (p *pgProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.conns = append(p.conns, c)
	return !p.isCut
}

// pipe carries from → to until either closes or the proxy is cut; once
// cut, it keeps reading and drops what it reads, closing nothing.
func (p *pgProxy) pipe(from, to net.Conn, fromClient bool) {
	buf := make([]byte, 32<<10)
	var tail []byte
	for {
		n, err := from.Read(buf)
		if n > 0 {
			chunk := append(tail, buf[:n]...)
			if fromClient && !p.forward(chunk) {
				to = nil
			}
			if to != nil && p.carrying() {
				if _, err := to.Write(buf[:n]); err != nil {
					return
				}
			}
			tail = append([]byte(nil), chunk[max(0, len(chunk)-128):]...)
		}
		if err != nil {
			if to != nil && p.carrying() {
				to.Close()
			}
			return
		}
	}
}

// forward reports whether a chunk from a client may go on: false when it
// holds the trigger, which cuts the proxy.
func (p *pgProxy) forward(chunk []byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.trigger == nil || !bytes.Contains(chunk, p.trigger) {
		return !p.isCut
	}
	p.cutLocked()
	return false
}

func (p *pgProxy) carrying() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.isCut
}

// cut stops carrying anything, now.
func (p *pgProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutLocked()
}

func (p *pgProxy) cutLocked() {
	if !p.isCut {
		p.isCut = true
		close(p.broken)
	}
}

// cutOn cuts the proxy when a client sends stmt, before it reaches the
// server.
func (p *pgProxy) cutOn(stmt []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.trigger = stmt
}

// TestRenewsAgainAfterALongGap: a process whose last renewal is older than
// the drop deadline (its database was out of reach for a while, or its
// first tick came long after it joined) renews and takes its share as soon
// as the database answers: the deadline of a renewal that has nothing to
// drop is counted from the renewal, not from the last success.
func TestRenewsAgainAfterALongGap(t *testing.T) {
	_, d := openCluster(t)
	ids := createSessions(t, d.Ent, 3)
	w := newWorld()
	t.Cleanup(func() { w.checkNoOverlap(t) })
	l := w.local("a")
	n := join(t, d.SQL, l, testTTL, "")
	n.mu.Lock()
	n.lastOK = time.Now().Add(-2 * testTTL)
	n.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		n.Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	testclient.Until(t, 2*testTTL, "a runs every session after a long gap", func() bool { return l.count() == len(ids) })
}

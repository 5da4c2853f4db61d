package cluster

import (
	"context"
	"database/sql"
	"testing"

	"github.com/wagraph/wagraph/internal/sessions"
	"github.com/wagraph/wagraph/whatsapp"
)

// TestFencedStatuses: a process saves a session's status only while it
// holds the session's lease with the fence it took; once another process
// took the lease (a higher fence), the stale holder's save fails and
// writes nothing, even though it still believes it holds the session.
func TestFencedStatuses(t *testing.T) {
	_, d := openCluster(t)
	ctx := context.Background()
	w := newWorld()
	a := join(t, d.SQL, w.local("a"), testTTL, "")
	b := join(t, d.SQL, w.local("b"), testTTL, "")
	store := sessions.NewStatusStore(d.Ent)
	fenced := map[*Node]*FencedStatuses{a: NewFencedStatuses(store, a), b: NewFencedStatuses(store, b)}

	claim := func(t *testing.T, n *Node, id string) {
		t.Helper()
		if took, err := n.Claim(ctx, id); err != nil || !took {
			t.Fatalf("claim %s: %v, %v", id, took, err)
		}
	}
	// lapse ends a lease at once, as when its holder could not renew it.
	lapse := func(t *testing.T, id string) {
		t.Helper()
		if _, err := d.SQL.Exec(`UPDATE session_leases SET expires_at = now() - interval '1 second' WHERE session_id = $1`, id); err != nil {
			t.Fatal(err)
		}
	}
	save := func(n *Node, id string, rec whatsapp.StatusRecord) error {
		return fenced[n].SaveStatus(ctx, id, rec)
	}
	connectedB := whatsapp.StatusRecord{Status: whatsapp.StatusConnected, JID: "2@s.whatsapp.net", PushName: "b"}
	connectedA := whatsapp.StatusRecord{Status: whatsapp.StatusConnected, JID: "1@s.whatsapp.net", PushName: "a"}
	disconnected := whatsapp.StatusRecord{Status: whatsapp.StatusDisconnected}

	tests := []struct {
		name  string
		setup func(t *testing.T, id string)
		saver *Node
		rec   whatsapp.StatusRecord
		ok    bool
		want  whatsapp.StatusRecord // stored after the save
	}{
		{
			name:  "held",
			setup: func(t *testing.T, id string) { claim(t, a, id) },
			saver: a, rec: connectedA, ok: true, want: connectedA,
		},
		{
			name:  "never held",
			setup: func(t *testing.T, id string) {},
			saver: a, rec: connectedA, ok: false, want: whatsapp.StatusRecord{Status: whatsapp.StatusDisconnected},
		},
		{
			name:  "held by another process",
			setup: func(t *testing.T, id string) { claim(t, b, id) },
			saver: a, rec: connectedA, ok: false, want: whatsapp.StatusRecord{Status: whatsapp.StatusDisconnected},
		},
		{
			name: "taken over with a higher fence",
			setup: func(t *testing.T, id string) {
				claim(t, a, id)
				if err := save(a, id, connectedA); err != nil {
					t.Fatalf("a saves while holding: %v", err)
				}
				lapse(t, id)
				claim(t, b, id)
				fa, _ := a.fence(id)
				fb, _ := b.fence(id)
				if fb <= fa {
					t.Fatalf("b's fence %d, a's %d: want b's higher", fb, fa)
				}
				if err := save(b, id, connectedB); err != nil {
					t.Fatalf("b saves while holding: %v", err)
				}
			},
			// a still believes it holds the session, and reports it lost
			// late.
			saver: a, rec: disconnected, ok: false, want: connectedB,
		},
		{
			name: "taken back by the first holder",
			setup: func(t *testing.T, id string) {
				claim(t, a, id)
				lapse(t, id)
				claim(t, b, id)
				lapse(t, id)
				claim(t, a, id)
				if err := save(a, id, connectedA); err != nil {
					t.Fatalf("a saves while holding again: %v", err)
				}
			},
			saver: b, rec: connectedB, ok: false, want: connectedA,
		},
		{
			// A save that read its fence before the lease was lost and
			// taken back by the same process lands late: the holder
			// matches, the fence does not.
			name: "a stale fence of the same holder",
			setup: func(t *testing.T, id string) {
				claim(t, a, id)
				stale, _ := a.fence(id)
				lapse(t, id)
				claim(t, b, id)
				lapse(t, id)
				claim(t, a, id)
				if err := save(a, id, connectedA); err != nil {
					t.Fatalf("a saves while holding again: %v", err)
				}
				a.mu.Lock()
				a.held[id] = stale
				a.mu.Unlock()
			},
			saver: a, rec: disconnected, ok: false, want: connectedA,
		},
	}
	ids := createSessions(t, d.Ent, len(tests))
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := ids[i]
			tt.setup(t, id)
			err := save(tt.saver, id, tt.rec)
			if (err == nil) != tt.ok {
				t.Fatalf("SaveStatus: %v, want success %v", err, tt.ok)
			}
			got, found, err := store.LoadStatus(ctx, id)
			if err != nil || !found {
				t.Fatalf("load: %v, found %v", err, found)
			}
			if got.Status != tt.want.Status || got.JID != tt.want.JID || got.PushName != tt.want.PushName {
				t.Errorf("stored %+v, want %+v", got, tt.want)
			}
		})
	}
	var n int
	if err := d.SQL.QueryRow(`SELECT count(*) FROM sessions WHERE status = 'CONNECTED'`).Scan(&n); err != nil && err != sql.ErrNoRows {
		t.Fatal(err)
	}
	if n != 4 {
		t.Errorf("%d sessions stored CONNECTED, want 4 (held, taken over, taken back, stale fence)", n)
	}
}

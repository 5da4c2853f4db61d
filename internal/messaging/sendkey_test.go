package messaging

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wagraph/wagraph/ent/sendkey"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp"
)

// countingSender counts the sends that reach WhatsApp and the ids they
// carry; block, when set, holds each send until it is closed.
type countingSender struct {
	mu    sync.Mutex
	ids   []string
	block chan struct{}
}

func (c *countingSender) Run(ctx context.Context, id string, call whatsapp.Call) error {
	return sendsWith(failingSender{}, func(out whatsapp.Outgoing) (whatsapp.Sent, error) {
		if c.block != nil {
			<-c.block
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		c.ids = append(c.ids, out.ID)
		return whatsapp.Sent{ID: out.ID, Timestamp: time.Now()}, nil
	}).Run(ctx, id, call)
}

func (c *countingSender) sent() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.ids...)
}

// TestIdempotencyKeys: a send retried with its key is made once and
// answers the first result; another request with the key is a conflict
// naming idempotencyKey; a failed send frees the key; an expired key is a
// new one; a key left pending by a process that died is taken over with the
// message id it reserved, on one process at once, in a cluster after the
// lease; a key another live send holds is a conflict.
func TestIdempotencyKeys(t *testing.T) {
	ctx := context.Background()
	db := sessionDB(t)
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	wa := &countingSender{}
	s := New(Options{DB: db, Sender: wa, Publisher: &events{}, Now: clock})
	req := Request{Type: TypeText, Number: "491701234567", Text: "einmal", IdempotencyKey: "order-1"}

	first, err := s.Send(ctx, "s1", req)
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.Send(ctx, "s1", req)
	if err != nil || again.MessageID != first.MessageID || !again.Timestamp.Equal(*first.Timestamp) {
		t.Fatalf("retry: %+v, %v; want the first result %+v", again, err, first)
	}
	if got := wa.sent(); len(got) != 1 {
		t.Fatalf("%d sends reached WhatsApp, want 1", len(got))
	}

	other := req
	other.Text = "anders"
	if _, err := s.Send(ctx, "s1", other); fault.CodeOf(err) != fault.Conflict || fault.From(err).Field != "idempotencyKey" {
		t.Errorf("another request with the key: %v, want CONFLICT on idempotencyKey", err)
	}
	bad := req
	bad.IdempotencyKey = strings.Repeat("k", 256)
	if _, err := s.Send(ctx, "s1", bad); fault.CodeOf(err) != fault.Invalid || fault.From(err).Field != "idempotencyKey" {
		t.Errorf("a 256-character key: %v", err)
	}

	// A failed send frees its key.
	failing := New(Options{DB: db, Sender: failingSender{fault.New(fault.NotConnected, "not connected")}, Publisher: &events{}, Now: clock})
	retry := Request{Type: TypeText, Number: "491701234567", Text: "später", IdempotencyKey: "order-2"}
	if _, err := failing.Send(ctx, "s1", retry); fault.CodeOf(err) != fault.NotConnected {
		t.Fatalf("failing send: %v", err)
	}
	if _, err := s.Send(ctx, "s1", retry); err != nil {
		t.Fatalf("the key after a failed send: %v", err)
	}

	// A send that may have reached WhatsApp (a timeout): the key keeps its
	// message id, and the retry sends under it, which the recipient keeps
	// once.
	flaky := &flakySender{fail: fault.New(fault.WhatsAppTimeout, "WhatsApp did not answer in time")}
	timing := New(Options{DB: db, Sender: flaky, Publisher: &events{}, Now: clock})
	slow := Request{Type: TypeText, Number: "491701234567", Text: "langsam", IdempotencyKey: "order-7"}
	if _, err := timing.Send(ctx, "s1", slow); fault.CodeOf(err) != fault.WhatsAppTimeout {
		t.Fatalf("timed-out send: %v", err)
	}
	if res, err := timing.Send(ctx, "s1", slow); err != nil || len(flaky.ids) != 2 || flaky.ids[0] != flaky.ids[1] || res.MessageID != flaky.ids[0] {
		t.Errorf("the retry of a timed-out send: %+v, %v, ids %v; want the same message id twice", res, err, flaky.ids)
	}

	// Expired after 24 h: a new send.
	advance(KeyTTL + time.Minute)
	later, err := s.Send(ctx, "s1", req)
	if err != nil || later.MessageID == first.MessageID {
		t.Fatalf("after 24 h: %+v, %v; want a new send", later, err)
	}

	// Left pending by a process that died: one process (SQLite) takes it
	// over at once, with the message id it reserved.
	db.SendKey.Create().SetSessionID("s1").SetKey("order-3").SetFingerprint(fingerprintOf(t, Request{Type: TypeText, Number: "491701234567", Text: "drei"})).
		SetMessageID("3EB0RESERVED").SetOwner("dead").SetClaimedAt(clock()).SetCreatedAt(clock()).ExecX(ctx)
	res, err := s.Send(ctx, "s1", Request{Type: TypeText, Number: "491701234567", Text: "drei", IdempotencyKey: "order-3"})
	if err != nil || res.MessageID != "3EB0RESERVED" {
		t.Fatalf("a dead send's key: %+v, %v; want the reserved id", res, err)
	}
	if k := db.SendKey.Query().Where(sendkey.Key("order-3")).OnlyX(ctx); k.State != sendkey.StateDone || k.Owner != s.instance {
		t.Errorf("key after the takeover: %+v", k)
	}

	// In a cluster another process's pending key is waited out for the
	// lease, then taken over.
	shared := New(Options{DB: db, Sender: wa, Publisher: &events{}, Now: clock, SharedKeys: true})
	fourth := Request{Type: TypeText, Number: "491701234567", Text: "vier", IdempotencyKey: "order-4"}
	db.SendKey.Create().SetSessionID("s1").SetKey("order-4").SetFingerprint(fingerprintOf(t, fourth)).
		SetMessageID("3EB0RESERVED4").SetOwner("elsewhere").SetClaimedAt(clock()).SetCreatedAt(clock()).ExecX(ctx)
	if _, err := shared.Send(ctx, "s1", fourth); fault.CodeOf(err) != fault.Conflict || !strings.Contains(err.Error(), "still being made") {
		t.Errorf("another live process's key: %v, want CONFLICT still being made", err)
	}
	advance(keyLease + time.Second)
	if res, err := shared.Send(ctx, "s1", fourth); err != nil || res.MessageID != "3EB0RESERVED4" {
		t.Errorf("after the lease: %+v, %v", res, err)
	}

	// In a cluster that says the holder's process is gone (killed: its
	// row expired), taken over at once; a live one's is waited out; a
	// cluster that cannot be read counts as live.
	for _, tt := range []struct {
		name  string
		nodes liveness
		taken bool
	}{
		{"gone", liveness{"n2": false}, true},
		{"live", liveness{"n2": true}, false},
		{"unknown", liveness{}, false},
	} {
		t.Run("holder "+tt.name, func(t *testing.T) {
			clustered := New(Options{DB: db, Sender: wa, Publisher: &events{}, Now: clock, SharedKeys: true, NodeID: "n1", Nodes: tt.nodes})
			req := Request{Type: TypeText, Number: "491701234567", Text: "sieben " + tt.name, IdempotencyKey: "order-7-" + tt.name}
			db.SendKey.Create().SetSessionID("s1").SetKey(req.IdempotencyKey).SetFingerprint(fingerprintOf(t, req)).
				SetMessageID("3EB0GONE" + tt.name).SetOwner("n2/run").SetClaimedAt(clock()).SetCreatedAt(clock()).ExecX(ctx)
			res, err := clustered.Send(ctx, "s1", req)
			if tt.taken && (err != nil || res.MessageID != "3EB0GONE"+tt.name) {
				t.Errorf("the key of a process gone: %+v, %v; want it taken over with its reserved id", res, err)
			}
			if !tt.taken && fault.CodeOf(err) != fault.Conflict {
				t.Errorf("the key of a process %s: %+v, %v; want CONFLICT still being made", tt.name, res, err)
			}
		})
	}

	// An earlier run of this node left it: taken over at once.
	node := New(Options{DB: db, Sender: wa, Publisher: &events{}, Now: clock, SharedKeys: true, NodeID: "n1"})
	sixth := Request{Type: TypeText, Number: "491701234567", Text: "sechs", IdempotencyKey: "order-6"}
	db.SendKey.Create().SetSessionID("s1").SetKey("order-6").SetFingerprint(fingerprintOf(t, sixth)).
		SetMessageID("3EB0RESERVED6").SetOwner("n1/earlier").SetClaimedAt(clock()).SetCreatedAt(clock()).ExecX(ctx)
	if res, err := node.Send(ctx, "s1", sixth); err != nil || res.MessageID != "3EB0RESERVED6" {
		t.Errorf("a key of this node's earlier run: %+v, %v; want it taken over at once", res, err)
	}

	// A send under way here: the same key again is a conflict.
	blocked := &countingSender{block: make(chan struct{})}
	busy := New(Options{DB: db, Sender: blocked, Publisher: &events{}, Now: clock})
	fifth := Request{Type: TypeText, Number: "491701234567", Text: "fünf", IdempotencyKey: "order-5"}
	done := make(chan error, 1)
	go func() { _, err := busy.Send(ctx, "s1", fifth); done <- err }()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, ok := busy.inflight.Load("s1\x00order-5"); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first send never started")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := busy.Send(ctx, "s1", fifth); fault.CodeOf(err) != fault.Conflict {
		t.Errorf("the key of a send under way: %v, want CONFLICT", err)
	}
	close(blocked.block)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := blocked.sent(); len(got) != 1 {
		t.Errorf("%d sends of the key under way reached WhatsApp, want 1", len(got))
	}
}

func fingerprintOf(t *testing.T, req Request) string {
	t.Helper()
	fp, err := fingerprint(req)
	if err != nil {
		t.Fatal(err)
	}
	return fp
}

// flakySender fails its first send with fail, then sends; it keeps the id
// of every attempt.
type flakySender struct {
	fail error
	ids  []string
}

func (f *flakySender) Run(ctx context.Context, id string, call whatsapp.Call) error {
	return sendsWith(failingSender{}, func(out whatsapp.Outgoing) (whatsapp.Sent, error) {
		f.ids = append(f.ids, out.ID)
		if len(f.ids) == 1 {
			return whatsapp.Sent{}, f.fail
		}
		return whatsapp.Sent{ID: out.ID, Timestamp: time.Now()}, nil
	}).Run(ctx, id, call)
}

// liveness is a cluster's view of its processes: a node missing from it
// cannot be read.
type liveness map[string]bool

func (l liveness) Live(_ context.Context, node string) (bool, error) {
	live, ok := l[node]
	if !ok {
		return false, errors.New("cluster unreachable")
	}
	return live, nil
}

package whatsapp

import (
	"bytes"
	"context"
	"runtime"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"

	"github.com/wagraph/wagraph/internal/fault"
)

// remove deletes the record of session id, as the app deletes the session's
// row before it calls Delete.
func (s *memStatuses) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.recs, id)
}

// heldStatuses is a StatusStore whose next LoadStatus of one session reads
// the record, then waits until the test lets it return: a reader caught
// between its read of the store and its insert into the manager.
type heldStatuses struct {
	StatusStore
	id      string
	read    chan struct{} // closed once the held read has the record
	release chan struct{} // closed by the test to let it return
	once    sync.Once
}

func (h *heldStatuses) LoadStatus(ctx context.Context, id string) (StatusRecord, bool, error) {
	rec, found, err := h.StatusStore.LoadStatus(ctx, id)
	if id != h.id {
		return rec, found, err
	}
	held := false
	h.once.Do(func() { held = true })
	if held {
		close(h.read)
		<-h.release
	}
	return rec, found, err
}

// hasSession reports whether the manager holds session id.
func (m *Manager) hasSession(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sessions[id] != nil
}

// TestDeleteBeatsAReaderHoldingTheRecord: a reader that read the record
// before it was deleted, and would insert the session after Delete ran,
// finds it NOT_FOUND instead of bringing it back.
func TestDeleteBeatsAReaderHoldingTheRecord(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	held := &heldStatuses{StatusStore: e.statuses, id: "s1", read: make(chan struct{}), release: make(chan struct{})}
	m := NewManager(ManagerOptions{Store: e.store, Logger: e.log, Publisher: e.pub, Statuses: held, Transport: e.net.Transport()})
	t.Cleanup(m.Close)
	e.statuses.add("s1")

	got := make(chan error, 1)
	go func() {
		_, err := m.Status(ctx, "s1")
		got <- err
	}()
	<-held.read // the reader has the record, the manager does not hold the session
	e.statuses.remove("s1")
	if err := m.Delete(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	close(held.release)
	wantFault(t, <-got, fault.NotFound, "session s1 not found")
	if m.hasSession("s1") {
		t.Fatal("the reader brought the deleted session back into the manager")
	}
	_, err := m.Status(ctx, "s1")
	wantFault(t, err, fault.NotFound, "session s1 not found")
}

// TestDeleteWhileReadersHammer: readers read a linked session's status
// without pause while it is deleted; afterwards it is gone from the manager,
// from the device store and from the network's linked devices, and readers
// cannot bring it back.
func TestDeleteWhileReadersHammer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	e.pairQR(m, "s1", phone)
	n := len(e.pub.events("s1"))

	var deleted atomic.Bool // set once Delete returned
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var reads, back atomic.Int64
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				after := deleted.Load()
				_, err := m.Status(ctx, "s1")
				reads.Add(1)
				if after && err == nil {
					back.Add(1)
				}
				if err != nil && fault.CodeOf(err) != fault.NotFound {
					t.Errorf("Status: %v", err)
				}
			}
		}()
	}
	waitReads := func(more int64) {
		target := reads.Load() + more
		for reads.Load() < target {
			time.Sleep(time.Millisecond)
		}
	}
	waitReads(100) // the readers are at it
	e.statuses.remove("s1")
	if err := m.Delete(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	deleted.Store(true)
	waitReads(1000) // and go on after the delete
	close(stop)
	wg.Wait()

	if b := back.Load(); b > 0 {
		t.Errorf("%d reads after Delete found the session", b)
	}
	if m.hasSession("s1") {
		t.Error("the manager holds the deleted session")
	}
	if e.devices() != 0 || len(e.net.LinkedDevices(phone)) != 0 {
		t.Errorf("%d devices in the store, linked %v", e.devices(), e.net.LinkedDevices(phone))
	}
	if evs := e.pub.events("s1")[n:]; len(evs) != 0 {
		t.Errorf("events after delete: %+v", evs)
	}
	if _, ok, _ := e.statuses.LoadStatus(ctx, "s1"); ok {
		t.Error("the record came back")
	}
	_, err := m.Status(ctx, "s1")
	wantFault(t, err, fault.NotFound, "session s1 not found")
	if m.hasSession("s1") {
		t.Error("a read after the delete brought the session back")
	}
}

// TestDeleteDuringConnect: a Delete that comes while Connect is starting a
// client (the session already gone when the client would be attached)
// leaves no client running: Connect finds the session NOT_FOUND and no
// goroutine of a client is left.
func TestDeleteDuringConnect(t *testing.T) {
	e := newEnv(t)
	before := runtime.NumGoroutine()
	starting, release := make(chan struct{}), make(chan struct{})
	m := NewManager(ManagerOptions{Store: e.store, Logger: e.log, Publisher: e.pub, Statuses: e.statuses,
		Transport: e.net.Transport(),
		Point: func(*whatsmeow.Client) {
			close(starting)
			<-release
		}})
	t.Cleanup(m.Close)
	e.statuses.add("s1")
	if _, err := m.Status(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	s := m.sessions["s1"]
	m.mu.Unlock()

	connected := make(chan error, 1)
	go func() { connected <- m.Connect(ctx, "s1") }()
	<-starting // Connect holds the session's opMu and builds its client
	e.statuses.remove("s1")
	deleted := make(chan error, 1)
	go func() { deleted <- m.Delete(ctx, "s1") }()
	for !func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.deleted }() {
		time.Sleep(time.Millisecond)
	}
	close(release)
	select {
	case err := <-connected:
		wantFault(t, err, fault.NotFound, "session s1 not found")
	case <-time.After(20 * time.Second):
		t.Fatal("Connect of the deleted session did not return")
	}
	if err := <-deleted; err != nil {
		t.Fatal(err)
	}
	if m.hasSession("s1") {
		t.Fatal("the manager holds the deleted session")
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			var buf bytes.Buffer
			_ = pprof.Lookup("goroutine").WriteTo(&buf, 1)
			t.Fatalf("%d goroutines after the delete, %d before: a client runs on\n%s", runtime.NumGoroutine(), before, buf.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

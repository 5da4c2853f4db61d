package wafake_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/wagraph/wagraph/internal/testclient"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// burstRecorder keeps the texts of a burst a client received, in the order
// its handler saw them, and what it could not decrypt.
type burstRecorder struct {
	prefix string
	mu     sync.Mutex
	ids    []string
	texts  []string
	bad    []string
	synced []int // the counts of OfflineSyncCompleted, after how many texts
	change chan struct{}
}

func recordBurst(cli *whatsmeow.Client, prefix string) *burstRecorder {
	r := &burstRecorder{prefix: prefix, change: make(chan struct{}, 1)}
	cli.AddEventHandler(func(evt any) {
		r.mu.Lock()
		switch e := evt.(type) {
		case *events.Message:
			if text := e.Message.GetConversation(); strings.HasPrefix(text, prefix) {
				r.ids = append(r.ids, e.Info.ID)
				r.texts = append(r.texts, text)
			}
		case *events.UndecryptableMessage:
			r.bad = append(r.bad, e.Info.ID)
		case *events.OfflineSyncCompleted:
			r.synced = append(r.synced, e.Count, len(r.ids))
		}
		r.mu.Unlock()
		select {
		case r.change <- struct{}{}:
		default:
		}
	})
	return r
}

// wait returns the ids and texts once n texts arrived (or 30 s passed, with
// what arrived: the caller's comparison then fails).
func (r *burstRecorder) wait(n int) (ids, texts []string) {
	timeout := time.After(30 * time.Second)
	for {
		r.mu.Lock()
		if len(r.ids) >= n {
			ids, texts = slices.Clone(r.ids), slices.Clone(r.texts)
			r.mu.Unlock()
			return ids, texts
		}
		r.mu.Unlock()
		select {
		case <-r.change:
		case <-timeout:
			r.mu.Lock()
			defer r.mu.Unlock()
			return slices.Clone(r.ids), slices.Clone(r.texts)
		}
	}
}

// checkBurst fails unless the client got exactly the burst: every id once,
// in the order sent, with its text, and nothing it could not decrypt.
func (r *burstRecorder) check(t *testing.T, sent []string) {
	t.Helper()
	ids, texts := r.wait(len(sent))
	// A duplicate would arrive right behind: look again after a moment.
	time.Sleep(100 * time.Millisecond)
	r.mu.Lock()
	ids, texts = slices.Clone(r.ids), slices.Clone(r.texts)
	bad := slices.Clone(r.bad)
	r.mu.Unlock()
	if len(bad) > 0 {
		t.Errorf("%d messages could not be decrypted, first %s", len(bad), bad[0])
	}
	if len(ids) != len(sent) {
		t.Fatalf("the client got %d texts of the burst, want exactly %d", len(ids), len(sent))
	}
	for i := range sent {
		if want := fmt.Sprintf("%s%d", r.prefix, i+1); ids[i] != sent[i] || texts[i] != want {
			t.Fatalf("text %d: got %s %q, want %s %q (complete and in order)", i+1, ids[i], texts[i], sent[i], want)
		}
	}
}

// TestSendBurst: a burst reaches a connected real client complete, once
// each, and in the order sent, and the client acknowledges all of it.
func TestSendBurst(t *testing.T) {
	t.Parallel()
	n := startNetwork(t)
	const me, contact = "491701234567", "4915112345678"
	cli, ps := linkByQR(t, n, me)
	rec := recordBurst(cli, "lead-")
	ids, err := n.SendBurst(contact, me, "lead-", 500)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 500 {
		t.Fatalf("%d ids, want 500", len(ids))
	}
	rec.check(t, ids)
	settle(t, n, ps.ID)
}

// TestSendBurstOffline: a burst to a device that is not connected waits in
// the network's queue and reaches the device at its next login, complete
// and in order, before the network says the offline delivery is complete.
func TestSendBurstOffline(t *testing.T) {
	t.Parallel()
	n := startNetwork(t)
	const me, contact = "491701234568", "4915112345679"
	cli, ps := linkByQR(t, n, me)
	rec := recordBurst(cli, "away-")
	settle(t, n, ps.ID)
	cli.Disconnect()
	ids, err := n.SendBurst(contact, me, "away-", 300)
	if err != nil {
		t.Fatal(err)
	}
	if u := n.Unacked(ps.ID); u != 300 {
		t.Fatalf("the network holds %d stanzas for the offline device, want the 300 texts", u)
	}
	if err := cli.Connect(); err != nil {
		t.Fatal(err)
	}
	rec.check(t, ids)
	settle(t, n, ps.ID)
	deadline := time.Now().Add(10 * time.Second)
	for {
		rec.mu.Lock()
		synced := slices.Clone(rec.synced)
		rec.mu.Unlock()
		if len(synced) > 0 {
			if synced[0] != 300 || synced[1] != 300 {
				t.Errorf("OfflineSyncCompleted count %d after %d texts, want 300 after all 300", synced[0], synced[1])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no OfflineSyncCompleted within 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSendBurstDuringLogin: a burst that runs while the device logs in
// arrives complete, once each and in order: what the network queued before
// the login is replayed first, and what it queues during the replay comes
// after it, never overtaking it.
func TestSendBurstDuringLogin(t *testing.T) {
	t.Parallel()
	n := startNetwork(t)
	const me, contact = "491701234569", "4915112345670"
	cli, ps := linkByQR(t, n, me)
	rec := recordBurst(cli, "mid-")
	settle(t, n, ps.ID)
	cli.Disconnect()

	type result struct {
		ids []string
		err error
	}
	done := make(chan result, 1)
	go func() {
		ids, err := n.SendBurst(contact, me, "mid-", 1000)
		done <- result{ids, err}
	}()
	testclient.Until(t, 10*time.Second, `n.Unacked(ps.ID) >= 100`, func() bool { return n.Unacked(ps.ID) >= 100 })
	if err := cli.Connect(); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	rec.check(t, res.ids)
	settle(t, n, ps.ID)
}

func TestSendBurstRefusals(t *testing.T) {
	t.Parallel()
	n := startNetwork(t)
	for _, count := range []int{0, -1, wafake.MaxBurst + 1} {
		var ve *wafake.ValueError
		if ids, err := n.SendBurst("4915112345678", "491701234567", "x", count); !errors.As(err, &ve) || len(ids) != 0 {
			t.Errorf("a burst of %d: %v, %d ids; want a ValueError and nothing sent", count, err, len(ids))
		}
	}
	// No linked device: nothing to queue for.
	if ids, err := n.SendBurst("4915112345678", "491701234567", "x", 3); err == nil || len(ids) != 0 {
		t.Errorf("a burst to an account without a linked device: %v, %d ids; want refused", err, len(ids))
	}
}

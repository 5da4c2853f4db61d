package events

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestReplayBoundedInBytes: a subscriber replaying large events holds at
// most one page of replayBytes (or a single event larger than that), and
// still receives every event in order. On main before this change a page
// was 256 events whatever their size: 80 replays of a session's large
// events to sockets that never read held 2 GB.
func TestReplayBoundedInBytes(t *testing.T) {
	db := openDB(t, "s1")
	l := newLog(t, db, LogOptions{})
	const n, size = 40, 300 << 10 // 12 MB of events, about 3 a page
	big := `{"text":"` + strings.Repeat("x", size) + `"}`
	for i := range n {
		if _, err := l.Append(context.Background(), "s1", []New{{Kind: MessagesUpdate, Data: data(big)}}); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	tests := []struct {
		name      string
		maxBytes  int
		wantPages int
	}{
		{"pages of a megabyte", replayBytes, 14},
		{"one event larger than the bound still comes", 1000, n},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var after int64
			pages := 0
			for {
				page, more, err := l.AfterWithin(context.Background(), "s1", after, nil, replayPage, tt.maxBytes)
				if err != nil {
					t.Fatal(err)
				}
				pages++
				held := 0
				for _, e := range page {
					if e.Seq != after+1 {
						t.Fatalf("seq %d after %d", e.Seq, after)
					}
					after = e.Seq
					held += len(e.Data)
				}
				if len(page) > 1 && held > tt.maxBytes {
					t.Errorf("a page of %d events holds %d bytes, over %d", len(page), held, tt.maxBytes)
				}
				if !more {
					break
				}
			}
			if after != n || pages != tt.wantPages {
				t.Errorf("read up to seq %d in %d pages, want %d in %d", after, pages, n, tt.wantPages)
			}
		})
	}

	bus := NewBus(l, BusOptions{})
	t.Cleanup(bus.Close)
	sub, err := bus.Subscribe(context.Background(), "s1", nil, &Cursor{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	for i := range n {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		env, err := sub.Next(ctx)
		cancel()
		if err != nil || env.Seq != int64(i+1) {
			t.Fatalf("event %d: seq %d, %v", i+1, env.Seq, err)
		}
		if held := sub.pageBytes(); held > replayBytes {
			t.Fatalf("the subscription holds %d bytes of replay, over %d", held, replayBytes)
		}
	}
}

// pageBytes is the data of the replay page the subscription holds; read
// by its consumer only, as Next reads it.
func (s *Subscription) pageBytes() int {
	n := 0
	for _, e := range s.page {
		n += len(e.Data)
	}
	return n
}

package whatsapp

import (
	"fmt"
	"slices"
	"testing"
)

// TestOfflineReplay: messages sent while the session was disconnected are
// published as inbound messages after it reconnects, announced by a
// connection.update with offlineSync {completed: false} and followed by
// one with offlineSync {completed: true}.
func TestOfflineReplay(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	st := e.pairQR(m, "s1", phone)
	if err := m.Disconnect("s1"); err != nil {
		t.Fatal(err)
	}
	const n = 5
	var ids []string
	for i := range n {
		id, err := e.net.SendText(peer, phone, fmt.Sprintf("while you were away %d", i))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	from := len(e.pub.events("s1"))
	if err := m.Connect(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	done := e.eventAfter("s1", from, KindConnectionUpdate, func(d map[string]any) bool {
		sync, _ := d["offlineSync"].(map[string]any)
		return sync["completed"] == true
	})
	wantData(t, "connection.update", done.Data, map[string]any{"offlineSync": map[string]any{"completed": true, "count": n, "messages": nil}})

	var got []string
	preview, completed := -1, -1
	for i, ev := range e.pub.events("s1")[from:] {
		switch {
		case ev.Kind == KindInboundMessage:
			got = append(got, ev.Data["id"].(string))
			if preview < 0 || completed >= 0 {
				t.Errorf("message %v outside the replay (preview at %d, completion at %d)", ev.Data["id"], preview, completed)
			}
		case ev.Kind == KindConnectionUpdate && ev.Data["offlineSync"] != nil:
			sync := ev.Data["offlineSync"].(map[string]any)
			if sync["completed"] == true {
				completed = i
			} else {
				preview = i
				wantData(t, "preview", ev.Data, map[string]any{"offlineSync": map[string]any{"completed": false, "count": n, "messages": n}})
			}
		}
	}
	if !slices.Equal(got, ids) {
		t.Errorf("replayed %v, want %v in order", got, ids)
	}
	e.waitStatus(m, "s1", StatusConnected)
	e.settle(st)
}

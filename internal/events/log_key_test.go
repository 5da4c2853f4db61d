package events

import (
	"context"
	"testing"

	entdelivery "github.com/wagraph/wagraph/ent/delivery"
)

// TestAppendKey: an event whose key the session's log already holds is the
// same event (WhatsApp re-sends what a crash left unacknowledged): the stored
// envelope comes back marked Existing, no seq is used and no delivery is
// owed again; within one append and across sessions keys behave the same.
func TestAppendKey(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, "s1", "s2")
	db.Webhook.Create().SetID("w1").SetSessionID("s1").SetURL("https://example.com/h").SetSecret("whsec_AAAA").
		SetEvents([]string{string(InboundMessageUpsert)}).SetHeaders(map[string]string{}).ExecX(ctx)
	l := newLog(t, db, LogOptions{})
	msg := func(key string) New {
		return New{Kind: InboundMessageUpsert, Data: data(`{"id":"` + key + `"}`), Key: "in/" + key}
	}

	first, err := l.Append(ctx, "s1", []New{msg("A"), msg("B")})
	if err != nil {
		t.Fatal(err)
	}
	again, err := l.Append(ctx, "s1", []New{msg("B"), msg("C"), msg("C"), {Kind: ConnectionUpdate, Data: data(`{}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if !again[0].Existing || again[0].ID != first[1].ID || again[0].Seq != 2 {
		t.Errorf("re-sent B = %+v, want the stored %+v marked Existing", again[0], first[1])
	}
	if again[1].Existing || again[1].Seq != 3 || !again[2].Existing || again[2].ID != again[1].ID {
		t.Errorf("C twice in one append = %+v, %+v: want one event (seq 3) and the same again", again[1], again[2])
	}
	if again[3].Existing || again[3].Seq != 4 {
		t.Errorf("an event without a key = %+v, want seq 4", again[3])
	}
	other, err := l.Append(ctx, "s2", []New{msg("A")})
	if err != nil {
		t.Fatal(err)
	}
	if other[0].Existing || other[0].Seq != 1 {
		t.Errorf("the same key in another session = %+v, want a new event", other[0])
	}

	if n := db.Event.Query().CountX(ctx); n != 5 {
		t.Errorf("%d events stored, want 5 (A, B, C, the update, and s2's A)", n)
	}
	if n := db.Delivery.Query().Where(entdelivery.WebhookID("w1")).CountX(ctx); n != 3 {
		t.Errorf("%d deliveries, want 3 (A, B, C once each)", n)
	}
	stored, err := l.After(ctx, "s1", 0, nil, 10)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range stored {
		if e.Seq != int64(i+1) {
			t.Fatalf("seq %d at %d: the log has a gap", e.Seq, i)
		}
	}
}

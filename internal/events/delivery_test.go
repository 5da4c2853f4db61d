package events

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/wagraph/wagraph/ent"
	entdelivery "github.com/wagraph/wagraph/ent/delivery"
)

// TestAppendExplicitWebhooks: an event naming its webhooks is delivered to
// exactly those of its session, enabled or not, whatever they selected;
// ids of other sessions' webhooks or of no webhook get nothing; events of
// the same batch that name none follow the rule.
func TestAppendExplicitWebhooks(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, "s1", "s2")
	hook := func(id, session string, enabled bool, kinds ...Kind) {
		names := make([]string, len(kinds))
		for i, k := range kinds {
			names[i] = string(k)
		}
		db.Webhook.Create().SetID(id).SetSessionID(session).SetURL("https://example.com/" + id).
			SetEnabled(enabled).SetEvents(names).SetHeaders(map[string]string{}).SetSecret("x").ExecX(ctx)
	}
	hook("w-call", "s1", true, Call)
	hook("w-off", "s1", false, Call)
	hook("w-none", "s1", true)
	hook("w-other", "s2", true, Call)
	l := newLog(t, db, LogOptions{})

	envs, err := l.Append(ctx, "s1", []New{
		{Kind: WebhookTest, Webhooks: []string{"w-off"}},
		{Kind: WebhookTest, Webhooks: []string{"w-none", "w-other", "no-such-webhook"}},
		{Kind: Call, Webhooks: []string{"w-off"}},
		{Kind: Call},
		{Kind: Call, Webhooks: []string{}},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		env  Envelope
		want []string
	}{
		{"test to a disabled webhook", envs[0], []string{"w-off"}},
		{"test to a webhook selecting nothing; other session's and unknown ids skipped", envs[1], []string{"w-none"}},
		{"a selectable kind naming a webhook", envs[2], []string{"w-off"}},
		{"the rule", envs[3], []string{"w-call"}},
		{"an empty list names none", envs[4], nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows := db.Delivery.Query().Where(entdelivery.EventID(tt.env.ID)).Order(ent.Asc(entdelivery.FieldWebhookID)).AllX(ctx)
			var hooks []string
			for _, r := range rows {
				hooks = append(hooks, r.WebhookID)
			}
			if !slices.Equal(hooks, tt.want) {
				t.Errorf("deliveries to %v, want %v", hooks, tt.want)
			}
		})
	}
}

// TestEnvelopeOf: a stored event reads back as the envelope Append
// returned, byte for byte on the wire.
func TestEnvelopeOf(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, "s1")
	now := time.Date(2026, 11, 22, 10, 4, 5, 123_000_000, time.UTC)
	l := newLog(t, db, LogOptions{Now: func() time.Time { return now }})
	envs, err := l.Append(ctx, "s1", []New{{Kind: MessagesUpdate, Data: data(`{"id":"M1","status":"read"}`)}})
	if err != nil {
		t.Fatal(err)
	}
	got := EnvelopeOf(db.Event.GetX(ctx, envs[0].ID))
	a, _ := json.Marshal(envs[0])
	b, _ := json.Marshal(got)
	if string(a) != string(b) {
		t.Errorf("EnvelopeOf = %s, want %s", b, a)
	}
}

// TestNewDeliveryID: "dlv_" and a ULID sorting by time.
func TestNewDeliveryID(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 4, 5, 0, time.UTC)
	a, err := NewDeliveryID(t0, zeros{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewDeliveryID(t0.Add(time.Millisecond), zeros{})
	if len(a) != 30 || a[:4] != "dlv_" || !(a < b) {
		t.Errorf("ids %q, %q: want dlv_ + 26 characters, increasing with time", a, b)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

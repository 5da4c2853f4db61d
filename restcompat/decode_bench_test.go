package restcompat

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/events"
)

// BenchmarkDecode: the strict decoding of a request body (the strict walk,
// then encoding/json), for a send-text body and a webhook create body
// (whose events and headers objects are then turned into the resolver's
// input).
func BenchmarkDecode(b *testing.B) {
	b.Run("send-text", func(b *testing.B) {
		const body = `{"number":"491701234567","text":"Bis morgen um zehn am Bahnhof?","mentions":["491709876543"],"quoted":"3EB0C767D26A1D3A3F8E"}`
		b.ReportAllocs()
		for b.Loop() {
			r := httptest.NewRequest("POST", "/api/v1/session/s1/message/text", strings.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			var in model.SendTextInput
			if err := decodeBody(r, &in, false); err != nil || in.Text == "" {
				b.Fatalf("decode: %v", err)
			}
		}
	})
	b.Run("webhook-create", func(b *testing.B) {
		const body = `{"url":"https://hooks.example.com/wagraph","displayName":"CRM","enabled":true,` +
			`"events":{"inbound-message.upsert":true,"outbound-message.upsert":true,"messages.update":true,"connection.update":false},` +
			`"headers":{"Authorization":"Bearer abc123","X-Tenant":"acme"}}`
		b.ReportAllocs()
		for b.Loop() {
			r := httptest.NewRequest("POST", "/api/v1/session/s1/webhook", strings.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			var req updateWebhookRequest
			if err := decodeBody(r, &req, false); err != nil {
				b.Fatalf("decode: %v", err)
			}
			if in, err := req.toInput(); err != nil || len(in.Events) != 3 {
				b.Fatalf("toInput: %+v, %v", in, err)
			}
		}
	})
}

// BenchmarkEncodeWebhookList: the response of GET …/webhook with 1 and 20
// webhooks, each selecting a few kinds and sending two headers, from the
// resolver's models to the bytes written.
func BenchmarkEncodeWebhookList(b *testing.B) {
	kinds := events.Selectable()
	for _, n := range []int{1, 20} {
		items := make([]*model.Webhook, n)
		for i := range items {
			items[i] = &model.Webhook{
				ID: fmt.Sprintf("whk_%026d", i), URL: "https://hooks.example.com/wagraph", DisplayName: "CRM", Enabled: true,
				Events:    []model.EventKind{model.EventKind(kinds[0].Enum()), model.EventKind(kinds[1].Enum()), model.EventKind(kinds[5].Enum())},
				Headers:   []*model.Header{{Name: "Authorization", Value: "Bearer abc123"}, {Name: "X-Tenant", Value: "acme"}},
				CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), SessionID: "ses_01JGZ8Q6ZK3VY5R0M8T2W4N6P9",
			}
		}
		// by_hand is what listWebhooks writes; reflection is the same
		// answer through writeJSON (encoding/json), as it was written
		// before, for comparison.
		for _, enc := range []struct {
			name  string
			write func(http.ResponseWriter, webhookPage)
		}{
			{"by_hand", writeWebhookPage},
			{"reflection", func(w http.ResponseWriter, out webhookPage) { writeJSON(w, 200, out) }},
		} {
			b.Run(fmt.Sprintf("webhooks=%d/%s", n, enc.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					out := webhookPage{Status: "success", Data: make([]webhookJSON, len(items)), Page: "1", PageSize: "20", Total: n}
					for i, m := range items {
						out.Data[i] = toWebhookJSON(m)
					}
					w := httptest.NewRecorder()
					enc.write(w, out)
					if w.Code != 200 {
						b.Fatalf("status %d: %s", w.Code, w.Body)
					}
				}
			})
		}
	}
}

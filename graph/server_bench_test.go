package graph_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
)

// BenchmarkGraphQL: one operation posted to /graphql of a whole server
// (httptest on loopback, a real SQLite, the admin token, a session linked
// to the in-process simulated network), from the request to the last byte
// of the answer: the token check, the document guard (a repeated document
// is found in its cache), gqlgen's execution and the resolvers. sendText
// is a real send: whatsmeow encrypts it and the simulated network accepts
// it before the answer.
func BenchmarkGraphQL(b *testing.B) {
	s := apptest.StartSandbox(b)
	sess := s.LinkSession(b, "4915550040001")
	ops := []struct {
		name  string
		query string
		vars  map[string]any
	}{
		{"viewer", `{ viewer { user { id } } }`, nil},
		{"sendText", `mutation($s: ID!, $in: SendTextInput!) { sendText(sessionId: $s, input: $in) { messageId timestamp } }`,
			map[string]any{"s": sess.ID, "in": map[string]any{"number": "4915550040002", "text": "Bis morgen um zehn am Bahnhof?"}}},
	}
	for _, op := range ops {
		body, err := json.Marshal(map[string]any{"query": op.query, "variables": op.vars})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(op.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req, err := http.NewRequest("POST", s.URL+"/graphql", bytes.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", apptest.AdminToken)
				res, err := s.Client().Do(req)
				if err != nil {
					b.Fatal(err)
				}
				out, err := io.ReadAll(res.Body)
				res.Body.Close()
				if err != nil || res.StatusCode != http.StatusOK || bytes.Contains(out, []byte(`"errors"`)) {
					b.Fatalf("%s: %d %s (%v)", op.name, res.StatusCode, out, err)
				}
			}
		})
	}
}

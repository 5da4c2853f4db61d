package restcompat_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/messaging"
	"github.com/wagraph/wagraph/restcompat"
)

// TestSendKindRoutes: every kind of send of internal/messaging's table has
// its REST route in the served OpenAPI document, named after its mutation.
func TestSendKindRoutes(t *testing.T) {
	rec := httptest.NewRecorder()
	restcompat.OpenAPI().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/openapi.json", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET openapi.json: %d", rec.Code)
	}
	// A path item holds its operations by method, and may hold other keys
	// (parameters, summary): each is decoded when it is the one looked for.
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range messaging.KindTable() {
		method, path, _ := strings.Cut(k.Route, " ")
		raw, ok := doc.Paths[path][strings.ToLower(method)]
		var op struct {
			OperationID string `json:"operationId"`
		}
		if ok {
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatalf("%s: %v", k.Route, err)
			}
		}
		switch {
		case !ok:
			t.Errorf("kind %s: the OpenAPI document has no %s %s", k.Name, method, path)
		case op.OperationID != k.Mutation:
			t.Errorf("kind %s: %s is operation %q, want %q (its mutation)", k.Name, k.Route, op.OperationID, k.Mutation)
		}
	}
}

// TestKeyedSendRoutes: every route that answers a send's result is one of
// internal/messaging's KeyedSends, named after its mutation, and every one
// of those takes the Idempotency-Key header: an operation that sends
// cannot be added without honouring the key.
func TestKeyedSendRoutes(t *testing.T) {
	rec := httptest.NewRecorder()
	restcompat.OpenAPI().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/openapi.json", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET openapi.json: %d", rec.Code)
	}
	type operation struct {
		OperationID string `json:"operationId"`
		Parameters  []struct {
			Ref string `json:"$ref"`
		} `json:"parameters"`
		Responses map[string]struct {
			Content map[string]struct {
				Schema struct {
					Properties map[string]struct {
						Ref string `json:"$ref"`
					} `json:"properties"`
				} `json:"schema"`
			} `json:"content"`
		} `json:"responses"`
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	keyed := map[string]string{} // route → mutation
	for _, k := range messaging.KeyedSends() {
		keyed[k.Route] = k.Mutation
	}
	seen := map[string]bool{}
	for path, item := range doc.Paths {
		for method, raw := range item {
			var op operation
			if json.Unmarshal(raw, &op) != nil || op.OperationID == "" {
				continue // not an operation (parameters, summary)
			}
			route := strings.ToUpper(method) + " " + path
			sends := op.Responses["200"].Content["application/json"].Schema.Properties["data"].Ref == "#/components/schemas/SendResult"
			mutation, listed := keyed[route]
			switch {
			case sends && !listed:
				t.Errorf("%s (%s) answers a send's result but is not in messaging.KeyedSends: it must honour an idempotency key", route, op.OperationID)
			case listed && op.OperationID != mutation:
				t.Errorf("%s is operation %q, want %q (its mutation)", route, op.OperationID, mutation)
			}
			if !listed {
				continue
			}
			seen[route] = true
			takesKey := false
			for _, p := range op.Parameters {
				takesKey = takesKey || p.Ref == "#/components/parameters/idempotencyKey"
			}
			if !takesKey {
				t.Errorf("%s (%s) sends a message but takes no Idempotency-Key header", route, op.OperationID)
			}
		}
	}
	for route := range keyed {
		if !seen[route] {
			t.Errorf("messaging.KeyedSends names %s, which the OpenAPI document lacks", route)
		}
	}
}

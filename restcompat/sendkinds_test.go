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

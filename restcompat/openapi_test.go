package restcompat_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/graph"
	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/restcompat"
)

// openAPI is the served description, parsed. The test reads it through the
// handler, so what is checked is what clients get.
type openAPI = map[string]any

var httpMethods = []string{"get", "put", "post", "delete", "patch", "head", "options", "trace"}

func loadOpenAPI(t *testing.T) openAPI {
	t.Helper()
	rec := httptest.NewRecorder()
	restcompat.OpenAPI().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/openapi.json", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET openapi.json: status %d, want 200", rec.Code)
	}
	var doc openAPI
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatalf("openapi.json is not valid JSON: %v", err)
	}
	return doc
}

// operation is one (method, path) of the document.
type operation struct {
	method, path string // method in upper case, path relative to the server URL
	pathItem, op map[string]any
}

func (o operation) String() string { return o.method + " " + o.path }

func operations(t *testing.T, doc openAPI) []operation {
	t.Helper()
	paths, ok := doc["paths"].(map[string]any)
	if !ok || len(paths) == 0 {
		t.Fatal("the document has no paths")
	}
	var out []operation
	for path, item := range paths {
		pi, ok := item.(map[string]any)
		if !ok {
			t.Fatalf("path %s is not an object", path)
		}
		for _, m := range httpMethods {
			if op, ok := pi[m].(map[string]any); ok {
				out = append(out, operation{method: strings.ToUpper(m), path: path, pathItem: pi, op: op})
			}
		}
	}
	slices.SortFunc(out, func(a, b operation) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// resolve follows $ref (local JSON pointers only) until it reaches a node
// without one.
func resolve(t *testing.T, doc openAPI, node any) map[string]any {
	t.Helper()
	for range 16 {
		m, ok := node.(map[string]any)
		if !ok {
			t.Fatalf("expected an object, got %T", node)
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		target, err := pointer(doc, ref)
		if err != nil {
			t.Fatal(err)
		}
		node = target
	}
	t.Fatal("$ref chain longer than 16")
	return nil
}

// pointer resolves a local reference "#/a/b" in doc.
func pointer(doc openAPI, ref string) (any, error) {
	rest, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil, fmt.Errorf("$ref %q is not local (#/…)", ref)
	}
	var node any = doc
	for _, tok := range strings.Split(rest, "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch n := node.(type) {
		case map[string]any:
			next, ok := n[tok]
			if !ok {
				return nil, fmt.Errorf("$ref %q: no %q", ref, tok)
			}
			node = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n) {
				return nil, fmt.Errorf("$ref %q: no index %q", ref, tok)
			}
			node = n[i]
		default:
			return nil, fmt.Errorf("$ref %q: %q is inside a %T", ref, tok, node)
		}
	}
	return node, nil
}

func TestOpenAPIHeader(t *testing.T) {
	doc := loadOpenAPI(t)
	if v := doc["openapi"]; v != "3.1.0" {
		t.Errorf("openapi = %v, want 3.1.0", v)
	}
	info, _ := doc["info"].(map[string]any)
	if info["title"] != "wagraph" || info["version"] == nil || info["version"] == "" {
		t.Errorf("info = %v, want title wagraph and a version", info)
	}
	servers, _ := doc["servers"].([]any)
	if len(servers) != 1 || servers[0].(map[string]any)["url"] != restcompat.Prefix {
		t.Errorf("servers = %v, want one with url %s", servers, restcompat.Prefix)
	}
	comps, _ := doc["components"].(map[string]any)
	schemes, _ := comps["securitySchemes"].(map[string]any)
	if len(schemes) != 1 {
		t.Fatalf("securitySchemes = %v, want exactly one", schemes)
	}
	var name string
	for n, s := range schemes {
		name = n
		sc := s.(map[string]any)
		if sc["type"] != "apiKey" || sc["in"] != "header" || sc["name"] != "Authorization" {
			t.Errorf("security scheme %s = %v, want apiKey in header Authorization", n, sc)
		}
		if d, _ := sc["description"].(string); !strings.Contains(d, "Bearer") {
			t.Errorf("security scheme %s does not say the Bearer prefix is optional: %q", n, d)
		}
	}
	sec, _ := doc["security"].([]any)
	if len(sec) != 1 {
		t.Fatalf("security = %v, want the one scheme applied to every operation", sec)
	}
	if _, ok := sec[0].(map[string]any)[name]; !ok {
		t.Errorf("security = %v does not name the scheme %s", sec, name)
	}
}

// TestOpenAPIRoutes holds the document to the route table in both
// directions: every served route is described, nothing described is not
// served.
func TestOpenAPIRoutes(t *testing.T) {
	doc := loadOpenAPI(t)
	served := restcompat.New(restcompat.Deps{Resolvers: &graph.Resolver{}}, slog.New(slog.DiscardHandler)).Patterns()
	if len(served) == 0 {
		t.Fatal("the handler serves no routes")
	}
	var described []string
	for _, o := range operations(t, doc) {
		described = append(described, o.String())
	}
	for _, p := range served {
		if !slices.Contains(described, p) {
			t.Errorf("route %q is served but not in openapi.json", p)
		}
	}
	for _, d := range described {
		if !slices.Contains(served, d) {
			t.Errorf("openapi.json describes %q, which is not served", d)
		}
	}
}

var pathParam = regexp.MustCompile(`\{([^}]+)\}`)

func TestOpenAPIOperations(t *testing.T) {
	doc := loadOpenAPI(t)
	seen := map[string]string{}
	for _, o := range operations(t, doc) {
		t.Run(o.String(), func(t *testing.T) {
			id, _ := o.op["operationId"].(string)
			if id == "" {
				t.Error("no operationId")
			} else if prev, dup := seen[id]; dup {
				t.Errorf("operationId %q is also used by %s", id, prev)
			}
			seen[id] = o.String()
			if s, _ := o.op["summary"].(string); s == "" {
				t.Error("no summary")
			}

			// Path parameters: each {name} of the path declared, and
			// nothing declared in the path that is not in it.
			declared := map[string]bool{}
			for _, list := range []any{o.pathItem["parameters"], o.op["parameters"]} {
				ps, _ := list.([]any)
				for _, p := range ps {
					pm := resolve(t, doc, p)
					if pm["in"] != "path" {
						continue
					}
					name, _ := pm["name"].(string)
					if pm["required"] != true {
						t.Errorf("path parameter %s is not required", name)
					}
					declared[name] = true
				}
			}
			inPath := map[string]bool{}
			for _, m := range pathParam.FindAllStringSubmatch(o.path, -1) {
				inPath[m[1]] = true
				if !declared[m[1]] {
					t.Errorf("path parameter {%s} is not declared", m[1])
				}
			}
			for name := range declared {
				if !inPath[name] {
					t.Errorf("path parameter %s is declared but not in the path", name)
				}
			}

			responses, _ := o.op["responses"].(map[string]any)
			var has2xx bool
			for code, r := range responses {
				n, err := strconv.Atoi(code)
				if err != nil {
					t.Errorf("response %q is not a status code", code)
					continue
				}
				rm := resolve(t, doc, r)
				if d, _ := rm["description"].(string); d == "" {
					t.Errorf("response %s has no description", code)
				}
				if n >= 200 && n < 300 {
					has2xx = true
					if content, _ := rm["content"].(map[string]any); len(content) == 0 {
						t.Errorf("success %s has no content", code)
					}
					continue
				}
				content, _ := rm["content"].(map[string]any)
				mt, _ := content["application/json"].(map[string]any)
				if ref, _ := mt["schema"].(map[string]any)["$ref"].(string); ref != "#/components/schemas/Failure" {
					t.Errorf("response %s is not the Failure envelope (schema %v)", code, mt["schema"])
				}
			}
			if !has2xx {
				t.Error("no 2xx response")
			}
			for _, code := range []string{"401", "429", "500"} {
				if _, ok := responses[code]; !ok {
					t.Errorf("no %s response (every operation is authenticated, rate limited and can fail)", code)
				}
			}
			if strings.Contains(o.path, "{sessionId}") {
				if _, ok := responses["404"]; !ok {
					t.Error("names a session but has no 404 response")
				}
			}

			body, hasBody := o.op["requestBody"].(map[string]any)
			if !hasBody {
				return
			}
			if o.method != http.MethodPost && o.method != http.MethodPut {
				t.Errorf("a %s with a request body", o.method)
			}
			for _, code := range []string{"400", "413", "415"} {
				if _, ok := responses[code]; !ok {
					t.Errorf("takes a body but has no %s response", code)
				}
			}
			content, _ := resolve(t, doc, body)["content"].(map[string]any)
			mt, ok := content["application/json"].(map[string]any)
			if !ok || len(content) != 1 {
				t.Fatalf("request body content %v, want only application/json", content)
			}
			schema := resolve(t, doc, mt["schema"])
			// A body of several shapes is a choice of whole objects
			// (generators make a union of them), each closed.
			shapes := []map[string]any{schema}
			if alts, ok := schema["anyOf"].([]any); ok {
				shapes = shapes[:0]
				for _, a := range alts {
					shapes = append(shapes, resolve(t, doc, a))
				}
			}
			for _, shape := range shapes {
				switch shape["type"] {
				case "object":
					if shape["additionalProperties"] != false {
						t.Errorf("body schema has additionalProperties %v, want false (unknown fields are 400)", shape["additionalProperties"])
					}
				case "array":
				default:
					t.Errorf("body schema type %v, want object or array", shape["type"])
				}
				checkClosed(t, doc, shape, "body", map[string]bool{})
			}
		})
	}
}

// checkClosed walks a request schema: every object in it either is closed
// (additionalProperties false) or is a map (additionalProperties a schema),
// because the server refuses unknown fields at any depth.
func checkClosed(t *testing.T, doc openAPI, schema map[string]any, at string, seen map[string]bool) {
	t.Helper()
	if ref, ok := schema["$ref"].(string); ok {
		if seen[ref] {
			return
		}
		seen[ref] = true
		checkClosed(t, doc, resolve(t, doc, schema), at, seen)
		return
	}
	if schema["type"] == "object" {
		switch ap := schema["additionalProperties"].(type) {
		case bool:
			if ap {
				t.Errorf("%s: additionalProperties true in a request schema", at)
			}
		case map[string]any:
			checkClosed(t, doc, ap, at+".*", seen)
		default:
			t.Errorf("%s: object without additionalProperties (unknown fields are 400)", at)
		}
	}
	props, _ := schema["properties"].(map[string]any)
	for name, p := range props {
		checkClosed(t, doc, p.(map[string]any), at+"."+name, seen)
	}
	if items, ok := schema["items"].(map[string]any); ok {
		checkClosed(t, doc, items, at+"[]", seen)
	}
}

// TestOpenAPIRefs resolves every $ref of the document.
func TestOpenAPIRefs(t *testing.T) {
	doc := loadOpenAPI(t)
	var n int
	var walk func(node any, at string)
	walk = func(node any, at string) {
		switch v := node.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				n++
				if _, err := pointer(doc, ref); err != nil {
					t.Errorf("%s: %v", at, err)
				}
			}
			for k, c := range v {
				walk(c, at+"/"+k)
			}
		case []any:
			for i, c := range v {
				walk(c, at+"/"+strconv.Itoa(i))
			}
		}
	}
	walk(doc, "#")
	if n == 0 {
		t.Error("the document has no $ref at all")
	}
}

// TestOpenAPIWebhookEvents holds the event keys of the document to the
// event table: responses carry all 27, requests may name any of them.
func TestOpenAPIWebhookEvents(t *testing.T) {
	doc := loadOpenAPI(t)
	var want []string
	for _, k := range events.Selectable() {
		want = append(want, string(k))
	}
	slices.Sort(want)
	for _, name := range []string{"WebhookEvents", "WebhookEventsInput"} {
		s, err := pointer(doc, "#/components/schemas/"+name)
		if err != nil {
			t.Fatal(err)
		}
		schema := s.(map[string]any)
		props, _ := schema["properties"].(map[string]any)
		var got []string
		for k, p := range props {
			got = append(got, k)
			if p.(map[string]any)["type"] != "boolean" {
				t.Errorf("%s.%s is not a boolean", name, k)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s keys = %v,\nwant the %d selectable kinds %v", name, got, len(want), want)
		}
		if schema["additionalProperties"] != false {
			t.Errorf("%s allows other keys", name)
		}
	}
	s, _ := pointer(doc, "#/components/schemas/WebhookEvents/required")
	req, _ := s.([]any)
	if len(req) != len(want) {
		t.Errorf("WebhookEvents requires %d keys, want all %d", len(req), len(want))
	}
}

// TestOpenAPIGenerated: the document served (the embedded openapi.json)
// is the one the route table generates now. A body or answer type changed
// without make generate fails here (and make check-generated fails on the
// commit).
func TestOpenAPIGenerated(t *testing.T) {
	want, err := restcompat.Document()
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	restcompat.OpenAPI().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/openapi.json", nil))
	got := rec.Body.String()
	if got == string(want) {
		return
	}
	served, generated := strings.Split(got, "\n"), strings.Split(string(want), "\n")
	for i := range min(len(served), len(generated)) {
		if served[i] != generated[i] {
			t.Fatalf("the served openapi.json is not what the route table generates: run make generate. First difference, line %d:\nserved:    %s\ngenerated: %s", i+1, served[i], generated[i])
		}
	}
	t.Fatalf("the served openapi.json is not what the route table generates: run make generate (%d lines served, %d generated)", len(served), len(generated))
}

func TestOpenAPIHandler(t *testing.T) {
	file, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		method string
		status int
		body   string
	}{
		{http.MethodGet, http.StatusOK, string(file)},
		{http.MethodPost, http.StatusMethodNotAllowed, ""},
		{http.MethodDelete, http.StatusMethodNotAllowed, ""},
	}
	srv := httptest.NewServer(restcompat.OpenAPI())
	defer srv.Close()
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, srv.URL+"/api/v1/openapi.json", nil)
			if err != nil {
				t.Fatal(err)
			}
			// No Authorization header: the description is public.
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var got strings.Builder
			if _, err := io.Copy(&got, res.Body); err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", res.StatusCode, tt.status, got.String())
			}
			if ct := res.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q, want application/json", ct)
			}
			if tt.status == http.StatusOK {
				if got.String() != tt.body {
					t.Error("answer differs from openapi.json")
				}
				return
			}
			var f struct{ Status, Message string }
			if err := json.Unmarshal([]byte(got.String()), &f); err != nil || f.Status != "failed" || f.Message == "" {
				t.Errorf("answer %q is not the failure envelope", got.String())
			}
			if allow := res.Header.Get("Allow"); allow != "GET, HEAD" {
				t.Errorf("Allow %q, want GET, HEAD", allow)
			}
		})
	}
}

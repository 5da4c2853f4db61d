package restcompat_test

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// bareSuccess names the seed operations whose success is not the
// {status, data} envelope (rest.md): their shape is frozen.
var bareSuccess = map[string]bool{"logout": true, "privacy": true, "demoteGroupParticipants": true,
	"addGroupParticipants": true, "removeGroupParticipants": true, "promoteGroupParticipants": true,
	"approveGroupJoinRequests": true, "rejectGroupJoinRequests": true}

// TestOpenAPIDocumented: every operation says what it does and shows an
// example of its request and of its answer, and every success envelope
// requires its data (a generated client must not have to test for it).
func TestOpenAPIDocumented(t *testing.T) {
	doc := loadOpenAPI(t)
	for _, o := range operations(t, doc) {
		t.Run(o.String(), func(t *testing.T) {
			id, _ := o.op["operationId"].(string)
			if d, _ := o.op["description"].(string); len(d) < 20 {
				t.Errorf("description %q: say what the operation does", d)
			}
			if body, ok := o.op["requestBody"].(map[string]any); ok {
				mt := resolve(t, doc, body)["content"].(map[string]any)["application/json"].(map[string]any)
				if !hasExample(mt) {
					t.Error("the request body has no example")
				}
			} else {
				// Without a body, the request is its path: each path
				// parameter shows an example value.
				params, _ := o.op["parameters"].([]any)
				for _, p := range params {
					pm := resolve(t, doc, p)
					if pm["in"] == "path" && pm["example"] == nil {
						t.Errorf("path parameter %v has no example", pm["name"])
					}
				}
			}
			responses, _ := o.op["responses"].(map[string]any)
			for code, r := range responses {
				if !strings.HasPrefix(code, "2") {
					continue
				}
				mt, ok := resolve(t, doc, r)["content"].(map[string]any)["application/json"].(map[string]any)
				if !ok {
					continue // the media route's bytes
				}
				if !hasExample(mt) {
					t.Errorf("response %s has no example", code)
				}
				schema := resolve(t, doc, mt["schema"])
				required, _ := schema["required"].([]any)
				props, _ := schema["properties"].(map[string]any)
				if bareSuccess[id] {
					if slices.Contains(required, any("data")) {
						t.Errorf("response %s: a bare seed answer with data", code)
					}
					continue
				}
				if schema["type"] != "object" || !slices.Contains(required, any("status")) || !slices.Contains(required, any("data")) || props["data"] == nil {
					t.Errorf("response %s: schema %v, want an object requiring status and data", code, schema)
				}
			}
		})
	}
}

func hasExample(mt map[string]any) bool {
	if mt["example"] != nil {
		return true
	}
	ex, _ := mt["examples"].(map[string]any)
	return len(ex) > 0
}

// TestOpenAPIWebhookURL holds the schema's rule for a webhook's url to the
// server's: what the server refuses with 400 (testdata/golden/bad_url_*)
// the pattern refuses too, what it takes the pattern takes.
func TestOpenAPIWebhookURL(t *testing.T) {
	doc := loadOpenAPI(t)
	tests := []struct {
		url  string
		want bool
	}{
		{"https://example.com/hooks/wa", true},
		{"http://hooks.example.org:8443/in?x=1", true},
		{"HTTPS://Example.com/h", true},
		{"ftp://x", false},
		{"javascript:alert(1)", false},
		{"/relative/hook", false},
		{"example.com/hook", false},
		{"https://example.com/hook#part", false},
		{"https://exa mple.com/hook", false},
		{"https:///no-host", false},
		{"", false},
	}
	for _, name := range []string{"CreateWebhookRequest", "UpdateWebhookRequest"} {
		s, err := pointer(doc, "#/components/schemas/"+name+"/properties/url")
		if err != nil {
			t.Fatal(err)
		}
		url := s.(map[string]any)
		pattern, _ := url["pattern"].(string)
		re, err := regexp.Compile(pattern)
		if err != nil {
			t.Fatalf("%s.url pattern %q: %v", name, pattern, err)
		}
		if url["maxLength"] != 2048.0 {
			t.Errorf("%s.url maxLength %v, want 2048", name, url["maxLength"])
		}
		for _, d := range []string{"http", "fragment", "--allow-private-urls"} {
			if desc, _ := url["description"].(string); !strings.Contains(desc, d) {
				t.Errorf("%s.url description does not mention %s: %q", name, d, desc)
			}
		}
		for _, tt := range tests {
			if got := re.MatchString(tt.url) && len(tt.url) > 0; got != tt.want {
				t.Errorf("%s.url pattern on %q: %v, want %v", name, tt.url, got, tt.want)
			}
		}
	}
}

// TestOpenAPILocation: the location body is a choice of two whole objects
// (coordinates or address), with 64-bit coordinates in their ranges.
func TestOpenAPILocation(t *testing.T) {
	doc := loadOpenAPI(t)
	var op map[string]any
	for _, o := range operations(t, doc) {
		if o.String() == http.MethodPost+" /session/{sessionId}/message/location" {
			op = o.op
		}
	}
	body := resolve(t, doc, op["requestBody"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"])
	alts, _ := body["anyOf"].([]any)
	if len(alts) != 2 {
		t.Fatalf("location body %v, want anyOf two objects", body)
	}
	wantRequired := [][]any{{"number", "latitude", "longitude"}, {"number", "address"}}
	for i, a := range alts {
		s := resolve(t, doc, a)
		if s["type"] != "object" || s["additionalProperties"] != false || !slices.Equal(s["required"].([]any), wantRequired[i]) {
			t.Errorf("shape %d: %v, want a closed object requiring %v", i, s, wantRequired[i])
		}
		props := s["properties"].(map[string]any)
		for name, lim := range map[string]float64{"latitude": 90, "longitude": 180} {
			p, ok := props[name].(map[string]any)
			if !ok {
				continue // the address shape has no coordinates
			}
			if p["type"] != "number" || p["format"] != "double" || p["minimum"] != -lim || p["maximum"] != lim {
				t.Errorf("shape %d: %s = %v, want a double in [-%v, %v]", i, name, p, lim, lim)
			}
		}
	}
}

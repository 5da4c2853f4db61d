package textrule

import (
	"encoding/json"
	"testing"

	"github.com/wagraph/wagraph/internal/fault"
)

func TestClean(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"plain", "plain"},
		{"\x00", "\uFFFD"},
		{"a\x00b\x00", "a\uFFFDb\uFFFD"},
	} {
		if got := Clean(tc.in); got != tc.want {
			t.Errorf("Clean(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCleanJSON(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a":"x"}`, `{"a":"x"}`},
		{`{"a":"x\u0000y"}`, `{"a":"x\ufffdy"}`},
		{`{"a\u0000":"\u0000\u0000"}`, `{"a\ufffd":"\ufffd\ufffd"}`},
		// An escaped backslash then "u0000" is that text, not a NUL.
		{`{"a":"\\u0000"}`, `{"a":"\\u0000"}`},
		{`{"a":"\\\u0000"}`, `{"a":"\\\ufffd"}`},
		{`{"a":"\n\u0001"}`, `{"a":"\n\u0001"}`},
		{"\"a\x00\"", "\"a\uFFFD\""},
	} {
		if got := string(CleanJSON([]byte(tc.in))); got != tc.want {
			t.Errorf("CleanJSON(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

type inner struct {
	Name   string
	Bytes  []byte
	hidden string
}

type named string

type outer struct {
	Text  string
	Typed named
	Ptr   *string
	In    *inner
	List  []inner
	Arr   [2]string
	Map   map[string]string
	Any   any
	Raw   json.RawMessage
}

func TestCleanAll(t *testing.T) {
	p := "p\x00"
	v := &outer{
		Text: "t\x00", Typed: "n\x00", Ptr: &p,
		In:   &inner{Name: "i\x00", Bytes: []byte{0, 1}, hidden: "h\x00"},
		List: []inner{{Name: "l\x00"}},
		Arr:  [2]string{"a\x00", "b"},
		Map:  map[string]string{"k\x00": "v\x00", "ok": "fine"},
		Any:  &inner{Name: "any\x00"},
		Raw:  json.RawMessage(`{"r":"\u0000"}`),
	}
	CleanAll(v)
	const r = "\uFFFD"
	checks := []struct{ got, want string }{
		{v.Text, "t" + r}, {string(v.Typed), "n" + r}, {p, "p" + r},
		{v.In.Name, "i" + r}, {v.In.hidden, "h\x00"}, {string(v.In.Bytes), "\x00\x01"},
		{v.List[0].Name, "l" + r}, {v.Arr[0], "a" + r},
		{v.Map["k"+r], "v" + r}, {v.Map["ok"], "fine"},
		{v.Any.(*inner).Name, "any" + r}, {string(v.Raw), `{"r":"\ufffd"}`},
	}
	for i, c := range checks {
		if c.got != c.want {
			t.Errorf("check %d: %q, want %q", i, c.got, c.want)
		}
	}
	if _, ok := v.Map["k\x00"]; ok || len(v.Map) != 2 {
		t.Errorf("map keys %q, want the NUL key replaced", v.Map)
	}
	CleanAll(nil) // nothing to clean, no panic
	CleanAll((*outer)(nil))
}

func TestCheck(t *testing.T) {
	if err := Check("input.text", "fine"); err != nil {
		t.Errorf("Check of a clean text: %v", err)
	}
	err := Check("input.text", "a\x00b")
	f := fault.From(err)
	if f == nil || f.Code != fault.Invalid || f.Field != "input.text" || f.Message != `input.text must not contain NUL (\u0000)` {
		t.Errorf("Check: %#v, want an invalid input.text", err)
	}
}

// TestCheckValue: a NUL anywhere in a decoded argument is refused with the
// path to it, keys included; clean values pass.
func TestCheckValue(t *testing.T) {
	tests := []struct {
		name  string
		path  string
		v     any
		field string // "" when clean
	}{
		{"clean", "input", map[string]any{"text": "hi", "n": 1.0, "list": []any{"a", true}}, ""},
		{"string", "text", "a\x00", "text"},
		{"list item", "numbers", []any{"49", "4\x00"}, "numbers[1]"},
		{"nested", "input", map[string]any{"a": "ok", "contact": map[string]any{"name": "x\x00"}}, "input.contact.name"},
		{"top level", "", map[string]any{"to": "4\x00"}, "to"},
		{"key", "input", map[string]any{"k\x00": "v"}, "input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckValue(tt.path, tt.v)
			f := fault.From(err)
			switch {
			case tt.field == "" && err != nil:
				t.Errorf("CheckValue: %v, want nil", err)
			case tt.field != "" && (f == nil || f.Code != fault.Invalid || f.Field != tt.field):
				t.Errorf("CheckValue: %#v, want an invalid %s", err, tt.field)
			}
		})
	}
}

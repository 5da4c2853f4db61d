package restcompat

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/wagraph/wagraph/graph/model"
)

// encodeLikeWriteJSON is what writeJSON writes for v.
func encodeLikeWriteJSON(t testing.TB, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// oddStrings are strings every escape of encoding/json applies to.
var oddStrings = []string{
	"", "plain", `quote " and backslash \`, "<&> stay", "tab\tnl\nrc\r\b\f", "\x00\x01\x1f\x7f",
	"ünïcødé ✓ 😀", "line\u2028para\u2029", "bad \xff\xfe utf-8 \xe2\x82", "/slash/",
}

// TestWebhookPageBytes checks that the hand-written list answer is byte for
// byte what encoding/json writes for the same page.
func TestWebhookPageBytes(t *testing.T) {
	hook := func(s string, events []model.EventKind, headers map[string]string) webhookJSON {
		return webhookJSON{ID: "w-" + s, URL: "https://example.com/" + s, DisplayName: s, Enabled: len(s)%2 == 0,
			Events: webhookEvents(events), Headers: headers, CreatedAt: "2026-11-24T01:02:03.000Z", WaSessionID: s}
	}
	all := make([]model.EventKind, 0, len(selectionKeys))
	for _, k := range selectionKeys {
		all = append(all, k.enum)
	}
	pages := []webhookPage{
		{Status: "success", Data: []webhookJSON{}, Page: "1", PageSize: "20", Total: 0},
		{Status: "success", Data: []webhookJSON{hook("one", nil, map[string]string{})}, Page: "1", PageSize: "20", Total: 1},
		{Status: "success", Data: []webhookJSON{
			hook("all", all, map[string]string{"X-B": "2", "X-A": "1", "x-a": "low"}),
			hook("some", all[3:7], nil),
		}, Page: "2", PageSize: "2", Total: -5},
	}
	for _, s := range oddStrings {
		pages = append(pages, webhookPage{Status: s, Data: []webhookJSON{hook(s, all[:1], map[string]string{s: s, "k": s})}, Page: s, PageSize: s, Total: 7})
	}
	for i, p := range pages {
		want := encodeLikeWriteJSON(t, p)
		if got := p.appendJSON(nil); !bytes.Equal(got, want) {
			t.Errorf("page %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range oddStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := encodeLikeWriteJSON(t, s)
		want = want[:len(want)-1] // the encoder's newline
		if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("appendJSONString(%q) = %s, want %s", s, got, want)
		}
	})
}

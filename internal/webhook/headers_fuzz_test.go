package webhook

import (
	"bufio"
	"bytes"
	"net/http"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/http/httpguts"
)

// FuzzValidateHeaders: whatever two custom headers a caller gives, the
// registry's check never panics; what it accepts is a valid HTTP field name
// and value (httpguts, the rules net/http sends by), within the limits,
// once per name whatever its case, none the delivery sets itself, and it
// reaches the receiver as given, save the blanks HTTP trims around a value.
func FuzzValidateHeaders(f *testing.F) {
	for _, h := range [][4]string{
		{"X-Api-Key", "secret", "Authorization", "Bearer abc"},
		{"X-A", "1", "x-a", "2"},
		{"Webhook-Signature", "v1,abc", "X-B", "b"},
		{"Content-Type", "text/plain", "Host", "evil"},
		{"X-Tab", "a\tb", "X-Nl", "a\r\nInjected: 1"},
		{"X-Obs", "caf\xc3\xa9 \xff", "X Space", "v"},
		{"Trailer", "X-A", "Te", "gzip"},
		{"X-Empty", "", "X-Blank", "  padded  "},
	} {
		f.Add(h[0], h[1], h[2], h[3])
	}
	f.Fuzz(func(t *testing.T, n1, v1, n2, v2 string) {
		for _, hs := range [][]Header{{{n1, v1}}, {{n1, v1}, {n2, v2}}} {
			if validateHeaders(hs) != nil {
				continue
			}
			seen := map[string]bool{}
			for _, h := range hs {
				switch lower := strings.ToLower(h.Name); {
				case !httpguts.ValidHeaderFieldName(h.Name) || !httpguts.ValidHeaderFieldValue(h.Value):
					t.Fatalf("accepted %q: %q, which is no valid HTTP header", h.Name, h.Value)
				case len(h.Name) > MaxHeaderNameLen || len(h.Value) > MaxHeaderValueLen:
					t.Fatalf("accepted %q (%d bytes of value) over the limits", h.Name, len(h.Value))
				case seen[lower]:
					t.Fatalf("accepted %q twice", h.Name)
				case slices.Contains([]string{"webhook-id", "webhook-timestamp", "webhook-signature", "content-type", "content-length", "host"}, lower):
					t.Fatalf("accepted %q, which the delivery sets itself", h.Name)
				case slices.Contains([]string{"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"}, lower):
					// HTTP/2 (https deliveries) drops or refuses them, which
					// the HTTP/1.1 round trip below does not show.
					t.Fatalf("accepted %q, which is connection-specific (RFC 9110 7.6.1)", h.Name)
				}
				seen[strings.ToLower(h.Name)] = true
			}
			checkArrives(t, hs)
		}
	})
}

// checkArrives sends hs with a request as net/http writes it and reads
// them back as a receiver would.
func checkArrives(t *testing.T, hs []Header) {
	t.Helper()
	req, err := http.NewRequest("POST", "http://receiver.example/hook", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hs {
		req.Header.Set(h.Name, h.Value)
	}
	var wire bytes.Buffer
	if err := req.Write(&wire); err != nil {
		t.Fatalf("accepted %q, but no request can carry it: %v", hs, err)
	}
	got, err := http.ReadRequest(bufio.NewReader(&wire))
	if err != nil {
		t.Fatalf("accepted %q, but the request carrying it cannot be read: %v", hs, err)
	}
	for _, h := range hs {
		if want := strings.Trim(h.Value, " \t"); got.Header.Get(h.Name) != want || len(got.Header.Values(h.Name)) != 1 {
			t.Fatalf("accepted %q: %q, but the receiver gets %q", h.Name, h.Value, got.Header.Values(h.Name))
		}
	}
}

package restcompat

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/fault"
)

// FuzzDecodeBody feeds one body to the decoder of each request type the
// handlers decode (a send, a webhook, a session, a group, a list of
// numbers). Whatever the body, the decoder never panics; a refusal is a
// BAD_USER_INPUT fault with a short message; an accepted body encodes and
// decodes again to the same value.
func FuzzDecodeBody(f *testing.F) {
	for _, s := range []string{
		`{"number":"491701234567","text":"hi"}`,
		`{"number":"1","text":"a","mentions":["1@s.whatsapp.net"],"quoted":"ABC","delay":5}`,
		`{"url":"https://example.com/hook","displayName":"x","enabled":true,"events":{"messages.upsert":true},"headers":{"X-A":"1"}}`,
		`{"url":"https://a.com","headers":{"X-A":"1","X-A":"2"}}`,
		`{"Number":"123","text":"hi"}`,
		`{"text":"a\u0000b"}`,
		`{"text":"\ud800"}`,
		`{"text":"\ud83d\ude00"}`,
		`{"delay":1e400}`,
		`["491701234567","491701234568"]`,
		`{"name":"g","participants":["1"]}`,
		`{"events":{"a":{"b":[1,2,{"c":null}]}}}`,
		`{} {}`,
		`null`,
		"{\"text\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkDecode[model.SendTextInput](t, body)
		checkDecode[model.SendLocationInput](t, body)
		checkDecode[model.CreateGroupInput](t, body)
		checkDecode[[]string](t, body)
		checkDecode[struct {
			Name *string `json:"name"`
		}](t, body)
		if req, ok := checkDecode[updateWebhookRequest](t, body); ok {
			if _, err := req.toInput(); err != nil {
				checkRefusal(t, body, err)
			}
		}
	})
}

func checkDecode[T any](t *testing.T, body []byte) (T, bool) {
	t.Helper()
	var v T
	if err := decodeBody(jsonRequest(body), &v, false); err != nil {
		checkRefusal(t, body, err)
		return v, false
	}
	enc, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%T decoded from %q does not encode: %v", v, body, err)
	}
	var again T
	if err := decodeBody(jsonRequest(enc), &again, false); err != nil {
		t.Fatalf("%T: %q decoded, but its encoding %s is refused: %v", v, body, enc, err)
	}
	if enc2, _ := json.Marshal(again); !bytes.Equal(enc, enc2) {
		t.Fatalf("%T does not round-trip: %q gave %s, then %s", v, body, enc, enc2)
	}
	return v, true
}

func checkRefusal(t *testing.T, body []byte, err error) {
	t.Helper()
	f := fault.From(err)
	switch {
	case f == nil:
		t.Fatalf("%q: refusal is no fault: %v", body, err)
	case f.Code != fault.Invalid:
		t.Fatalf("%q: refusal has code %s, want %s: %v", body, f.Code, fault.Invalid, err)
	case f.Message == "" || len(f.Message) > 1024:
		t.Fatalf("%q: refusal message of %d bytes: %.200q", body, len(f.Message), f.Message)
	}
}

func jsonRequest(body []byte) *http.Request {
	r := httptest.NewRequest("POST", "/", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	return r
}

package restcompat_test

import (
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
)

// TestStrictJSON: what encoding/json would quietly accept or repair — a key
// in the wrong case, a duplicate key, NUL, invalid UTF-8, half a surrogate
// pair, a number that does not fit, a far page — is a 400 naming the field
// and the rule, with a short message however large the bad value, and
// nothing is stored.
func TestStrictJSON(t *testing.T) {
	srv := apptest.Start(t, apptest.Config(t))
	admin := apptest.AdminToken
	sid := data(t, srv.REST(t, "POST", "/session", admin, `{"name":"strict"}`))["id"].(string)

	hooks := "/session/" + sid + "/webhook"
	text := "/session/" + sid + "/message/text"
	contact := "/session/" + sid + "/message/contact"
	location := "/session/" + sid + "/message/location"
	// A value far longer than a message may quote, in a body within its
	// route's limit (a webhook's 512 KiB holds two of them).
	mb := 200 << 10
	tests := []struct {
		name, method, path, body string
		field                    string // the field the message must name
		want                     string // a part of the message: the rule
	}{
		{"case_top", "POST", text, `{"Number":"123","text":"hi"}`, "Number", `unknown field "Number"; did you mean "number"? Field names are case-sensitive`},
		{"case_webhook", "POST", hooks, `{"URL":"https://a.com"}`, "URL", `did you mean "url"?`},
		{"case_nested", "POST", contact, `{"number":"1","contact":{"phonenumber":"1","firstName":"a"}}`, "contact.phonenumber", `did you mean "phoneNumber"?`},
		{"case_session", "POST", "/session", `{"Name":"x"}`, "Name", `did you mean "name"?`},
		{"unknown_nested", "POST", contact, `{"number":"1","contact":{"phone":"1"}}`, "contact.phone", "the fields of contact are: phoneNumber, firstName, lastName"},
		{"duplicate_key", "POST", hooks, `{"url":"https://a.com","url":"https://b.com"}`, "url", "url is given twice; each key may appear only once"},
		{"duplicate_key_escaped", "POST", hooks, `{"url":"https://a.com","u\u0072l":"https://b.com"}`, "url", "url is given twice"},
		{"duplicate_key_nested", "POST", hooks, `{"url":"https://a.com","headers":{"X-A":"1","X-A":"2"}}`, "headers.X-A", "headers.X-A is given twice"},
		{"duplicate_key_session", "POST", "/session", `{"name":"a","name":"b"}`, "name", "name is given twice"},
		{"nul_escaped", "POST", hooks, `{"url":"https://a.com","displayName":"a\u0000b"}`, "displayName", `displayName must not contain NUL (\u0000)`},
		{"nul_escaped_header", "POST", hooks, `{"url":"https://a.com","headers":{"X-A":"1\u0000"}}`, "headers.X-A", "must not contain NUL"},
		{"nul_escaped_key", "POST", hooks, `{"url":"https://a.com","headers":{"X-\u0000":"1"}}`, "a key of headers", "must not contain NUL"},
		{"nul_escaped_session", "POST", "/session", `{"name":"a\u0000"}`, "name", "name must not contain NUL"},
		{"nul_spaced", "POST", hooks, "{ \"url\" : \"https://a.com\" ,\n \"displayName\" :\t\"\\u0000\" }", "displayName", "displayName must not contain NUL"},
		{"nul_raw", "POST", hooks, "{\"url\":\"https://a.com\",\"displayName\":\"a\x00b\"}", "", "malformed JSON at byte 40: invalid character '\\x00' in string literal"},
		{"utf8_invalid", "POST", hooks, "{\"url\":\"https://a.com\",\"displayName\":\"a\xffb\"}", "displayName", "displayName must be valid UTF-8"},
		{"utf8_overlong", "POST", hooks, "{\"url\":\"https://a.com/\xc0\xaf\"}", "url", "url must be valid UTF-8"},
		{"utf8_invalid_header", "POST", hooks, "{\"url\":\"https://a.com\",\"headers\":{\"X-A\":\"\xed\xa0\x80\"}}", "headers.X-A", "must be valid UTF-8"},
		{"utf8_invalid_key", "POST", hooks, "{\"url\":\"https://a.com\",\"\xfe\":1}", "the request body", "a key of the request body must be valid UTF-8"},
		{"surrogate_high_alone", "POST", hooks, `{"url":"https://a.com","displayName":"a\ud800b"}`, "displayName", `displayName must be valid Unicode: \ud800 is half of a surrogate pair`},
		{"surrogate_low_alone", "POST", hooks, `{"url":"https://a.com","displayName":"\uDC00"}`, "displayName", `\udc00 is half of a surrogate pair`},
		{"surrogate_reversed", "POST", hooks, `{"url":"https://a.com","displayName":"\udc00\ud800"}`, "displayName", `\udc00 is half of a surrogate pair`},
		{"surrogate_high_twice", "POST", hooks, `{"url":"https://a.com","displayName":"\ud800\ud800"}`, "displayName", `\ud800 is half of a surrogate pair`},
		{"number_int_overflow", "POST", text, `{"number":"1","text":"hi","delay":9223372036854775808}`, "delay", "delay must be a whole number between -9223372036854775808 and 9223372036854775807 (got 9223372036854775808)"},
		{"number_int_exponent", "POST", text, `{"number":"1","text":"hi","delay":1e30}`, "delay", "(got 1e30)"},
		{"number_int_fraction", "POST", text, `{"number":"1","text":"hi","delay":1.5}`, "delay", "delay must be a whole number between"},
		{"number_float_overflow", "POST", location, `{"number":"1","latitude":1e400,"longitude":0}`, "latitude", "latitude must be a number within the range of a 64-bit float (got 1e400)"},
		{"huge_number", "POST", text, `{"number":"1","text":"hi","delay":` + strings.Repeat("9", mb) + `}`, "delay", "(got 99999999999999999999999999999999…)"},
		{"huge_key", "POST", hooks, `{"` + strings.Repeat("k", mb) + `":1}`, "kkkk", "unknown field"},
		{"huge_key_duplicate", "POST", hooks, `{"url":"https://a.com","headers":{"` + strings.Repeat("h", mb) + `":"1","` + strings.Repeat("h", mb) + `":"2"}}`, "headers.hhhh", "is given twice"},
		{"huge_event_key", "POST", hooks, `{"url":"https://a.com","events":{"` + strings.Repeat("e", mb) + `":true}}`, "events", `unknown event key "eeee`},
		{"huge_header_name_wrong_type", "POST", hooks, `{"url":"https://a.com","headers":{"` + strings.Repeat("h", mb) + `":1}}`, "headers.hhhh", "must be a string (got number)"},
		{"huge_value_bad_utf8", "POST", hooks, `{"url":"https://a.com","displayName":"` + strings.Repeat("d", mb) + "\xff\"}", "displayName", "displayName must be valid UTF-8"},
		{"huge_value_wrong_type", "POST", hooks, `{"url":"https://a.com","enabled":"` + strings.Repeat("e", mb) + `"}`, "enabled", "enabled must be a boolean (got string)"},
		{"deep_nesting", "POST", hooks, `{"url":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`, "", "exceeded max depth"},
		{"page_overflow", "GET", hooks + "?page=9223372036854775807", "", "page", "page must be between 1 and 1000000 (got 9223372036854775807)"},
		{"page_beyond_max", "GET", hooks + "?page=1000001", "", "page", "page must be between 1 and 1000000"},
		{"page_beyond_int", "GET", hooks + "?page=99999999999999999999", "", "page", `page is out of range (got "99999999999999999999")`},
		{"page_huge", "GET", hooks + "?page=" + strings.Repeat("7", 4000), "", "page", "page is out of range"},
		{"page_twice", "GET", hooks + "?page=1&page=2", "", "page", "page is given 2 times; give it once"},
		{"pagesize_overflow", "GET", hooks + "?pageSize=9223372036854775807", "", "pageSize", "pageSize must be between 1 and 100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := srv.REST(t, tt.method, tt.path, admin, tt.body)
			if res.Status != 400 {
				t.Fatalf("status %d, want 400: %.300s", res.Status, res.Body)
			}
			msg := res.Message(t)
			if !strings.Contains(msg, tt.field) || !strings.Contains(msg, tt.want) {
				t.Errorf("message %q does not name %q with %q", msg, tt.field, tt.want)
			}
			// The long values are runs of one letter: an answer may quote
			// 64 bytes of one, and stays short (the list of valid event keys
			// is the longest fixed text).
			if run := longestRun(res.Body); len(res.Body) > 1024 || run > 64 {
				t.Errorf("answer of %d bytes quotes %d bytes of a value: %.300s", len(res.Body), run, res.Body)
			}
			checkGolden(t, "strict_"+tt.name, res)
		})
	}

	// What a strict decoder must still take: a surrogate pair, an escaped
	// backslash before "u0000", a real U+FFFD, a key spelled with escapes,
	// the last page.
	accepted := []struct{ name, body, displayName string }{
		{"surrogate_pair", `{"url":"https://a.com","displayName":"smile \ud83d\ude00"}`, "smile 😀"},
		{"escaped_backslash", `{"url":"https://a.com","displayName":"a\\u0000b"}`, `a\u0000b`},
		{"replacement_char", `{"url":"https://a.com","displayName":"\ufffd` + "\xef\xbf\xbd" + `"}`, "\ufffd\ufffd"},
		{"escaped_key", `{"u\u0072l":"https://a.com","displayName":"escaped key"}`, "escaped key"},
		{"spaced_quotes", "{ \"url\" : \"https://a.com\" ,\n \"displayName\" :\t\"say \\\"hi\\\"\" }", `say "hi"`},
	}
	for _, tt := range accepted {
		t.Run("accept_"+tt.name, func(t *testing.T) {
			res := srv.REST(t, "POST", hooks, admin, tt.body)
			if res.Status != 201 {
				t.Fatalf("status %d, want 201: %s", res.Status, res.Body)
			}
			if got := data(t, res)["displayName"]; got != tt.displayName {
				t.Errorf("displayName %q, want %q", got, tt.displayName)
			}
		})
	}
	last := srv.REST(t, "GET", hooks+"?page=1000000&pageSize=100", admin, "")
	if last.Status != 200 {
		t.Fatalf("page 1000000: status %d, want 200: %s", last.Status, last.Body)
	}

	// Only the accepted webhooks and the one session were stored.
	var page struct{ Total int }
	srv.REST(t, "GET", hooks, admin, "").JSON(t, &page)
	if page.Total != len(accepted) {
		t.Errorf("%d webhooks, want the %d accepted", page.Total, len(accepted))
	}
	var sessions struct{ Data []any }
	srv.REST(t, "GET", "/session", admin, "").JSON(t, &sessions)
	if len(sessions.Data) != 1 {
		t.Errorf("%d sessions, want 1", len(sessions.Data))
	}
}

// longestRun is the length of the longest run of one repeated byte in b.
func longestRun(b []byte) int {
	best, n := 0, 0
	for i := range b {
		if i > 0 && b[i] == b[i-1] {
			n++
		} else {
			n = 1
		}
		best = max(best, n)
	}
	return best
}

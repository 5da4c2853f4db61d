package restcompat_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
)

// TestBadInput sends malformed and invalid requests: each must be answered
// with the documented status and a message naming the field at fault, never
// with a 5xx, and the answer is pinned in a golden file.
func TestBadInput(t *testing.T) {
	srv := apptest.Start(t, apptest.Config(t))
	admin := apptest.AdminToken
	created := srv.REST(t, "POST", "/session", admin, `{"name":"bad input"}`)
	sid := data(t, created)["id"].(string)
	hook := srv.REST(t, "POST", "/session/"+sid+"/webhook", admin, `{"url":"https://example.com/h"}`)
	wid := data(t, hook)["id"].(string)

	create := "/session/" + sid + "/webhook"
	update := create + "/" + wid
	manyHeaders := make([]string, 33)
	for i := range manyHeaders {
		manyHeaders[i] = fmt.Sprintf(`"X-H%d":"v"`, i)
	}
	tests := []struct {
		name, method, path, body string
		contentType              string
		status                   int
		want                     string // a part of the message: the field and the rule
	}{
		{"json_truncated", "POST", create, `{"url":`, "", 400, "malformed JSON"},
		{"json_unquoted_key", "POST", create, `{url: "https://a.com"}`, "", 400, "malformed JSON"},
		{"json_trailing_data", "POST", create, `{"url":"https://a.com"} {}`, "", 400, "single JSON value"},
		{"json_empty_body", "POST", create, ``, "", 400, "request body is empty"},
		{"json_array_body", "POST", create, `[]`, "", 400, "must be a JSON object"},
		{"json_string_body", "POST", create, `"https://a.com"`, "", 400, "must be a JSON object"},
		{"unknown_field", "POST", create, `{"url":"https://a.com","evnets":{}}`, "", 400, `unknown field "evnets"`},
		{"url_number", "POST", create, `{"url":42}`, "", 400, "url must be a string"},
		{"url_null", "POST", create, `{"url":null}`, "", 400, "url is required"},
		{"url_empty", "POST", create, `{"url":""}`, "", 400, "url must not be empty"},
		{"url_huge", "POST", create, `{"url":"https://example.com/` + strings.Repeat("a", 3000) + `"}`, "", 400, "url must be at most 2048 characters"},
		{"url_relative", "POST", create, `{"url":"/hook"}`, "", 400, "url must be an absolute http or https URL"},
		{"url_ftp", "POST", create, `{"url":"ftp://example.com/h"}`, "", 400, "url must be an absolute http or https URL"},
		{"url_javascript", "POST", create, `{"url":"javascript:alert(1)"}`, "", 400, "url must be an absolute http or https URL"},
		{"url_space", "POST", create, `{"url":"https://exa mple.com/h"}`, "", 400, "url must be an absolute http or https URL"},
		{"url_loopback", "POST", create, `{"url":"http://127.0.0.1:9000/h"}`, "", 400, "--allow-private-urls"},
		{"url_localhost", "POST", create, `{"url":"http://localhost/h"}`, "", 400, "--allow-private-urls"},
		{"url_private", "POST", create, `{"url":"http://10.0.0.1/h"}`, "", 400, "url points at a loopback, private or link-local address"},
		{"url_metadata", "POST", create, `{"url":"http://169.254.169.254/latest"}`, "", 400, "url points at a loopback, private or link-local address"},
		{"url_ipv6_loopback", "POST", create, `{"url":"http://[::1]/h"}`, "", 400, "url points at a loopback, private or link-local address"},
		{"url_fragment", "POST", create, `{"url":"https://example.com/h#frag"}`, "", 400, "url must not have a #fragment"},
		{"url_port_out_of_range", "POST", create, `{"url":"https://example.com:99999/h"}`, "", 400, "url has an invalid port"},
		{"display_name_number", "POST", create, `{"url":"https://a.com","displayName":7}`, "", 400, "displayName must be a string"},
		{"display_name_huge", "POST", create, `{"url":"https://a.com","displayName":"` + strings.Repeat("n", 101) + `"}`, "", 400, "displayName must be at most 100 characters"},
		{"display_name_control", "POST", create, `{"url":"https://a.com","displayName":"bell\u0007"}`, "", 400, "displayName must not contain control characters"},
		{"enabled_string", "POST", create, `{"url":"https://a.com","enabled":"yes"}`, "", 400, "enabled must be a boolean"},
		{"events_array", "POST", create, `{"url":"https://a.com","events":["call"]}`, "", 400, "events must be an object"},
		{"events_unknown_key", "POST", create, `{"url":"https://a.com","events":{"message.upsert":true}}`, "", 400, `unknown event key "message.upsert"`},
		{"events_value_string", "POST", create, `{"url":"https://a.com","events":{"call":"true"}}`, "", 400, "events.call must be a boolean"},
		{"events_value_null", "POST", create, `{"url":"https://a.com","events":{"call":null}}`, "", 400, "events.call must be a boolean"},
		{"headers_array", "POST", create, `{"url":"https://a.com","headers":[{"name":"X-A","value":"1"}]}`, "", 400, "headers must be an object"},
		{"header_value_number", "POST", create, `{"url":"https://a.com","headers":{"X-A":1}}`, "", 400, "headers.X-A must be a string"},
		{"header_value_object", "POST", create, `{"url":"https://a.com","headers":{"X-A":{"v":1}}}`, "", 400, "headers.X-A must be a string"},
		{"header_value_null", "POST", create, `{"url":"https://a.com","headers":{"X-A":null}}`, "", 400, "headers.X-A must be a string"},
		{"header_name_space", "POST", create, `{"url":"https://a.com","headers":{"Bad Header":"1"}}`, "", 400, `header name "Bad Header"`},
		{"header_reserved", "POST", create, `{"url":"https://a.com","headers":{"Content-Type":"text/plain"}}`, "", 400, "header Content-Type is set by the delivery itself"},
		{"header_signature_reserved", "POST", create, `{"url":"https://a.com","headers":{"webhook-signature":"v1,x"}}`, "", 400, "header webhook-signature is set by the delivery itself"},
		{"header_hop_te", "POST", create, `{"url":"https://a.com","headers":{"TE":"gzip"}}`, "", 400, "header TE belongs to the connection, not the request"},
		{"header_hop_trailer", "POST", create, `{"url":"https://a.com","headers":{"Trailer":"X-A"}}`, "", 400, "header Trailer belongs to the connection"},
		{"header_value_newline", "POST", create, `{"url":"https://a.com","headers":{"X-A":"a\r\nX-Evil: 1"}}`, "", 400, "header X-A value must not contain control characters"},
		{"header_value_huge", "POST", create, `{"url":"https://a.com","headers":{"X-A":"` + strings.Repeat("v", 5000) + `"}}`, "", 400, "header X-A value must be at most 4096 bytes"},
		{"headers_too_many", "POST", create, `{"url":"https://a.com","headers":{` + strings.Join(manyHeaders, ",") + `}}`, "", 400, "headers must have at most 32 entries"},
		{"header_duplicate", "POST", create, `{"url":"https://a.com","headers":{"X-A":"1","x-a":"2"}}`, "", 400, "given twice"},
		{"content_type_text", "POST", create, `{"url":"https://a.com"}`, "text/plain", 415, "Content-Type must be application/json"},
		{"update_url_empty", "PUT", update, `{"url":""}`, "", 400, "url must not be empty"},
		{"update_events_string", "PUT", update, `{"events":"all"}`, "", 400, "events must be an object"},
		{"update_unknown_field", "PUT", update, `{"id":"other"}`, "", 400, `unknown field "id"`},
		{"update_enabled_number", "PUT", update, `{"enabled":1}`, "", 400, "enabled must be a boolean"},
		{"list_page_zero", "GET", create + "?page=0", ``, "", 400, "page must be at least 1"},
		{"list_page_negative", "GET", create + "?page=-3", ``, "", 400, "page must be at least 1"},
		{"list_page_text", "GET", create + "?page=abc", ``, "", 400, "page must be a whole number"},
		{"list_pagesize_zero", "GET", create + "?pageSize=0", ``, "", 400, "pageSize must be between 1 and 100"},
		{"list_pagesize_1000", "GET", create + "?pageSize=1000", ``, "", 400, "pageSize must be between 1 and 100"},
		{"list_pagesize_fraction", "GET", create + "?pageSize=1.5", ``, "", 400, "pageSize must be a whole number"},
		{"session_name_number", "POST", "/session", `{"name":5}`, "", 400, "name must be a string"},
		{"session_name_huge", "POST", "/session", `{"name":"` + strings.Repeat("s", 101) + `"}`, "", 400, "name must be at most 100 characters"},
		{"session_name_control", "POST", "/session", `{"name":"a\u001fb"}`, "", 400, "name must not contain control characters"},
		{"session_unknown_field", "POST", "/session", `{"nmae":"x"}`, "", 400, `unknown field "nmae"`},
	}
	if len(tests) < 40 {
		t.Fatalf("only %d bad-input cases", len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ct := tt.contentType
			if ct == "" {
				ct = "application/json"
			}
			res := srv.Do(t, tt.method, "/api/v1"+tt.path, admin, tt.body, map[string]string{"Content-Type": ct})
			if res.Status != tt.status {
				t.Fatalf("status %d, want %d: %s", res.Status, tt.status, res.Body)
			}
			if msg := res.Message(t); !strings.Contains(msg, tt.want) {
				t.Errorf("message %q does not contain %q", msg, tt.want)
			}
			checkGolden(t, "bad_"+tt.name, res)
		})
	}
	// Nothing was stored by any refused request.
	list := srv.REST(t, "GET", create, admin, "")
	var page struct{ Total int }
	list.JSON(t, &page)
	if page.Total != 1 {
		t.Errorf("%d webhooks after the refused requests, want 1", page.Total)
	}
}

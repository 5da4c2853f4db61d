package e2e

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/graph"
	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/restcompat"
)

// validBodies are well-formed bodies per route, so a refusal can only come
// from access, not from decoding.
var validBodies = map[string]string{
	"POST /session":                                              `{"name":"x"}`,
	"POST /session/{sessionId}/pair-phone":                       `{"number":"4915550012002"}`,
	"POST /session/{sessionId}/passkey/assertion":                `{"assertion":{"id":"AQ","rawId":"AQ","type":"public-key","response":{"clientDataJSON":"e30","authenticatorData":"AQ","signature":"AQ"}}}`,
	"POST /session/{sessionId}/message/text":                     `{"number":"4915550012002","text":"hi"}`,
	"POST /session/{sessionId}/message/image":                    `{"number":"4915550012002","source":"aGk="}`,
	"POST /session/{sessionId}/message/video":                    `{"number":"4915550012002","source":"aGk="}`,
	"POST /session/{sessionId}/message/document":                 `{"number":"4915550012002","source":"aGk="}`,
	"POST /session/{sessionId}/message/audio":                    `{"number":"4915550012002","source":"aGk=","asVoiceNote":false}`,
	"POST /session/{sessionId}/message/location":                 `{"number":"4915550012002","latitude":1,"longitude":2}`,
	"POST /session/{sessionId}/message/contact":                  `{"number":"4915550012002","contact":{"phoneNumber":"4915550012003","firstName":"A","lastName":"B"}}`,
	"POST /session/{sessionId}/group":                            `{"subject":"g","description":"d"}`,
	"PUT /session/{sessionId}/group/{jid}":                       `{"subject":"g"}`,
	"PUT /session/{sessionId}/settings":                          `{"autoMarkRead":false}`,
	"POST /session/{sessionId}/group/{jid}/send-invite":          `{"number":"4915550012002","message":"m"}`,
	"POST /session/{sessionId}/group/{jid}/demote":               `["4915550012002"]`,
	"PUT /session/{sessionId}/display-picture":                   `{"identifier":"4915550012001","source":"aGk="}`,
	"PUT /session/{sessionId}/update-profile-name":               `{"name":"n"}`,
	"PUT /session/{sessionId}/privacy/default-disappearing-mode": `{"mode":"OFF"}`,
	"PUT /session/{sessionId}/privacy/read-receipts":             `{"privacy":"all"}`,
	"PUT /session/{sessionId}/privacy/groups-add":                `{"privacy":"all"}`,
	"PUT /session/{sessionId}/privacy/status":                    `{"privacy":"all"}`,
	"POST /session/{sessionId}/webhook":                          `{"url":"https://example.com/h"}`,
	"PUT /session/{sessionId}/message/{messageId}":               `{"text":"t"}`,
	"POST /session/{sessionId}/message/{messageId}/reaction":     `{"emoji":"👍"}`,
	"POST /session/{sessionId}/message/{messageId}/forward":      `{"number":"4915550012002"}`,
	"POST /session/{sessionId}/message/poll":                     `{"number":"4915550012002","question":"q","options":["a","b"]}`,
	"POST /session/{sessionId}/message/sticker":                  `{"number":"4915550012002","source":"aGk="}`,
	"POST /session/{sessionId}/presence":                         `{"state":"AVAILABLE"}`,
	"POST /session/{sessionId}/call/{callId}/reject":             `{"from":"4915550012002"}`,
	"POST /session/{sessionId}/presence/subscribe":               `{"chat":"4915550012002"}`,
	"PUT /session/{sessionId}/webhook/{webhookId}":               `{"enabled":true}`,
	"POST /session/{sessionId}/contact/check":                    `{"numbers":["4915550012002"]}`,
	"POST /session/{sessionId}/contact/identity":                 `{"ids":["4915550012002"]}`,
	"POST /session/{sessionId}/group/join":                       `{"link":"https://chat.whatsapp.com/AbCdEfGhIjKlMnOpQrStUv"}`,
	"POST /session/{sessionId}/group/{jid}/add":                  `["4915550012002"]`,
	"POST /session/{sessionId}/group/{jid}/remove":               `["4915550012002"]`,
	"POST /session/{sessionId}/group/{jid}/promote":              `["4915550012002"]`,
	"POST /session/{sessionId}/group/{jid}/requests/approve":     `["4915550012002"]`,
	"POST /session/{sessionId}/group/{jid}/requests/reject":      `["4915550012002"]`,
}

// TestEveryRouteChecksAccess walks the REST route table itself: on every
// path of a session, a missing or bad token is 401 and a token that does
// not reach the session is 404 naming only the session, and the session's
// owner gets past access (whatever WhatsApp then says). A route added later
// is covered without editing this test.
func TestEveryRouteChecksAccess(t *testing.T) {
	t.Parallel()
	s := apptest.StartSandbox(t)
	owned := s.LinkSession(t, "4915550012001")
	var u struct{ CreateUser struct{ Token string } }
	s.MustGraphQL(t, apptest.AdminToken, `mutation { createUser(name: "stranger") { token } }`, nil, &u)
	var other struct{ CreateSession struct{ Token string } }
	s.MustGraphQL(t, apptest.AdminToken, `mutation { createSession(name: "other") { token } }`, nil, &other)

	for _, pattern := range restcompat.New(restcompat.Deps{Resolvers: &graph.Resolver{}}, slog.New(slog.DiscardHandler)).Patterns() {
		method, path, _ := strings.Cut(pattern, " ")
		if !strings.Contains(path, "{sessionId}") {
			continue
		}
		path = strings.NewReplacer("{sessionId}", owned.ID, "{jid}", "120363000000000009@g.us",
			"{webhookId}", "00000000-0000-0000-0000-000000000000", "{messageId}", "3EB0000000000000000000").Replace(path)
		body := validBodies[pattern]
		t.Run(pattern, func(t *testing.T) {
			for _, tc := range []struct {
				who, token string
				status     int
			}{
				{"no token", "", http.StatusUnauthorized},
				{"bad token", "wgu_notAToken", http.StatusUnauthorized},
				{"another user", u.CreateUser.Token, http.StatusNotFound},
				{"another session's token", other.CreateSession.Token, http.StatusNotFound},
			} {
				res := s.REST(t, method, path, tc.token, body)
				if res.Status != tc.status {
					t.Errorf("%s: %d %s, want %d", tc.who, res.Status, res.Body, tc.status)
					continue
				}
				if tc.status == http.StatusNotFound && res.Message(t) != "session "+owned.ID+" not found" {
					t.Errorf("%s: message %q names more than the session", tc.who, res.Message(t))
				}
			}
			if method == http.MethodDelete && !strings.Contains(path, "/message/") {
				return // deleting the session or a webhook would spoil the other routes
			}
			if strings.HasSuffix(path, "/logout") {
				return
			}
			res := s.REST(t, method, path, apptest.AdminToken, body)
			if res.Status == http.StatusUnauthorized || res.Status == http.StatusForbidden ||
				(res.Status == http.StatusNotFound && strings.Contains(string(res.Body), "session "+owned.ID+" not found")) {
				t.Errorf("the owner was refused: %d %s", res.Status, res.Body)
			}
		})
	}
}

package app_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/config"
)

// TestQuotas: what one user or session may keep is bounded, each bound
// refused with CONFLICT and a message naming it and its setting, while
// below it everything works. On main before this change nothing bounded
// them: 400 webhooks on one session made 100,000 delivery rows of one burst,
// a user who is not an admin had 300 sessions, and scheduled sends kept up
// to 64 MiB of media each for a day.
func TestQuotas(t *testing.T) {
	cfg := apptest.SandboxConfig(t)
	cfg.Quotas = config.Quotas{SessionsPerUser: 2, WebhooksPerSession: 3, TokensPerSession: 2,
		ScheduledPerSession: 3, ScheduledBytesPerSession: 4000}
	srv := apptest.Start(t, cfg)
	const admin = apptest.AdminToken

	var user struct{ CreateUser struct{ Token string } }
	srv.MustGraphQL(t, admin, `mutation { createUser(name: "tenant") { token } }`, nil, &user)
	tenant := user.CreateUser.Token

	refused := func(t *testing.T, token, query string, vars map[string]any, want string) {
		t.Helper()
		res := srv.GraphQL(t, token, query, vars)
		if len(res.Errors) != 1 || res.Errors[0].Code() != "CONFLICT" || !strings.Contains(res.Errors[0].Message, want) {
			t.Fatalf("past the quota: %+v, want one CONFLICT naming %q", res, want)
		}
	}

	t.Run("sessions per user", func(t *testing.T) {
		for i := range 2 {
			srv.MustGraphQL(t, tenant, `mutation($n: String) { createSession(name: $n) { session { id } } }`, map[string]any{"n": fmt.Sprint("s", i)}, nil)
		}
		refused(t, tenant, `mutation { createSession(name: "third") { session { id } } }`, nil,
			"you have 2 sessions, the most a user may have (--max-sessions-per-user); delete one first")
		// An admin runs the gateway: no quota of its own.
		for i := range 3 {
			srv.MustGraphQL(t, admin, `mutation($n: String) { createSession(name: $n) { session { id } } }`, map[string]any{"n": fmt.Sprint("admin ", i)}, nil)
		}
	})

	sess := srv.LinkSession(t, "4915550031001")
	t.Run("webhooks per session, taken at once", func(t *testing.T) {
		// Ten at once for three places: exactly three are made.
		var wg sync.WaitGroup
		var mu sync.Mutex
		made, conflicts := 0, 0
		for i := range 10 {
			wg.Go(func() {
				res := srv.GraphQL(t, admin, `mutation($s: ID!, $u: String) { createWebhook(sessionId: $s, input: {url: $u}) { webhook { id } } }`,
					map[string]any{"s": sess.ID, "u": fmt.Sprintf("https://hooks.example/%d", i)})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case len(res.Errors) == 0:
					made++
				case res.Errors[0].Code() == "CONFLICT":
					conflicts++
				default:
					t.Errorf("createWebhook: %+v", res.Errors)
				}
			})
		}
		wg.Wait()
		if made != 3 || conflicts != 7 {
			t.Errorf("%d webhooks made and %d refused of 10 at once, want 3 and 7", made, conflicts)
		}
		refused(t, admin, `mutation($s: ID!) { createWebhook(sessionId: $s, input: {url: "https://hooks.example/x"}) { webhook { id } } }`,
			map[string]any{"s": sess.ID}, "has 3 webhooks, the most one may have (--max-webhooks-per-session); delete one first")
	})

	t.Run("live tokens per session", func(t *testing.T) {
		// The session has the token createSession gave; one more fills it.
		var tok struct{ CreateSessionToken string }
		srv.MustGraphQL(t, admin, `mutation($s: ID!) { createSessionToken(sessionId: $s) }`, map[string]any{"s": sess.ID}, &tok)
		first := tok.CreateSessionToken
		refused(t, admin, `mutation($s: ID!) { createSessionToken(sessionId: $s) }`, map[string]any{"s": sess.ID},
			"has 2 live tokens, the most one may have (--max-tokens-per-session); revoke one first")
		// A revoked token frees its place.
		srv.MustGraphQL(t, admin, `mutation($t: String!) { revokeToken(token: $t) }`, map[string]any{"t": first}, nil)
		srv.MustGraphQL(t, admin, `mutation($s: ID!) { createSessionToken(sessionId: $s) }`, map[string]any{"s": sess.ID}, nil)
	})

	t.Run("pending scheduled sends and their bytes", func(t *testing.T) {
		send := `mutation($s: ID!, $t: String!) { sendText(sessionId: $s, input: {number: "4915550031002", text: $t, delay: 3600}) { messageId } }`
		text := strings.Repeat("a", 1200)
		for range 3 {
			srv.MustGraphQL(t, admin, send, map[string]any{"s": sess.ID, "t": text}, nil)
		}
		refused(t, admin, send, map[string]any{"s": sess.ID, "t": "one more"},
			"has 3 pending scheduled sends, the most one may have (--max-scheduled-per-session)")
	})

	t.Run("scheduled bytes", func(t *testing.T) {
		other := srv.LinkSession(t, "4915550031003")
		send := `mutation($s: ID!, $t: String!) { sendText(sessionId: $s, input: {number: "4915550031002", text: $t, delay: 3600}) { messageId } }`
		srv.MustGraphQL(t, admin, send, map[string]any{"s": other.ID, "t": strings.Repeat("b", 2500)}, nil)
		refused(t, admin, send, map[string]any{"s": other.ID, "t": strings.Repeat("c", 2500)},
			"would pass the most they may keep, 4000 (--max-scheduled-bytes-per-session)")
	})
}

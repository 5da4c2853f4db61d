package app_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/graph"
	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/restcompat"
)

// fixture is a fresh little world for one access case: two users, a session
// each, a webhook in the owner's session, and tokens of every kind.
type fixture struct {
	owner, other string // user tokens
	sa, sb       string // sessions of owner and other
	tokSA, tokSB string // their session tokens
	revoked      string // a session token of sa, revoked
	target       string // a session token of sa, for revokeToken
	wa           string // a webhook of sa
	ownerID      string
}

func newFixture(t *testing.T, srv *apptest.Server, n int) fixture {
	t.Helper()
	admin := apptest.AdminToken
	var f fixture
	mkUser := func(name string) (string, string) {
		var r struct {
			CreateUser struct {
				User  struct{ ID string }
				Token string
			}
		}
		srv.MustGraphQL(t, admin, `mutation($n: String!) { createUser(name: $n) { user { id } token } }`, map[string]any{"n": name}, &r)
		return r.CreateUser.User.ID, r.CreateUser.Token
	}
	mkSession := func(tok string) (string, string) {
		var r struct {
			CreateSession struct {
				Session struct{ ID string }
				Token   string
			}
		}
		srv.MustGraphQL(t, tok, `mutation { createSession(name: "s") { session { id } token } }`, nil, &r)
		return r.CreateSession.Session.ID, r.CreateSession.Token
	}
	mkToken := func(sid string) string {
		var r struct{ CreateSessionToken string }
		srv.MustGraphQL(t, f.owner, `mutation($s: ID!) { createSessionToken(sessionId: $s) }`, map[string]any{"s": sid}, &r)
		return r.CreateSessionToken
	}
	f.ownerID, f.owner = mkUser(fmt.Sprintf("owner-%d", n))
	_, f.other = mkUser(fmt.Sprintf("other-%d", n))
	f.sa, f.tokSA = mkSession(f.owner)
	f.sb, f.tokSB = mkSession(f.other)
	f.revoked = mkToken(f.sa)
	srv.MustGraphQL(t, f.owner, `mutation($t: String!) { revokeToken(token: $t) }`, map[string]any{"t": f.revoked}, nil)
	f.target = mkToken(f.sa)
	var w struct {
		CreateWebhook struct{ Webhook struct{ ID string } }
	}
	srv.MustGraphQL(t, f.owner, `mutation($s: ID!) { createWebhook(sessionId: $s, input: {url: "https://example.com/h"}) { webhook { id } } }`, map[string]any{"s": f.sa}, &w)
	f.wa = w.CreateWebhook.Webhook.ID
	return f
}

// intact checks, as the admin, that nothing of the fixture was touched.
func (f fixture) intact(t *testing.T, srv *apptest.Server) {
	t.Helper()
	var r struct {
		Session *struct{ Name string }
		Webhook *struct {
			Enabled bool
			URL     string
		}
	}
	srv.MustGraphQL(t, apptest.AdminToken, `query($s: ID!, $w: ID!) { session(id: $s) { name } webhook(sessionId: $s, id: $w) { enabled url } }`,
		map[string]any{"s": f.sa, "w": f.wa}, &r)
	if r.Session == nil || r.Session.Name != "s" {
		t.Errorf("session %s was changed or deleted", f.sa)
	}
	if r.Webhook == nil || !r.Webhook.Enabled || r.Webhook.URL != "https://example.com/h" {
		t.Errorf("webhook %s was changed or deleted: %+v", f.wa, r.Webhook)
	}
	if res := srv.GraphQL(t, f.target, `{ viewer { user { id } } }`, nil); len(res.Errors) > 0 {
		t.Errorf("token to be revoked was revoked: %+v", res.Errors)
	}
	var list struct{ Webhooks struct{ Total int } }
	srv.MustGraphQL(t, apptest.AdminToken, `query($s: ID!) { webhooks(sessionId: $s) { total } }`, map[string]any{"s": f.sa}, &list)
	if list.Webhooks.Total != 1 {
		t.Errorf("session %s has %d webhooks, want 1", f.sa, list.Webhooks.Total)
	}
}

type principal string

const (
	pNone         principal = "no token"
	pBad          principal = "bad token"
	pRevoked      principal = "revoked token"
	pOwner        principal = "owner's user token"
	pOther        principal = "another user's token"
	pSession      principal = "the session's token"
	pOtherSession principal = "another session's token"
	pAdmin        principal = "admin token"
)

var principals = []principal{pNone, pBad, pRevoked, pOwner, pOther, pSession, pOtherSession, pAdmin}

func (f fixture) token(p principal) string {
	switch p {
	case pBad:
		return "Bearer wgu_" + strings.Repeat("x", 40)
	case pRevoked:
		return f.revoked
	case pOwner:
		return "Bearer " + f.owner
	case pOther:
		return f.other
	case pSession:
		return f.tokSA
	case pOtherSession:
		return "Bearer " + f.tokSB
	case pAdmin:
		return apptest.AdminToken
	}
	return ""
}

// outcome is what an operation must answer: success (ok) or a fault code.
type outcome = fault.Code

const ok outcome = ""

// sessionScoped is the rule of every operation that names the owner's
// session: its owner, its own token and the admin reach it; nobody else
// learns it exists.
func sessionScoped(p principal) outcome {
	switch p {
	case pNone, pBad, pRevoked:
		return fault.Unauthenticated
	case pOther, pOtherSession:
		return fault.NotFound
	}
	return ok
}

func userTokensOnly(p principal) outcome {
	switch p {
	case pSession, pOtherSession:
		return fault.Forbidden
	}
	return sessionScoped(p)
}

type restCall struct{ method, path, body string }

type operation struct {
	name   string
	query  string
	vars   func(f fixture) map[string]any
	rest   func(f fixture) *restCall // nil: GraphQL only
	expect func(p principal) outcome
	// nullWhenHidden: the GraphQL field answers null, not an error, for an
	// object out of reach (session(id)).
	nullWhenHidden bool
	// verify checks a success, from data the GraphQL or REST answer carried.
	verify func(t *testing.T, srv *apptest.Server, f fixture, p principal, ids []string)
}

func operations() []operation {
	sa := func(f fixture) map[string]any { return map[string]any{"s": f.sa} }
	saw := func(f fixture) map[string]any { return map[string]any{"s": f.sa, "w": f.wa} }
	return []operation{
		{
			name:  "viewer",
			query: `{ viewer { user { id } session { id } } }`,
			expect: func(p principal) outcome {
				if o := sessionScoped(p); o == fault.Unauthenticated {
					return o
				}
				return ok
			},
		},
		{
			name:  "sessions",
			query: `{ sessions { id } }`,
			rest:  func(f fixture) *restCall { return &restCall{"GET", "/session", ""} },
			expect: func(p principal) outcome {
				if o := sessionScoped(p); o == fault.Unauthenticated {
					return o
				}
				return ok
			},
			verify: func(t *testing.T, srv *apptest.Server, f fixture, p principal, ids []string) {
				want := map[principal][]string{pOwner: {f.sa}, pSession: {f.sa}, pOther: {f.sb}, pOtherSession: {f.sb}}[p]
				if p == pAdmin {
					if !slices.Contains(ids, f.sa) || !slices.Contains(ids, f.sb) {
						t.Errorf("admin sees %v, want both %s and %s", ids, f.sa, f.sb)
					}
					return
				}
				if !slices.Equal(ids, want) {
					t.Errorf("%s sees sessions %v, want %v", p, ids, want)
				}
			},
		},
		{
			name:           "session",
			query:          `query($s: ID!) { session(id: $s) { id } }`,
			vars:           sa,
			rest:           func(f fixture) *restCall { return &restCall{"GET", "/session/" + f.sa, ""} },
			expect:         sessionScoped,
			nullWhenHidden: true,
		},
		{
			name:  "createSession",
			query: `mutation { createSession(name: "new") { session { id } token } }`,
			// Another name: names are unique per user, and the admin is one
			// user for both calls.
			rest: func(f fixture) *restCall { return &restCall{"POST", "/session", `{"name":"new by REST"}`} },
			expect: func(p principal) outcome {
				switch p {
				case pNone, pBad, pRevoked:
					return fault.Unauthenticated
				case pSession, pOtherSession:
					return fault.Forbidden
				}
				return ok
			},
		},
		{
			name:   "deleteSession",
			query:  `mutation($s: ID!) { deleteSession(id: $s) }`,
			vars:   sa,
			rest:   func(f fixture) *restCall { return &restCall{"DELETE", "/session/" + f.sa, ""} },
			expect: sessionScoped,
			verify: func(t *testing.T, srv *apptest.Server, f fixture, p principal, _ []string) {
				var r struct{ Session *struct{ ID string } }
				srv.MustGraphQL(t, apptest.AdminToken, `query($s: ID!) { session(id: $s) { id } }`, map[string]any{"s": f.sa}, &r)
				if r.Session != nil {
					t.Errorf("session %s still exists after deleteSession", f.sa)
				}
				if res := srv.GraphQL(t, f.target, `{ viewer { user { id } } }`, nil); len(res.Errors) == 0 {
					t.Errorf("a token of the deleted session still works")
				}
			},
		},
		{
			name:  "createUser",
			query: `mutation { createUser(name: "newcomer") { user { id } token } }`,
			expect: func(p principal) outcome {
				switch p {
				case pAdmin:
					return ok
				case pNone, pBad, pRevoked:
					return fault.Unauthenticated
				}
				return fault.Forbidden
			},
		},
		{
			name:   "createSessionToken",
			query:  `mutation($s: ID!) { createSessionToken(sessionId: $s) }`,
			vars:   sa,
			expect: userTokensOnly,
		},
		{
			name:  "revokeToken",
			query: `mutation($t: String!) { revokeToken(token: $t) }`,
			vars:  func(f fixture) map[string]any { return map[string]any{"t": f.target} },
			expect: func(p principal) outcome {
				switch p {
				case pSession: // a session token revokes only itself
					return fault.NotFound
				}
				return sessionScoped(p)
			},
			verify: func(t *testing.T, srv *apptest.Server, f fixture, p principal, _ []string) {
				res := srv.GraphQL(t, f.target, `{ viewer { user { id } } }`, nil)
				if len(res.Errors) == 0 || res.Errors[0].Code() != "UNAUTHENTICATED" {
					t.Errorf("revoked token still works: %+v", res)
				}
			},
		},
		{
			name:   "webhooks",
			query:  `query($s: ID!) { webhooks(sessionId: $s) { total items { id } } }`,
			vars:   sa,
			rest:   func(f fixture) *restCall { return &restCall{"GET", "/session/" + f.sa + "/webhook", ""} },
			expect: sessionScoped,
		},
		{
			name:   "webhook",
			query:  `query($s: ID!, $w: ID!) { webhook(sessionId: $s, id: $w) { id } }`,
			vars:   saw,
			rest:   func(f fixture) *restCall { return &restCall{"GET", "/session/" + f.sa + "/webhook/" + f.wa, ""} },
			expect: sessionScoped,
		},
		{
			name:  "createWebhook",
			query: `mutation($s: ID!) { createWebhook(sessionId: $s, input: {url: "https://example.org/x"}) { webhook { id } secret } }`,
			vars:  sa,
			rest: func(f fixture) *restCall {
				return &restCall{"POST", "/session/" + f.sa + "/webhook", `{"url":"https://example.org/x"}`}
			},
			expect: sessionScoped,
		},
		{
			name:  "updateWebhook",
			query: `mutation($s: ID!, $w: ID!) { updateWebhook(sessionId: $s, id: $w, input: {enabled: false}) { id enabled } }`,
			vars:  saw,
			rest: func(f fixture) *restCall {
				return &restCall{"PUT", "/session/" + f.sa + "/webhook/" + f.wa, `{"enabled":false}`}
			},
			expect: sessionScoped,
		},
		{
			name:   "deleteWebhook",
			query:  `mutation($s: ID!, $w: ID!) { deleteWebhook(sessionId: $s, id: $w) }`,
			vars:   saw,
			rest:   func(f fixture) *restCall { return &restCall{"DELETE", "/session/" + f.sa + "/webhook/" + f.wa, ""} },
			expect: sessionScoped,
		},
	}
}

// TestAccess runs every operation with every kind of token over GraphQL and
// REST and asserts the outcome; a refused operation must leave everything
// as it was, and both transports must classify it the same way.
func TestAccess(t *testing.T) {
	srv := apptest.Start(t, apptest.Config(t))
	n := 0
	for _, op := range operations() {
		for _, p := range principals {
			want := op.expect(p)
			t.Run(op.name+"/"+string(p), func(t *testing.T) {
				n++
				f := newFixture(t, srv, n)
				vars := map[string]any{}
				if op.vars != nil {
					vars = op.vars(f)
				}
				res := srv.GraphQL(t, f.token(p), op.query, vars)
				gqlMsg := checkGraphQL(t, op, p, want, res)
				if want == ok && op.verify != nil {
					op.verify(t, srv, f, p, sessionIDs(t, res.Data))
				}
				if want != ok {
					f.intact(t, srv)
				}
				if op.rest == nil {
					return
				}
				f = newFixture(t, srv, n+10000)
				call := op.rest(f)
				rres := srv.REST(t, call.method, call.path, f.token(p), call.body)
				checkREST(t, want, rres, gqlMsg)
				if want == ok && op.verify != nil {
					op.verify(t, srv, f, p, restSessionIDs(t, rres))
				}
				if want != ok {
					f.intact(t, srv)
				}
			})
		}
	}
}

func checkGraphQL(t *testing.T, op operation, p principal, want outcome, res apptest.GQLResponse) string {
	t.Helper()
	if want == ok || (want == fault.NotFound && op.nullWhenHidden) {
		if len(res.Errors) > 0 {
			t.Fatalf("graphql: %s, want success: %+v", p, res.Errors)
		}
		hidden := rootFieldNull(t, res.Data)
		if want == ok && hidden {
			t.Errorf("graphql: %s sees null: %s", p, res.Data)
		}
		if want == fault.NotFound && !hidden {
			t.Errorf("graphql: %s sees a session it does not reach: %s", p, res.Data)
		}
		return ""
	}
	if len(res.Errors) != 1 {
		t.Fatalf("graphql: %s: want one %s error, got %+v (data %s)", p, want, res.Errors, res.Data)
	}
	if got, code := res.Errors[0].Code(), graph.ExtensionCode(want); got != code {
		t.Errorf("graphql: %s: extensions.code %s, want %s (%s)", p, got, code, res.Errors[0].Message)
	}
	return res.Errors[0].Message
}

// rootFieldNull reports whether a root field of the answer is null: how
// GraphQL hides a session the token does not reach (nullWhenHidden).
func rootFieldNull(t *testing.T, data json.RawMessage) bool {
	t.Helper()
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		t.Fatalf("graphql data: %v: %s", err, data)
	}
	for _, v := range fields {
		if string(v) == "null" {
			return true
		}
	}
	return false
}

func checkREST(t *testing.T, want outcome, res apptest.Response, gqlMsg string) {
	t.Helper()
	wantStatus := 200
	if want != ok {
		wantStatus = restcompat.StatusOf(want)
	}
	if res.Status == 201 && wantStatus == 200 {
		wantStatus = 201 // creation
	}
	if res.Status != wantStatus {
		t.Fatalf("rest: status %d, want %d: %s", res.Status, wantStatus, res.Body)
	}
	if want != ok && gqlMsg != "" {
		if msg := res.Message(t); !sameShape(msg, gqlMsg) {
			t.Errorf("rest says %q, graphql says %q for the same refusal", msg, gqlMsg)
		}
	}
}

// sameShape compares two messages about fixtures that differ only in their
// ids (REST and GraphQL each ran on a fresh fixture).
func sameShape(a, b string) bool {
	strip := func(s string) string {
		var out []string
		for _, w := range strings.Fields(s) {
			if len(w) == 36 && strings.Count(w, "-") == 4 {
				w = "<id>"
			}
			out = append(out, w)
		}
		return strings.Join(out, " ")
	}
	return strip(a) == strip(b)
}

func sessionIDs(t *testing.T, data json.RawMessage) []string {
	var r struct{ Sessions []struct{ ID string } }
	_ = json.Unmarshal(data, &r)
	var ids []string
	for _, s := range r.Sessions {
		ids = append(ids, s.ID)
	}
	return ids
}

func restSessionIDs(t *testing.T, res apptest.Response) []string {
	var r struct {
		Data json.RawMessage
	}
	res.JSON(t, &r)
	var list []struct{ ID string }
	_ = json.Unmarshal(r.Data, &list)
	var ids []string
	for _, s := range list {
		ids = append(ids, s.ID)
	}
	return ids
}

// TestWebhookIDsStayInTheirSession: even the admin cannot reach a webhook
// through a session it does not belong to.
func TestWebhookIDsStayInTheirSession(t *testing.T) {
	srv := apptest.Start(t, apptest.Config(t))
	f := newFixture(t, srv, 1)
	admin := apptest.AdminToken
	vars := map[string]any{"s": f.sb, "w": f.wa}
	for _, q := range []string{
		`query($s: ID!, $w: ID!) { webhook(sessionId: $s, id: $w) { id } }`,
		`mutation($s: ID!, $w: ID!) { updateWebhook(sessionId: $s, id: $w, input: {enabled: false}) { id } }`,
		`mutation($s: ID!, $w: ID!) { deleteWebhook(sessionId: $s, id: $w) }`,
	} {
		res := srv.GraphQL(t, admin, q, vars)
		if len(res.Errors) != 1 || res.Errors[0].Code() != "NOT_FOUND" {
			t.Errorf("%s: want NOT_FOUND, got %+v", q, res.Errors)
		}
	}
	for _, c := range []restCall{
		{"GET", "/session/" + f.sb + "/webhook/" + f.wa, ""},
		{"PUT", "/session/" + f.sb + "/webhook/" + f.wa, `{"enabled":false}`},
		{"DELETE", "/session/" + f.sb + "/webhook/" + f.wa, ""},
	} {
		if res := srv.REST(t, c.method, c.path, admin, c.body); res.Status != 404 {
			t.Errorf("%s %s: status %d, want 404", c.method, c.path, res.Status)
		}
	}
	f.intact(t, srv)
}

// TestRateLimit: past the burst a token is refused with 429 and Retry-After
// in REST and RATE_LIMITED in GraphQL; another token is not affected.
func TestRateLimit(t *testing.T) {
	cfg := apptest.Config(t)
	cfg.Rate.Per, cfg.Rate.Burst = 0.001, 3
	srv := apptest.Start(t, cfg)
	admin := apptest.AdminToken
	for i := range 3 {
		if res := srv.REST(t, "GET", "/session", admin, ""); res.Status != 200 {
			t.Fatalf("request %d: status %d", i+1, res.Status)
		}
	}
	res := srv.REST(t, "GET", "/session", admin, "")
	if res.Status != 429 || res.Header.Get("Retry-After") == "" {
		t.Fatalf("over the burst: status %d, Retry-After %q; want 429 with Retry-After", res.Status, res.Header.Get("Retry-After"))
	}
	if msg := res.Message(t); !strings.Contains(msg, "rate limit") {
		t.Errorf("message %q does not say rate limit", msg)
	}
	g := srv.GraphQL(t, admin, `{ sessions { id } }`, nil)
	if len(g.Errors) != 1 || g.Errors[0].Code() != "RATE_LIMITED" {
		t.Errorf("graphql over the burst: %+v, want RATE_LIMITED", g.Errors)
	}
}

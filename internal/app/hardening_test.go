package app_test

// Regression tests of the attacks that found the hardening issue: each sends
// what the attacker sent and asserts the bound.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	enttoken "github.com/wagraph/wagraph/ent/token"
	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/config"
)

// fragmentBomb is n fragments, each spreading the one before it twice:
// 1.4 KB for n = 40, 2^40 fields once expanded.
func fragmentBomb(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "{...F%d} fragment F0 on Query{__typename}", n-1)
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, " fragment F%d on Query{...F%d ...F%d}", i, i-1, i-1)
	}
	return b.String()
}

// TestGraphQLDocumentsAreBoundedBeforeValidation: the documents that held a
// core for minutes are refused by the document guard, naming its limit (the
// guard's own messages: gqlgen's validator words its refusals otherwise,
// and accepts a fragment bomb to spend minutes on it), and the server
// answers the next query. What a refusal costs is measured, not timed
// here: graph's BenchmarkDocumentGuard and BenchmarkWorstDocument.
func TestGraphQLDocumentsAreBoundedBeforeValidation(t *testing.T) {
	srv := apptest.Start(t, apptest.Config(t))
	tests := []struct {
		name, query, limit string
	}{
		{"fragment bomb, 40 levels", fragmentBomb(40), "once its fragments are expanded"},
		{"fragment bomb, 26 levels", fragmentBomb(26), "once its fragments are expanded"},
		{"14,000 fields", "{ " + strings.Repeat("__typename ", 14000) + "}", "the limit is 500 fields, fragment spreads and inline fragments"},
		{"deep nesting", "{ viewer { user { id } } " + strings.Repeat("__type(name: \"Query\") { fields { type { ", 6) + "name" + strings.Repeat(" } } }", 6) + " }", "nests fields"},
		{"self-spreading fragment", "{...A} fragment A on Query { ...A }", "spreads itself"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := srv.GraphQL(t, apptest.AdminToken, tt.query, nil)
			if len(res.Errors) != 1 || res.Errors[0].Code() != "BAD_USER_INPUT" || !strings.Contains(res.Errors[0].Message, tt.limit) {
				t.Fatalf("errors %+v; want one BAD_USER_INPUT naming %q", res.Errors, tt.limit)
			}
			var v struct {
				Viewer struct{ User struct{ Name string } }
			}
			srv.MustGraphQL(t, apptest.AdminToken, `{ viewer { user { name } } }`, nil, &v)
			if v.Viewer.User.Name != "admin" {
				t.Errorf("the next query answered %+v", v)
			}
		})
	}
	// The introspection query GraphiQL sends stays within the limits.
	if res := srv.GraphQL(t, apptest.AdminToken, introspectionQuery, nil); len(res.Errors) > 0 {
		t.Errorf("introspection refused: %+v", res.Errors)
	}
}

// introspectionQuery is GraphiQL's.
const introspectionQuery = `query IntrospectionQuery { __schema { queryType { name } mutationType { name } subscriptionType { name }
 types { ...FullType } directives { name description locations args { ...InputValue } } } }
fragment FullType on __Type { kind name description fields(includeDeprecated: true) { name description args { ...InputValue }
 type { ...TypeRef } isDeprecated deprecationReason } inputFields { ...InputValue } interfaces { ...TypeRef }
 enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason } possibleTypes { ...TypeRef } }
fragment InputValue on __InputValue { name description type { ...TypeRef } defaultValue }
fragment TypeRef on __Type { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name
 ofType { kind name ofType { kind name ofType { kind name } } } } } } } }`

func limitedConfig(t *testing.T) config.Config {
	cfg := apptest.Config(t)
	cfg.Rate = config.Rate{Per: 20, Burst: 100}
	return cfg
}

// aliased is a mutation of n aliased createSessionToken fields.
func aliased(n int) string {
	var b strings.Builder
	b.WriteString("mutation($s: ID!) {")
	for i := range n {
		fmt.Fprintf(&b, " t%d: createSessionToken(sessionId: $s)", i)
	}
	b.WriteString(" }")
	return b.String()
}

// TestRateLimitPerOperation: each aliased mutation field is charged, so one
// request cannot do what a hundred requests may not.
func TestRateLimitPerOperation(t *testing.T) {
	srv := apptest.Start(t, limitedConfig(t))
	sid := srv.CreateSession(t, "h")
	db := openData(t, srv.Config)
	defer db.Close()
	tokens := func() int {
		return db.Token.Query().Where(enttoken.SessionID(sid)).CountX(context.Background())
	}
	before := tokens()

	res := srv.GraphQL(t, apptest.AdminToken, aliased(300), map[string]any{"s": sid})
	if len(res.Errors) != 1 || res.Errors[0].Code() != "RATE_LIMITED" || !strings.Contains(res.Errors[0].Message, "300 operations") {
		t.Fatalf("300 aliased mutations: errors %+v; want one RATE_LIMITED naming 300 operations", res.Errors)
	}
	for range 3 { // however often it is tried
		srv.GraphQL(t, apptest.AdminToken, aliased(60), map[string]any{"s": sid})
	}
	if n := tokens() - before; n > 100 {
		t.Fatalf("%d mutations performed; the limit allows at most 100", n)
	} else if n == 0 {
		t.Fatalf("no mutation performed: the limit refused even what it allows")
	}
}

// TestRateLimitWebsocketOperations: operations on one socket meet the
// token's limit like requests do.
func TestRateLimitWebsocketOperations(t *testing.T) {
	srv := apptest.Start(t, limitedConfig(t))
	conn := srv.DialWebsocket(t, "graphql-transport-ws", nil)
	send(t, conn, `{"type":"connection_init","payload":{"Authorization":"`+apptest.AdminToken+`"}}`)
	if m, err := next(t, conn); err != nil || m["type"] != "connection_ack" {
		t.Fatalf("init: %v %v", m, err)
	}
	const ops = 300
	for i := range ops {
		send(t, conn, fmt.Sprintf(`{"id":"%d","type":"subscribe","payload":{"query":"{ viewer { user { id } } }"}}`, i))
	}
	answered, limited := 0, 0
	for answered+limited < ops {
		m, err := next(t, conn)
		if err != nil {
			t.Fatalf("after %d answers and %d refusals: %v", answered, limited, err)
		}
		b, _ := json.Marshal(m["payload"])
		switch {
		case m["type"] == "next" && !strings.Contains(string(b), `"errors"`):
			answered++
		case m["type"] == "next" || m["type"] == "error":
			if !strings.Contains(string(b), "RATE_LIMITED") {
				t.Fatalf("%s %s; want RATE_LIMITED", m["type"], b)
			}
			limited++
		}
	}
	// 100 of burst, plus what 20/s refills while the test runs.
	if answered > 120 || limited == 0 {
		t.Fatalf("%d of %d operations ran, %d refused; want at most the burst of 100 (and some refill)", answered, ops, limited)
	}
}

// TestRequestsWithoutTokenAreLimited: guessing tokens, or sending nothing,
// meets the limit of the client's address.
func TestRequestsWithoutTokenAreLimited(t *testing.T) {
	srv := apptest.Start(t, limitedConfig(t))
	counts := map[int]int{}
	for i := range 150 {
		token := ""
		if i%2 == 1 {
			token = "wgu_guess" + fmt.Sprint(i)
		}
		counts[srv.REST(t, "GET", "/session", token, "").Status]++
	}
	if counts[http.StatusTooManyRequests] == 0 || counts[http.StatusUnauthorized] > 120 {
		t.Fatalf("statuses %v; want 401 up to the burst, then 429", counts)
	}
	// A valid token has its own bucket.
	if res := srv.REST(t, "GET", "/session", apptest.AdminToken, ""); res.Status != http.StatusOK {
		t.Fatalf("admin: %d %s", res.Status, res.Body)
	}
}

// TestBadConnectionInitIsClosed: a connection_init payload that is not an
// object, or whose token is not a string, closes the socket with 4400.
func TestBadConnectionInitIsClosed(t *testing.T) {
	srv := apptest.Start(t, apptest.Config(t))
	for _, payload := range []string{`"x"`, `[1,2]`, `42`, `true`, `{"Authorization":5}`, `{"token":{"a":1}}`} {
		for _, proto := range []string{"graphql-transport-ws", "graphql-ws"} {
			t.Run(proto+" "+payload, func(t *testing.T) {
				conn := srv.DialWebsocket(t, proto, nil)
				send(t, conn, `{"type":"connection_init","payload":`+payload+`}`)
				var err error
				for err == nil {
					_, err = next(t, conn)
				}
				ce, ok := err.(*websocket.CloseError)
				if !ok || ce.Code != 4400 {
					t.Fatalf("got %v; want close 4400", err)
				}
			})
		}
	}
}

// TestSSESubscription: a subscription over server-sent events streams its
// results (the access log's wrapper keeps Flush).
func TestSSESubscription(t *testing.T) {
	srv := apptest.Start(t, apptest.Config(t))
	sid := srv.CreateSession(t, "h")
	body, _ := json.Marshal(map[string]any{
		"query":     `subscription($s: ID!) { sessionStatus(sessionId: $s) { id status } }`,
		"variables": map[string]any{"s": sid},
	})
	req, _ := http.NewRequest("POST", srv.URL+"/graphql", strings.NewReader(string(body)))
	req.Header.Set("Authorization", apptest.AdminToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := srv.Client().Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("status %d %s: %s", res.StatusCode, res.Header.Get("Content-Type"), b)
	}
	sc := bufio.NewScanner(res.Body)
	var event string
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "event: ") {
			event = strings.TrimPrefix(line, "event: ")
		}
		if strings.HasPrefix(line, "data: ") && event == "next" {
			if !strings.Contains(line, sid) || !strings.Contains(line, "DISCONNECTED") {
				t.Fatalf("data %s; want the session's status", line)
			}
			return
		}
	}
	t.Fatalf("no `event: next` before the stream ended (%v)", sc.Err())
}

// TestBodiesAreReadOnlyWithAToken: a request without a valid token is
// answered before its body arrives, and its connection is closed.
func TestBodiesAreReadOnlyWithAToken(t *testing.T) {
	srv := apptest.Start(t, apptest.Config(t))
	for _, path := range []string{"/graphql", "/api/v1/session"} {
		t.Run(path, func(t *testing.T) {
			conn, br := rawRequest(t, srv, "POST "+path, "", 1<<30)
			_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			res, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("no answer before the body: %v", err)
			}
			if res.StatusCode != http.StatusUnauthorized || !res.Close {
				t.Fatalf("status %d, Connection: close %v; want 401 and close", res.StatusCode, res.Close)
			}
			if _, err := io.ReadAll(res.Body); err != nil {
				t.Fatalf("read the answer: %v", err)
			}
			if _, err := br.ReadByte(); err != io.EOF {
				t.Fatalf("after the answer: %v; want the connection closed (EOF)", err)
			}
		})
	}
}

// TestSlowBodyIsCut: a body sent a byte at a time is cut when
// --body-timeout is up, for a caller with a valid token too, and answered
// 408 on both APIs: gqlgen used to answer the half it could not read with
// 200 (issue 21, the slow body).
func TestSlowBodyIsCut(t *testing.T) {
	cfg := apptest.Config(t)
	cfg.BodyTimeout = time.Second
	srv := apptest.Start(t, cfg)
	for _, tt := range []struct{ name, line, want string }{
		{"REST", "POST /api/v1/session", `"status":"failed","message":"the request body did not arrive within 1s (--body-timeout)"`},
		{"GraphQL", "POST /graphql", `"code":"REQUEST_TIMEOUT"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			conn, br := rawRequest(t, srv, tt.line, apptest.AdminToken, 100)
			if _, err := conn.Write([]byte(`{"query":`)); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			stop := make(chan struct{})
			defer close(stop)
			go func() { // one byte every 200 ms, for ever
				for {
					select {
					case <-stop:
						return
					case <-time.After(200 * time.Millisecond):
						if _, err := conn.Write([]byte(" ")); err != nil {
							return
						}
					}
				}
			}()
			_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			res, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("the slow body was not cut: %v", err)
			}
			b, _ := io.ReadAll(res.Body)
			if took := time.Since(start); took > 5*time.Second || res.StatusCode != http.StatusRequestTimeout || !res.Close {
				t.Fatalf("answered %d (Connection: close %v) after %s: %s; want 408 and close after about the 1 s body timeout", res.StatusCode, res.Close, took, b)
			}
			if !strings.Contains(string(b), tt.want) {
				t.Errorf("answer %s; want it to contain %s", b, tt.want)
			}
			// Closed: EOF, or a reset when the trickle's next byte met the close.
			if _, err := br.ReadByte(); err != io.EOF && !errors.Is(err, syscall.ECONNRESET) {
				t.Fatalf("after the answer: %v; want the connection closed", err)
			}
		})
	}
}

// rawRequest opens a connection and sends a request's headers announcing a
// body of length bytes, and none of the body.
func rawRequest(t *testing.T, srv *apptest.Server, line, token string, length int64) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	head := line + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + fmt.Sprintf("Content-Length: %d\r\n", length)
	if token != "" {
		head += "Authorization: " + token + "\r\n"
	}
	if _, err := conn.Write([]byte(head + "\r\n")); err != nil {
		t.Fatal(err)
	}
	return conn, bufio.NewReader(conn)
}

// TestGraphQLBodyCap: a GraphQL body over 1 MiB is refused.
func TestGraphQLBodyCap(t *testing.T) {
	srv := apptest.Start(t, apptest.Config(t))
	body := `{"query":"{ viewer { user { id } } }","variables":{"pad":"` + strings.Repeat("x", 1<<20) + `"}}`
	res := srv.Do(t, "POST", "/graphql", apptest.AdminToken, body, map[string]string{"Content-Type": "application/json"})
	if res.Status < 400 || res.Status >= 500 {
		t.Fatalf("status %d: %s; want a 4xx refusal", res.Status, res.Body)
	}
}

// TestLongValuesAreNotEchoed: a huge bad value is answered with a short
// message quoting only its start, by both APIs and by gqlgen's own checks.
func TestLongValuesAreNotEchoed(t *testing.T) {
	srv := apptest.Start(t, apptest.Config(t))
	sid := srv.CreateSession(t, "h")
	huge := strings.Repeat("x", 512<<10)
	short := func(t *testing.T, msg string) {
		t.Helper()
		if len(msg) > 400 {
			t.Errorf("message of %d bytes (%.80q…); want a short one quoting at most the value's start", len(msg), msg)
		}
	}
	gqlCases := map[string]struct {
		query string
		vars  map[string]any
	}{
		"resolver rule":   {`mutation($s: ID!, $v: String!) { setStatusPrivacy(sessionId: $s, privacy: $v) { status } }`, map[string]any{"s": sid, "v": huge}},
		"gqlgen literal":  {`{ webhooks(sessionId: "x", page: "` + huge + `") { total } }`, nil},
		"gqlgen variable": {`query($p: Int) { webhooks(sessionId: "x", page: $p) { total } }`, map[string]any{"p": huge}},
	}
	for name, c := range gqlCases {
		t.Run(name, func(t *testing.T) {
			res := srv.GraphQL(t, apptest.AdminToken, c.query, c.vars)
			if len(res.Errors) == 0 || res.Errors[0].Code() != "BAD_USER_INPUT" {
				t.Fatalf("errors %.200v; want BAD_USER_INPUT", res.Errors)
			}
			short(t, res.Errors[0].Message)
		})
	}
	t.Run("REST", func(t *testing.T) {
		// As long as the route's body limit (64 KiB) lets it be.
		res := srv.REST(t, "PUT", "/session/"+sid+"/privacy/status", apptest.AdminToken, `{"privacy":"`+huge[:60<<10]+`"}`)
		if res.Status != http.StatusBadRequest {
			t.Fatalf("status %d; want 400", res.Status)
		}
		short(t, res.Message(t))
	})
}

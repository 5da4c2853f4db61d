package app_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/dbtest"
)

const revokedEvents = `subscription($s: ID!) { events(sessionId: $s) { id seq kind } }`

// twoProcesses starts two servers on one PostgreSQL database (a cluster
// without sessions to run), and a session with its token made on the first.
func twoProcesses(t *testing.T) (a, b *apptest.Server, sessionID, token string) {
	t.Helper()
	if !dbtest.Postgres(t) {
		t.Skip("several processes share a database on PostgreSQL only; the PostgreSQL pass runs this")
	}
	cfgA, cfgB := apptest.Config(t), apptest.Config(t)
	cfgB.DatabaseURL = cfgA.DatabaseURL
	a, b = apptest.StartLive(t, cfgA), apptest.StartLive(t, cfgB)
	var r struct {
		CreateSession struct {
			Session struct{ ID string }
			Token   string
		}
	}
	a.MustGraphQL(t, apptest.AdminToken, `mutation { createSession(name: "revoked elsewhere") { session { id } token } }`, nil, &r)
	return a, b, r.CreateSession.Session.ID, r.CreateSession.Token
}

// openSocket opens a graphql-transport-ws socket on srv with tok, acked.
func openSocket(t *testing.T, srv *apptest.Server, tok string) *websocket.Conn {
	t.Helper()
	c := srv.DialWebsocket(t, "graphql-transport-ws", nil)
	send(t, c, `{"type":"connection_init","payload":{"Authorization":"`+tok+`"}}`)
	if m, err := next(t, c); err != nil || m["type"] != "connection_ack" {
		t.Fatalf("init: %v %v", m, err)
	}
	return c
}

// streamsOf opens, on srv with tok, a subscription over each transport and
// waits until all three are registered.
func streamsOf(t *testing.T, srv *apptest.Server, tok, sessionID string) map[string]apptest.Stream {
	t.Helper()
	before := srv.App.Bus().Subscribers()
	vars := map[string]any{"s": sessionID}
	streams := map[string]apptest.Stream{
		"graphql-transport-ws": srv.SubscribeWS(t, tok, revokedEvents, vars, apptest.StreamOptions{}),
		"graphql-ws":           srv.SubscribeLegacyWS(t, tok, revokedEvents, vars, apptest.StreamOptions{}),
		"sse":                  srv.SubscribeSSE(t, tok, revokedEvents, vars, apptest.StreamOptions{}),
	}
	for i := 0; srv.App.Bus().Subscribers() != before+3; i++ {
		if i == 400 {
			t.Fatalf("%d subscribers, want %d", srv.App.Bus().Subscribers(), before+3)
		}
		time.Sleep(25 * time.Millisecond)
	}
	return streams
}

// wantEnded reads what each stream gives within a few seconds: it must end
// (closed or completed), never deliver.
func wantEnded(t *testing.T, streams map[string]apptest.Stream) {
	t.Helper()
	for name, st := range streams {
		r := st.Read(t, 10*time.Second)
		if !r.Closed && !r.Complete {
			t.Errorf("%s: still delivering after the token ended elsewhere: %+v", name, r)
		}
	}
}

// TestRevocationReachesEveryProcess: a token revoked on one process ends
// what it holds open on another at once, on all three transports, and an
// operation sent over its socket there is refused. On main before this
// change process B went on delivering and executed the operation: a
// socket's principal was fixed at connection_init and the revocation
// closed sockets only where it ran.
func TestRevocationReachesEveryProcess(t *testing.T) {
	a, b, sessionID, tok := twoProcesses(t)
	streams := streamsOf(t, b, tok, sessionID)
	sock := openSocket(t, b, tok)

	a.MustGraphQL(t, apptest.AdminToken, `mutation($t: String!) { revokeToken(token: $t) }`, map[string]any{"t": tok}, nil)

	wantEnded(t, streams)
	// The socket is closed with the reason; were it not, its next
	// operation would be refused.
	_ = sock.SetReadDeadline(time.Now().Add(10 * time.Second))
	_ = sock.WriteMessage(websocket.TextMessage, []byte(`{"id":"2","type":"subscribe","payload":{"query":"{ viewer { session { id } } }"}}`))
	m, err := next(t, sock)
	if err == nil {
		t.Fatalf("the socket on the other process answered %v after its token was revoked", m)
	}
	if ce, ok := err.(*websocket.CloseError); !ok || ce.Code != 4403 {
		t.Errorf("closed with %v, want 4403", err)
	}
	if res := b.GraphQL(t, tok, `{ viewer { session { id } } }`, nil); len(res.Errors) == 0 || res.Errors[0].Code() != "UNAUTHENTICATED" {
		t.Errorf("HTTP on the other process with the revoked token: %+v, want UNAUTHENTICATED", res)
	}
}

// TestSessionDeletionReachesEveryProcess: deleting a session on one process
// ends its tokens' streams and sockets on the other.
func TestSessionDeletionReachesEveryProcess(t *testing.T) {
	a, b, sessionID, tok := twoProcesses(t)
	streams := streamsOf(t, b, tok, sessionID)
	// The admin's own stream of the session ends too: the session is gone.
	admin := b.SubscribeWS(t, apptest.AdminToken, revokedEvents, map[string]any{"s": sessionID}, apptest.StreamOptions{})
	streams["admin's graphql-transport-ws"] = admin
	for i := 0; b.App.Bus().Subscribers() != 4; i++ {
		if i == 400 {
			t.Fatalf("%d subscribers, want 4", b.App.Bus().Subscribers())
		}
		time.Sleep(25 * time.Millisecond)
	}
	sock := openSocket(t, b, tok)

	a.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!) { deleteSession(id: $s) }`, map[string]any{"s": sessionID}, nil)

	wantEnded(t, streams)
	_ = sock.SetReadDeadline(time.Now().Add(10 * time.Second))
	if m, err := next(t, sock); err == nil {
		t.Fatalf("the socket on the other process is still open: %v", m)
	}
}

// TestSocketOperationsRecheckTheirToken: a revocation whose notice never
// reached this process (written straight to the database here) still stops
// the socket's next operation once the token's check is no longer fresh,
// as it stops an HTTP request. On main before this change the socket kept
// executing operations for as long as it stayed open.
func TestSocketOperationsRecheckTheirToken(t *testing.T) {
	srv := apptest.Start(t, apptest.Config(t))
	var r struct {
		CreateSession struct{ Token string }
	}
	srv.MustGraphQL(t, apptest.AdminToken, `mutation { createSession(name: "rechecked") { token } }`, nil, &r)
	sock := openSocket(t, srv, r.CreateSession.Token)
	op := func(id int) (map[string]any, error) {
		send(t, sock, fmt.Sprintf(`{"id":"%d","type":"subscribe","payload":{"query":"{ viewer { session { id } } }"}}`, id))
		return next(t, sock)
	}
	if m, err := op(1); err != nil || m["type"] != "next" {
		t.Fatalf("first operation: %v %v", m, err)
	}
	_, _ = next(t, sock) // complete

	db, _ := srv.RawDB(t, "wagraph.db")
	res, err := db.Exec(`UPDATE tokens SET revoked_at = CURRENT_TIMESTAMP WHERE kind = 'session'`)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("%d tokens revoked, want 1", n)
	}
	// Past the few seconds a check is reused (auth's tokenCacheTTL).
	time.Sleep(5500 * time.Millisecond)
	_ = sock.SetReadDeadline(time.Now().Add(10 * time.Second))
	m, err := op(2)
	if err == nil {
		if m["type"] == "next" {
			if p, _ := m["payload"].(map[string]any); p["data"] != nil {
				t.Fatalf("an operation ran with a revoked token: %v", m)
			}
		}
		// Refused: the socket then closes.
		for err == nil {
			_, err = next(t, sock)
		}
	}
	if ce, ok := err.(*websocket.CloseError); !ok || ce.Code != 4403 {
		t.Errorf("socket ended with %v, want a 4403 close", err)
	}
}

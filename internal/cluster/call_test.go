package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/logtest"
	"github.com/wagraph/wagraph/internal/requestid"
	"github.com/wagraph/wagraph/internal/sessions"
	"github.com/wagraph/wagraph/internal/storage"
	"github.com/wagraph/wagraph/whatsapp"
)

// callTTL: the signed-call tests do not run the ticks, so their processes'
// rows and leases must outlive the test.
const callTTL = time.Minute

// callTarget is the listener of a process the others forward calls to,
// counting the calls it answers.
type callTarget struct {
	srv *httptest.Server
	mu  sync.Mutex
	h   http.Handler
	n   int
}

func newCallTarget(t *testing.T) *callTarget {
	t.Helper()
	c := &callTarget{}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.n++
		h := c.h
		c.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *callTarget) addr() string { return c.srv.Listener.Addr().String() }

func (c *callTarget) serve(h http.Handler) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.h = h
}

func (c *callTarget) calls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// newTestRouter returns n's router over a manager of its own (which runs
// nothing: the sessions are stored, never connected).
func newTestRouter(t *testing.T, n *Node, d *storage.DB) (*Router, *whatsapp.Manager) {
	t.Helper()
	store, err := whatsapp.OpenStore(context.Background(), filepath.Join(t.TempDir(), "whatsmeow.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	statuses := sessions.NewStatusStore(d.Ent)
	m := whatsapp.NewManager(whatsapp.ManagerOptions{Store: store, Statuses: statuses})
	t.Cleanup(m.Close)
	return NewRouter(n, m, statuses, nil, nil), m
}

// TestCallHandler: the call handler runs only calls signed with its own
// process's key within the allowed clock skew, bounded in size, of a known
// operation, and only for a session its process holds (MOVED otherwise).
func TestCallHandler(t *testing.T) {
	_, d := openCluster(t)
	ids := createSessions(t, d.Ent, 2)
	held, free := ids[0], ids[1]
	w := newWorld()
	target := newCallTarget(t)
	b := join(t, d.SQL, w.local("b"), callTTL, target.addr())
	other := join(t, d.SQL, w.local("other"), callTTL, "")
	rb, _ := newTestRouter(t, b, d)
	const maxBody = 1024
	target.serve(rb.Handler(maxBody))
	if took, err := b.Claim(context.Background(), held); err != nil || !took {
		t.Fatalf("claim: %v, %v", took, err)
	}

	callBody := func(session, op string) []byte {
		body, _ := json.Marshal(call{Session: session, Op: op, Args: json.RawMessage("{}")})
		return body
	}
	now := func() string { return strconv.FormatInt(time.Now().Unix(), 10) }
	tests := []struct {
		name       string
		method     string
		body       []byte
		ts         string
		secret     []byte // signs the call; nil: unsigned
		path       string // signed; CallPath when empty
		noKey      bool   // without the key's proof (the header checked before the body is read)
		nonce      string // the nonce sent and signed; a fresh one when empty, none when "-"
		wantStatus int
		wantCode   string // the reply's error code, on 200
	}{
		{name: "held session", body: callBody(held, whatsapp.OpStatus().Name()), ts: now(), secret: b.secret, wantStatus: http.StatusOK},
		{name: "session not held here", body: callBody(free, whatsapp.OpStatus().Name()), ts: now(), secret: b.secret, wantStatus: http.StatusOK, wantCode: codeMoved},
		{name: "unsigned", body: callBody(held, whatsapp.OpStatus().Name()), ts: now(), wantStatus: http.StatusUnauthorized},
		{name: "a large body without the key's proof", body: callBody(held, strings.Repeat("x", 10*maxBody)), ts: now(), secret: b.secret, noKey: true, wantStatus: http.StatusUnauthorized},
		{name: "signed with another process's key", body: callBody(held, whatsapp.OpStatus().Name()), ts: now(), secret: other.secret, wantStatus: http.StatusUnauthorized},
		{name: "signed for another path", body: callBody(held, whatsapp.OpStatus().Name()), ts: now(), secret: b.secret, path: "/elsewhere", wantStatus: http.StatusUnauthorized},
		{name: "timestamp too old", body: callBody(held, whatsapp.OpStatus().Name()), ts: strconv.FormatInt(time.Now().Add(-callSkew-5*time.Second).Unix(), 10), secret: b.secret, wantStatus: http.StatusUnauthorized},
		{name: "timestamp too far ahead", body: callBody(held, whatsapp.OpStatus().Name()), ts: strconv.FormatInt(time.Now().Add(callSkew+5*time.Second).Unix(), 10), secret: b.secret, wantStatus: http.StatusUnauthorized},
		{name: "timestamp not a number", body: callBody(held, whatsapp.OpStatus().Name()), ts: "yesterday", secret: b.secret, wantStatus: http.StatusUnauthorized},
		{name: "no nonce", body: callBody(held, whatsapp.OpStatus().Name()), ts: now(), secret: b.secret, nonce: "-", wantStatus: http.StatusUnauthorized},
		{name: "nonce too short", body: callBody(held, whatsapp.OpStatus().Name()), ts: now(), secret: b.secret, nonce: "c2hvcnQ", wantStatus: http.StatusUnauthorized},
		{name: "nonce not base64url", body: callBody(held, whatsapp.OpStatus().Name()), ts: now(), secret: b.secret, nonce: "not a nonce at all, no", wantStatus: http.StatusUnauthorized},
		{name: "body too large", body: callBody(held, strings.Repeat("x", maxBody)), ts: now(), secret: b.secret, wantStatus: http.StatusRequestEntityTooLarge},
		{name: "unknown operation", body: callBody(held, "format"), ts: now(), secret: b.secret, wantStatus: http.StatusBadRequest},
		{name: "no session", body: callBody("", whatsapp.OpStatus().Name()), ts: now(), secret: b.secret, wantStatus: http.StatusBadRequest},
		{name: "not JSON", body: []byte("status please"), ts: now(), secret: b.secret, wantStatus: http.StatusBadRequest},
		{name: "not a POST", method: http.MethodGet, ts: now(), secret: b.secret, wantStatus: http.StatusMethodNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method := cmpOr(tt.method, http.MethodPost)
			req, err := http.NewRequest(method, target.srv.URL+CallPath, bytes.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set(headerTimestamp, tt.ts)
			nonce := cmpOr(tt.nonce, newNonce())
			if nonce != "-" {
				req.Header.Set(headerNonce, nonce)
			}
			if tt.secret != nil {
				req.Header.Set(headerSignature, sign(tt.secret, tt.ts, nonce, cmpOr(tt.path, CallPath), tt.body))
				if !tt.noKey {
					req.Header.Set(headerKey, keyProof(tt.secret, tt.ts, nonce))
				}
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.wantStatus)
			}
			if resp.StatusCode != http.StatusOK {
				return
			}
			var out reply
			if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.wantCode == "" && out.Error != nil:
				t.Fatalf("reply error %+v, want a result", out.Error)
			case tt.wantCode == "":
				var st whatsapp.SessionState
				if err := json.Unmarshal(out.Result, &st); err != nil || st.Status == "" {
					t.Fatalf("result %s: %v", out.Result, err)
				}
			case out.Error == nil || out.Error.Code != tt.wantCode:
				t.Fatalf("reply %+v, want error %s", out, tt.wantCode)
			}
		})
	}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// TestRouterForwards: a process's Router runs an operation on a session
// another process holds over a signed call to it; a holder that let go of
// the session answers MOVED, and the caller, finding it still named,
// reports the session moving rather than running it twice; a session
// nobody runs is answered from its stored record without a call.
func TestRouterForwards(t *testing.T) {
	_, d := openCluster(t)
	ids := createSessions(t, d.Ent, 3)
	held, dropped, idle := ids[0], ids[1], ids[2]
	ctx := context.Background()
	w := newWorld()
	target := newCallTarget(t)
	a := join(t, d.SQL, w.local("a"), callTTL, "")
	b := join(t, d.SQL, w.local("b"), callTTL, target.addr())
	ra, _ := newTestRouter(t, a, d)
	rb, mb := newTestRouter(t, b, d)
	target.serve(rb.Handler(1 << 20))
	for _, id := range []string{held, dropped} {
		if took, err := b.Claim(ctx, id); err != nil || !took {
			t.Fatalf("claim %s: %v, %v", id, took, err)
		}
	}
	// b lost track of one (its lease still names it): it must not run
	// operations on it.
	b.mu.Lock()
	delete(b.held, dropped)
	b.mu.Unlock()
	if _, err := d.SQL.Exec(`UPDATE sessions SET status = 'CONNECTED', push_name = 'stored' WHERE id = $1`, idle); err != nil {
		t.Fatal(err)
	}

	t.Run("status of a session another process holds", func(t *testing.T) {
		before := target.calls()
		got, err := ra.Status(ctx, held)
		if err != nil {
			t.Fatal(err)
		}
		if target.calls() != before+1 {
			t.Errorf("%d calls to the holder, want 1", target.calls()-before)
		}
		want, err := mb.Status(ctx, held)
		if err != nil {
			t.Fatal(err)
		}
		if !sameState(got, want) {
			t.Errorf("forwarded status %+v, the holder's %+v", got, want)
		}
	})
	t.Run("operation on a session its holder let go of", func(t *testing.T) {
		before := target.calls()
		_, err := whatsapp.OpConnect().Do(ctx, ra, dropped, none{})
		if fault.CodeOf(err) != fault.NotConnected {
			t.Fatalf("Connect: %v, want %s", err, fault.NotConnected)
		}
		if n := target.calls() - before; n != 2 {
			t.Errorf("%d calls to the named holder, want 2 (one retry after MOVED)", n)
		}
		if a.Holds(dropped) || w.runnerOf(dropped) != "b" {
			t.Errorf("after MOVED: a holds it %v, runner %q; want b's lease untouched", a.Holds(dropped), w.runnerOf(dropped))
		}
	})
	t.Run("status of a session nobody runs", func(t *testing.T) {
		before := target.calls()
		got, err := ra.Status(ctx, idle)
		if err != nil {
			t.Fatal(err)
		}
		if target.calls() != before {
			t.Errorf("%d calls for a session nobody holds", target.calls()-before)
		}
		// A CONNECTED left behind by a process reads DISCONNECTED, with
		// the reason.
		if got.Status != whatsapp.StatusDisconnected || got.PushName != "stored" || got.Reason == "" {
			t.Errorf("status %+v, want the stored record as nobody runs it, with a reason", got)
		}
		if a.Holds(idle) || b.Holds(idle) {
			t.Errorf("reading a status claimed the session")
		}
	})
}

// TestForwardedErrors: a classified error travels to the caller with its
// code, field and message; anything else arrives as an internal failure
// without its details; a caller with the wrong key is refused.
func TestForwardedErrors(t *testing.T) {
	_, d := openCluster(t)
	ids := createSessions(t, d.Ent, 1)
	ctx := context.Background()
	w := newWorld()
	target := newCallTarget(t)
	a := join(t, d.SQL, w.local("a"), callTTL, "")
	b := join(t, d.SQL, w.local("b"), callTTL, target.addr())
	type echo struct{ Text string }
	ops := map[string]op{
		"echo": opOf(func(_ context.Context, id string, e echo) (echo, error) { return echo{Text: id + ":" + e.Text}, nil }),
		"invalid": opOf(func(context.Context, string, echo) (none, error) {
			return none{}, fault.InvalidField("text", "text must not be empty")
		}),
		"boom": opOf(func(context.Context, string, echo) (none, error) {
			return none{}, errors.New("connection to 10.0.0.7 refused (password=hunter2)")
		}),
	}
	target.serve(&callServer{node: b, ops: ops, maxBody: 1 << 20, seen: newSeenCache(maxSeen), log: b.log})
	if took, err := b.Claim(ctx, ids[0]); err != nil || !took {
		t.Fatalf("claim: %v, %v", took, err)
	}
	h, err := a.HolderOf(ctx, ids[0])
	if err != nil || h.Node != b.ID() || h.Self {
		t.Fatalf("HolderOf: %+v, %v", h, err)
	}
	c := newCaller(a, nil)

	var got echo
	if err := c.do(ctx, h, ids[0], "echo", echo{Text: "hi"}, &got); err != nil || got.Text != ids[0]+":hi" {
		t.Errorf("echo: %+v, %v", got, err)
	}
	err = c.do(ctx, h, ids[0], "invalid", echo{}, nil)
	if f := fault.From(err); f == nil || f.Code != fault.Invalid || f.Field != "text" || f.Message != "text must not be empty" {
		t.Errorf("invalid: %#v, want the fault as raised", err)
	}
	err = c.do(ctx, h, ids[0], "boom", echo{}, nil)
	if err == nil || strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "10.0.0.7") || fault.From(err) != nil {
		t.Errorf("boom: %v, want an unclassified error without the cause's details", err)
	}
	wrong := h
	wrong.secret = a.secret
	if err := c.do(ctx, wrong, ids[0], "echo", echo{}, nil); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("signed with the wrong key: %v, want 401", err)
	}
}

// TestForwardedCauseLogged (issue 23): a forwarded operation that WhatsApp
// refuses crosses the hop as its client-safe fault only; the process
// holding the session logs the whatsmeow error with the session, the op,
// the calling process and the caller's request id, and the caller logs the
// same request id, so the two logs join. A refusal of the caller's input
// is not logged as a failure.
func TestForwardedCauseLogged(t *testing.T) {
	_, d := openCluster(t)
	ids := createSessions(t, d.Ent, 1)
	w := newWorld()
	target := newCallTarget(t)
	aLog, aBuf := logtest.New(slog.LevelDebug)
	bLog, bBuf := logtest.New(slog.LevelDebug)
	a, err := New(Options{DB: d.SQL, TTL: callTTL, Logger: aLog})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Join(context.Background(), w.local("a")); err != nil {
		t.Fatal(err)
	}
	b, err := New(Options{DB: d.SQL, TTL: callTTL, Advertise: target.addr(), Logger: bLog})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Join(context.Background(), w.local("b")); err != nil {
		t.Fatal(err)
	}
	type text struct{ Text string }
	whatsmeowErr := errors.New("server returned error 479")
	ops := map[string]op{
		"sendText": opOf(func(context.Context, string, text) (none, error) {
			return none{}, fault.Wrap(whatsmeowErr, fault.WhatsAppError, "WhatsApp did not take the message")
		}),
		"invalid": opOf(func(context.Context, string, text) (none, error) {
			return none{}, fault.InvalidField("text", "text must not be empty")
		}),
	}
	target.serve(&callServer{node: b, ops: ops, maxBody: 1 << 20, seen: newSeenCache(maxSeen), log: b.log})
	ctx := context.Background()
	if took, err := b.Claim(ctx, ids[0]); err != nil || !took {
		t.Fatalf("claim: %v, %v", took, err)
	}
	h, err := a.HolderOf(ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	c := newCaller(a, nil)

	err = c.do(requestid.With(ctx, "req-7f3a"), h, ids[0], "sendText", text{Text: "hi"}, nil)
	if f := fault.From(err); f == nil || f.Code != fault.WhatsAppError || strings.Contains(err.Error(), "479") {
		t.Fatalf("sendText: %v, want the WhatsApp fault without its cause", err)
	}
	held := bBuf.Lines("a forwarded operation failed", "server returned error 479", "req-7f3a", ids[0], "sendText", a.ID())
	if len(held) != 1 {
		t.Errorf("the holder's log has no line with the cause, the session, the op, the caller and the request id:\n%s", bBuf)
	}
	calling := aBuf.Lines("a forwarded operation failed", "req-7f3a", ids[0], "sendText", b.ID())
	if len(calling) != 1 {
		t.Errorf("the caller's log has no line with the request id, the session, the op and the holder:\n%s", aBuf)
	}

	if err := c.do(requestid.With(ctx, "req-8b2c"), h, ids[0], "invalid", text{}, nil); fault.CodeOf(err) != fault.Invalid {
		t.Fatalf("invalid: %v", err)
	}
	if lines := append(bBuf.Lines("req-8b2c"), aBuf.Lines("req-8b2c")...); len(lines) != 0 {
		t.Errorf("a refused input was logged as a failure: %q", lines)
	}
}

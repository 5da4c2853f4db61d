package app_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/cluster"
	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// forwarded stands before a process of a cluster as its advertised
// address: it records the calls the other processes forward to it (the
// session and op of each) and hands them on.
type forwarded struct {
	to atomic.Pointer[httputil.ReverseProxy]

	mu    sync.Mutex
	calls []string // "session op"
}

// routedProcesses starts two processes of a cluster on one database and one
// simulated network: b, whose calls forwarded to it pass through calls,
// and a.
func routedProcesses(t *testing.T) (a, b *apptest.Server, network *wafake.Network, calls *forwarded) {
	t.Helper()
	network, control := apptest.RemoteNetwork(t)
	cfgA, cfgB := apptest.SandboxConfig(t), apptest.SandboxConfig(t)
	cfgB.DatabaseURL = cfgA.DatabaseURL
	cfgA.SandboxNetwork, cfgB.SandboxNetwork = control, control
	calls = &forwarded{}
	proxy := httptest.NewServer(calls)
	t.Cleanup(proxy.Close)
	cfgB.AdvertiseAddr = proxy.Listener.Addr().String()
	b = apptest.StartLive(t, cfgB)
	calls.target(t, b.URL)
	a = apptest.StartLive(t, cfgA)
	return a, b, network, calls
}

func (f *forwarded) target(t *testing.T, base string) {
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	f.to.Store(httputil.NewSingleHostReverseProxy(u))
}

func (f *forwarded) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if r.URL.Path == cluster.CallPath {
		var c struct{ Session, Op string }
		_ = json.Unmarshal(body, &c)
		f.mu.Lock()
		f.calls = append(f.calls, c.Session+" "+c.Op)
		f.mu.Unlock()
	}
	p := f.to.Load()
	if p == nil {
		http.Error(w, "not started", http.StatusServiceUnavailable)
		return
	}
	p.ServeHTTP(w, r)
}

// of returns the calls recorded for session id.
func (f *forwarded) of(id string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		if len(c) > len(id) && c[:len(id)+1] == id+" " {
			out = append(out, c)
		}
	}
	return out
}

// statusOf reads a sessionStatus result's status.
func statusOf(t *testing.T, r apptest.Result) string {
	t.Helper()
	if len(r.Errors) > 0 || r.Complete || r.Closed {
		t.Fatalf("the stream ended or failed: %+v", r)
	}
	var d struct{ SessionStatus struct{ Status string } }
	if err := json.Unmarshal(r.Data, &d); err != nil {
		t.Fatalf("result %s: %v", r.Data, err)
	}
	return d.SessionStatus.Status
}

// TestSessionStatusAcrossProcesses: a subscriber to sessionStatus on one
// process of a cluster sees a session that another process runs go
// DISCONNECTED and back CONNECTED, each within 2 s, from the session's
// events on the bus: no call is forwarded to the holder for it once the
// state was read at the start. On main before this change the stream
// polled the holder's state (a forwarded status call) every second.
func TestSessionStatusAcrossProcesses(t *testing.T) {
	if !dbtest.Postgres(t) {
		t.Skip("several processes share a database on PostgreSQL only; the PostgreSQL pass runs this")
	}
	a, b, network, calls := routedProcesses(t)

	sess := b.LinkSession(t, "4915550230001")
	defer apptest.Settle(t, network, sess)
	var owner struct{ Session struct{ Owner string } }
	a.MustGraphQL(t, apptest.AdminToken, `query($id: ID!) { session(id: $id) { owner } }`, map[string]any{"id": sess.ID}, &owner)
	if owner.Session.Owner != b.Config.NodeID {
		t.Fatalf("the session is run by %q, want the process that linked it (%s)", owner.Session.Owner, b.Config.NodeID)
	}

	stream := a.SubscribeWS(t, apptest.AdminToken, `subscription($s: ID!) { sessionStatus(sessionId: $s) { status } }`,
		map[string]any{"s": sess.ID}, apptest.StreamOptions{})
	defer stream.Close()
	if st := statusOf(t, stream.Read(t, 10*time.Second)); st != "CONNECTED" {
		t.Fatalf("first state %s, want CONNECTED", st)
	}
	before := len(calls.of(sess.ID))

	// reach reads the stream until it shows want, within 2 s of began.
	reach := func(want string, began time.Time) {
		t.Helper()
		for {
			left := time.Until(began.Add(2 * time.Second))
			if left <= 0 {
				t.Fatalf("the stream on the other process did not show %s within 2 s", want)
			}
			if st := statusOf(t, stream.Read(t, left)); st == want {
				t.Logf("%s seen on the other process after %s", want, time.Since(began).Round(time.Millisecond))
				return
			}
		}
	}
	began := time.Now()
	b.MustGraphQL(t, apptest.AdminToken, `mutation($id: ID!) { disconnectSession(id: $id) { status } }`, map[string]any{"id": sess.ID}, nil)
	reach("DISCONNECTED", began)
	// A moment in which a poll of the holder would have been made.
	time.Sleep(1500 * time.Millisecond)
	began = time.Now()
	b.MustGraphQL(t, apptest.AdminToken, `mutation($id: ID!) { connectSession(id: $id) { status } }`, map[string]any{"id": sess.ID}, nil)
	reach("CONNECTED", began)

	if made := calls.of(sess.ID)[before:]; len(made) != 0 {
		t.Errorf("%d calls forwarded to the holder while the stream followed the session: %q; want none", len(made), made)
	}
}

// TestSessionStatusesStream: sessionStatuses gives every session the token
// reaches now, then each change, in one stream; a session deleted meanwhile
// comes once more with session null, and the stream goes on with the
// others.
func TestSessionStatusesStream(t *testing.T) {
	srv := apptest.StartSandbox(t)
	kept, deleted := srv.CreateSession(t, "kept"), srv.CreateSession(t, "deleted")
	stream := srv.SubscribeWS(t, apptest.AdminToken, `subscription { sessionStatuses { sessionId session { id name status qrCode } } }`,
		nil, apptest.StreamOptions{})
	defer stream.Close()
	type event struct {
		SessionID string
		Session   *struct {
			ID, Name, Status string
			QRCode           *string
		}
	}
	next := func() event {
		t.Helper()
		r := stream.Read(t, 20*time.Second)
		if len(r.Errors) > 0 || r.Complete || r.Closed {
			t.Fatalf("the stream ended or failed: %+v", r)
		}
		var d struct{ SessionStatuses event }
		if err := json.Unmarshal(r.Data, &d); err != nil {
			t.Fatalf("result %s: %v", r.Data, err)
		}
		return d.SessionStatuses
	}
	first := map[string]string{}
	for range 2 {
		ev := next()
		if ev.Session == nil || ev.Session.ID != ev.SessionID {
			t.Fatalf("first event %+v, want the session now", ev)
		}
		first[ev.SessionID] = ev.Session.Status
	}
	if first[kept] != "DISCONNECTED" || first[deleted] != "DISCONNECTED" {
		t.Fatalf("first states %v, want both sessions DISCONNECTED", first)
	}

	srv.MustGraphQL(t, apptest.AdminToken, `mutation($id: ID!) { deleteSession(id: $id) }`, map[string]any{"id": deleted}, nil)
	if ev := next(); ev.SessionID != deleted || ev.Session != nil {
		t.Fatalf("after the delete: %+v, want %s with session null", ev, deleted)
	}
	srv.MustGraphQL(t, apptest.AdminToken, `mutation($id: ID!) { connectSession(id: $id) { status } }`, map[string]any{"id": kept}, nil)
	for {
		ev := next()
		if ev.SessionID != kept || ev.Session == nil || ev.Session.Name != "kept" {
			t.Fatalf("after connecting %s: %+v", kept, ev)
		}
		if ev.Session.Status == "PAIRING" && ev.Session.QRCode != nil {
			break
		}
	}
	srv.MustGraphQL(t, apptest.AdminToken, `mutation($id: ID!) { disconnectSession(id: $id) { status } }`, map[string]any{"id": kept}, nil)
	for {
		ev := next()
		if ev.SessionID != kept || ev.Session == nil {
			t.Fatalf("after disconnecting %s: %+v", kept, ev)
		}
		if ev.Session.Status == "DISCONNECTED" {
			break
		}
	}
}

package app_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/internal/logtest"
	"github.com/wagraph/wagraph/internal/requestid"
)

// TestForwardedSendRefusalLogged (issue 23): a send made through one
// process of a cluster, for a session another process runs, that WhatsApp
// refuses (the account is not in the group: the network answers the
// group query 403, whatsmeow's ErrNotInGroup) reaches the client as the refusal; the process holding the
// session logs whatsmeow's error with the session, the op and the
// caller's request id, and the process the client called logs the same
// request id, so the two logs join.
func TestForwardedSendRefusalLogged(t *testing.T) {
	if !dbtest.Postgres(t) {
		t.Skip("several processes share a database on PostgreSQL only; the PostgreSQL pass runs this")
	}
	network, control := apptest.RemoteNetwork(t)
	cfgA, cfgB := apptest.SandboxConfig(t), apptest.SandboxConfig(t)
	cfgB.DatabaseURL = cfgA.DatabaseURL
	cfgA.SandboxNetwork, cfgB.SandboxNetwork = control, control
	logA, bufA := logtest.New(slog.LevelDebug)
	logB, bufB := logtest.New(slog.LevelDebug)
	calls := &forwarded{} // where the other process reaches b
	proxy := httptest.NewServer(calls)
	t.Cleanup(proxy.Close)
	cfgB.AdvertiseAddr = proxy.Listener.Addr().String()
	b := apptest.StartLogged(t, cfgB, logB)
	calls.target(t, b.URL)
	a := apptest.StartLogged(t, cfgA, logA)

	sess := b.LinkSession(t, "4915550230021")
	defer apptest.Settle(t, network, sess)
	var owner struct{ Session struct{ Owner string } }
	a.MustGraphQL(t, apptest.AdminToken, `query($id: ID!) { session(id: $id) { owner } }`, map[string]any{"id": sess.ID}, &owner)
	if owner.Session.Owner != cfgB.NodeID {
		t.Fatalf("the session is run by %q, want the process that linked it (%s)", owner.Session.Owner, cfgB.NodeID)
	}
	group, err := network.CreateGroup("4915550230022", "Not yours", "4915550230023")
	if err != nil {
		t.Fatal(err)
	}

	const reqID = "req-forwarded-403"
	resp := a.Do(t, http.MethodPost, "/api/v1/session/"+sess.ID+"/message/text", apptest.AdminToken,
		`{"number":"`+group.String()+`","text":"hello"}`, map[string]string{requestid.Header: reqID})
	if resp.Status == http.StatusOK || !strings.Contains(resp.Message(t), "not a participant") {
		t.Fatalf("send to a group the account is not in: %d %q, want WhatsApp's refusal", resp.Status, resp.Message(t))
	}
	if strings.Contains(resp.Message(t), "403") {
		t.Errorf("the client sees whatsmeow's error: %q", resp.Message(t))
	}
	held := bufB.Lines("a forwarded operation failed", "you're not participating in that group", reqID, sess.ID, `"op":"send"`)
	if len(held) != 1 {
		t.Errorf("the holder's log has no line with whatsmeow's error, the session, the op and the request id:\n%q",
			bufB.Lines("a forwarded operation failed"))
	}
	if calling := bufA.Lines(reqID, sess.ID); len(calling) == 0 {
		t.Errorf("the calling process's log has no line with the request id %s:\n%q", reqID, bufA.Lines(reqID))
	}
}

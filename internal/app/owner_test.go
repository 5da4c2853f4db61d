package app_test

import (
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
)

// TestSessionOwner: an admin reads which process runs a session (its
// --node-id: this process's on SQLite, the holder of the lease that the
// creating process took on PostgreSQL), and the lease's details on
// PostgreSQL; a user who is not an admin reads null for both.
func TestSessionOwner(t *testing.T) {
	cfg := apptest.Config(t)
	cfg.NodeID = "owner-test-node"
	srv := apptest.Start(t, cfg)
	var user struct{ CreateUser struct{ Token string } }
	srv.MustGraphQL(t, apptest.AdminToken, `mutation { createUser(name: "plain") { token } }`, nil, &user)
	var created struct {
		CreateSession struct{ Session struct{ ID string } }
	}
	srv.MustGraphQL(t, user.CreateUser.Token, `mutation { createSession(name: "s") { session { id } } }`, nil, &created)
	id := created.CreateSession.Session.ID

	type lease struct{ Node, Address string }
	var out struct {
		Session struct {
			Owner *string
			Lease *lease
		}
	}
	const q = `query($id: ID!) { session(id: $id) { owner lease { node address } } }`
	srv.MustGraphQL(t, apptest.AdminToken, q, map[string]any{"id": id}, &out)
	if out.Session.Owner == nil || *out.Session.Owner != cfg.NodeID {
		t.Errorf("the admin reads owner %v, want %q", out.Session.Owner, cfg.NodeID)
	}
	onPostgres := cfg.DatabaseURL != ""
	if l := out.Session.Lease; onPostgres != (l != nil) || (l != nil && l.Node != cfg.NodeID) {
		t.Errorf("the admin reads lease %+v; want one held by %q on PostgreSQL only", l, cfg.NodeID)
	}

	out.Session.Owner, out.Session.Lease = nil, nil
	srv.MustGraphQL(t, user.CreateUser.Token, q, map[string]any{"id": id}, &out)
	if out.Session.Owner != nil || out.Session.Lease != nil {
		t.Errorf("a user who is not an admin reads owner %v, lease %+v; want null", out.Session.Owner, out.Session.Lease)
	}
	res := srv.Do(t, "GET", "/api/v1/session/"+id, user.CreateUser.Token, "", nil)
	if res.Status != 200 || strings.Contains(string(res.Body), `"owner"`) {
		t.Errorf("a user's REST session record: %d %s; want 200 without owner", res.Status, res.Body)
	}
	res = srv.Do(t, "GET", "/api/v1/session/"+id, apptest.AdminToken, "", nil)
	if res.Status != 200 || !strings.Contains(string(res.Body), `"owner":"owner-test-node"`) {
		t.Errorf("the admin's REST session record: %d %s; want its owner", res.Status, res.Body)
	}
}

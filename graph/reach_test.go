package graph_test

import (
	"net/http"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
)

// TestSessionDeletionSeenAtOnce checks that the session owner cache never
// lets a deleted session be reached: each list right after the delete is a
// 404, whether the cache held the session (it was just listed) or not.
func TestSessionDeletionSeenAtOnce(t *testing.T) {
	srv := apptest.Start(t, apptest.Config(t))
	admin := apptest.AdminToken
	for _, via := range []string{"rest", "graphql"} {
		t.Run(via, func(t *testing.T) {
			id := srv.CreateSession(t, "doomed")
			// Twice: the first read fills the cache, the second is served
			// from it.
			for range 2 {
				if res := srv.REST(t, "GET", "/session/"+id+"/webhook", admin, ""); res.Status != http.StatusOK {
					t.Fatalf("list before delete: %d %s", res.Status, res.Body)
				}
			}
			switch via {
			case "rest":
				if res := srv.REST(t, "DELETE", "/session/"+id, admin, ""); res.Status != http.StatusOK {
					t.Fatalf("delete: %d %s", res.Status, res.Body)
				}
			case "graphql":
				srv.MustGraphQL(t, admin, `mutation($id: ID!) { deleteSession(id: $id) }`, map[string]any{"id": id}, nil)
			}
			if res := srv.REST(t, "GET", "/session/"+id+"/webhook", admin, ""); res.Status != http.StatusNotFound {
				t.Fatalf("REST list after delete: %d %s, want 404", res.Status, res.Body)
			}
			res := srv.GraphQL(t, admin, `query($id: ID!) { webhooks(sessionId: $id) { total } }`, map[string]any{"id": id})
			if len(res.Errors) != 1 || res.Errors[0].Code() != "NOT_FOUND" {
				t.Fatalf("GraphQL webhooks after delete: %+v, want one NOT_FOUND", res.Errors)
			}
		})
	}
}

// TestSessionReachIsPerCaller checks that a cached owner answers each caller
// by its own rights: another user and another session's token do not reach
// a session the admin has just read (and so cached), its own token does.
func TestSessionReachIsPerCaller(t *testing.T) {
	srv := apptest.Start(t, apptest.Config(t))
	admin := apptest.AdminToken
	var created struct {
		CreateSession struct {
			Session struct{ ID string }
			Token   string
		}
	}
	srv.MustGraphQL(t, admin, `mutation { createSession(name: "a") { session { id } token } }`, nil, &created)
	id, sessionToken := created.CreateSession.Session.ID, created.CreateSession.Token
	srv.MustGraphQL(t, admin, `mutation { createSession(name: "b") { session { id } token } }`, nil, &created)
	otherSessionToken := created.CreateSession.Token
	var user struct{ CreateUser struct{ Token string } }
	srv.MustGraphQL(t, admin, `mutation { createUser(name: "bob") { token } }`, nil, &user)

	if res := srv.REST(t, "GET", "/session/"+id+"/webhook", admin, ""); res.Status != http.StatusOK {
		t.Fatalf("admin: %d %s", res.Status, res.Body)
	}
	for _, tc := range []struct {
		name, token string
		want        int
	}{
		{"another user", user.CreateUser.Token, http.StatusNotFound},
		{"another session's token", otherSessionToken, http.StatusNotFound},
		{"its own token", sessionToken, http.StatusOK},
		{"its owner", admin, http.StatusOK},
	} {
		if res := srv.REST(t, "GET", "/session/"+id+"/webhook", tc.token, ""); res.Status != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, res.Status, res.Body, tc.want)
		}
	}
}

// TestViewerOfSessionToken checks that a session token of an admin answers
// viewer.user from the user's row (its principal's admin flag is false), and
// its id from the principal.
func TestViewerOfSessionToken(t *testing.T) {
	srv := apptest.Start(t, apptest.Config(t))
	var me struct {
		Viewer struct{ User struct{ ID string } }
	}
	srv.MustGraphQL(t, apptest.AdminToken, `{ viewer { user { id } } }`, nil, &me)
	var created struct{ CreateSession struct{ Token string } }
	srv.MustGraphQL(t, apptest.AdminToken, `mutation { createSession(name: "a") { token } }`, nil, &created)
	tok := created.CreateSession.Token

	var full struct {
		Viewer struct {
			User struct {
				ID    string
				Name  string
				Admin bool
			}
		}
	}
	srv.MustGraphQL(t, tok, `{ viewer { user { id name admin } } }`, nil, &full)
	if u := full.Viewer.User; u.ID != me.Viewer.User.ID || u.Name != "admin" || !u.Admin {
		t.Errorf("session token's viewer.user = %+v, want id %s, name admin, admin true", u, me.Viewer.User.ID)
	}
	var idOnly struct {
		Viewer struct{ User struct{ ID string } }
	}
	srv.MustGraphQL(t, tok, `{ viewer { user { id } } }`, nil, &idOnly)
	if idOnly.Viewer.User.ID != me.Viewer.User.ID {
		t.Errorf("session token's viewer.user.id = %s, want %s", idOnly.Viewer.User.ID, me.Viewer.User.ID)
	}
}

package graph_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
)

const createNamed = `mutation($n: String) { createSession(name: $n) { session { id name } token } }`

type createdSession struct {
	CreateSession struct {
		Session struct{ ID, Name string }
		Token   string
	}
}

// TestSessionNames: a session created without a name (or with a blank one)
// gets "session-N", N its user's count of sessions, past the names taken;
// a name is unique among its user's sessions, ignoring case and the spaces
// around it, and a second one is CONFLICT naming name; another user may
// use the same name.
func TestSessionNames(t *testing.T) {
	srv := apptest.Start(t, apptest.Config(t))
	admin := apptest.AdminToken
	var user struct{ CreateUser struct{ Token string } }
	srv.MustGraphQL(t, admin, `mutation { createUser(name: "second") { token } }`, nil, &user)
	second := user.CreateUser.Token

	create := func(t *testing.T, token string, name any) string {
		t.Helper()
		var out createdSession
		srv.MustGraphQL(t, token, createNamed, map[string]any{"n": name}, &out)
		return out.CreateSession.Session.Name
	}
	steps := []struct {
		token string
		name  any // nil: no name
		want  string
	}{
		{admin, nil, "session-1"},
		{admin, " Shop ", "Shop"},
		{admin, "", "session-3"},
		{admin, "   ", "session-4"},
		{admin, "session-6", "session-6"},
		{admin, nil, "session-7"}, // the sixth session: session-6 is taken
		{second, "Shop", "Shop"},
		{second, nil, "session-2"},
	}
	for i, st := range steps {
		if got := create(t, st.token, st.name); got != st.want {
			t.Fatalf("step %d: createSession(name: %v) named the session %q, want %q", i, st.name, got, st.want)
		}
	}
	var noName createdSession
	srv.MustGraphQL(t, admin, `mutation { createSession { session { name } } }`, nil, &noName)
	if got := noName.CreateSession.Session.Name; got != "session-8" {
		t.Errorf("createSession without the argument named the session %q, want session-8", got)
	}

	for _, dup := range []string{"Shop", "shop", "  SHOP", "SESSION-1"} {
		res := srv.GraphQL(t, admin, createNamed, map[string]any{"n": dup})
		if len(res.Errors) != 1 {
			t.Fatalf("a second session named %q: %s %+v", dup, res.Data, res.Errors)
		}
		e := res.Errors[0]
		field, _ := e.Extensions["field"].(string)
		want := fmt.Sprintf("name %q is taken by your session", strings.TrimSpace(dup))
		if e.Code() != "CONFLICT" || field != "name" || !strings.Contains(e.Message, want) {
			t.Errorf("a second session named %q: %s %q (field %q), want CONFLICT naming name: %q", dup, e.Code(), e.Message, field, want)
		}
	}

	var list struct{ Sessions []struct{ Name string } }
	srv.MustGraphQL(t, second, `{ sessions { name } }`, nil, &list)
	if len(list.Sessions) != 2 {
		t.Errorf("the second user has %d sessions, want 2: %+v", len(list.Sessions), list.Sessions)
	}
	srv.MustGraphQL(t, admin, `{ sessions { name } }`, nil, &list)
	if len(list.Sessions) != 9 { // the admin sees the second user's two as well
		t.Errorf("the admin sees %d sessions after the refusals, want 9: %+v", len(list.Sessions), list.Sessions)
	}
}

// TestSessionNamesAtOnce: creations racing for one name give one session
// and CONFLICT for the others; unnamed ones racing get distinct names.
func TestSessionNamesAtOnce(t *testing.T) {
	srv := apptest.Start(t, apptest.Config(t))
	const n = 8
	race := func(name any) []apptest.GQLResponse {
		out := make([]apptest.GQLResponse, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { out[i] = srv.GraphQL(t, apptest.AdminToken, createNamed, map[string]any{"n": name}) })
		}
		wg.Wait()
		return out
	}
	won, refused := 0, 0
	for _, res := range race("twin") {
		switch {
		case len(res.Errors) == 0:
			won++
		case res.Errors[0].Code() == "CONFLICT":
			refused++
		default:
			t.Errorf("unexpected answer: %+v", res.Errors)
		}
	}
	if won != 1 || refused != n-1 {
		t.Errorf("%d creations of \"twin\" succeeded and %d were refused, want 1 and %d", won, refused, n-1)
	}
	names := map[string]bool{}
	for _, res := range race(nil) {
		var out createdSession
		if len(res.Errors) > 0 || json.Unmarshal(res.Data, &out) != nil {
			t.Fatalf("unnamed creation: %s %+v", res.Data, res.Errors)
		}
		names[strings.ToLower(out.CreateSession.Session.Name)] = true
	}
	if len(names) != n || names["twin"] {
		t.Errorf("%d unnamed creations got the names %v, want %d distinct session-N", n, names, n)
	}
}

// TestSessionNamesThatLookAlike (issue 31): a name that reads as one of
// the user's sessions' (fullwidth, zero-width characters, another
// normalisation of its accents, other spaces) is CONFLICT as the same name
// is (said so, naming the other's name); one that could pass for another or shows other than it is (a
// bidirectional override, a word mixing scripts, nothing visible) is
// INVALID naming name. Names that read differently are kept as given.
func TestSessionNamesThatLookAlike(t *testing.T) {
	srv := apptest.Start(t, apptest.Config(t))
	admin := apptest.AdminToken
	for _, name := range []string{"Shop", "Caf\u00e9", "Ice cream", "Москва", "Tシャツ"} {
		var out createdSession
		srv.MustGraphQL(t, admin, createNamed, map[string]any{"n": name}, &out)
		if got := out.CreateSession.Session.Name; got != name {
			t.Fatalf("createSession(name: %q) named it %q", name, got)
		}
	}
	for _, tt := range []struct {
		name, code, want string
	}{
		{"Ｓｈｏｐ", "CONFLICT", "reads as the name of your session"},
		{"ｓｈｏｐ", "CONFLICT", `name "ｓｈｏｐ" reads as the name of your session`},
		{"Sh\u200bop", "CONFLICT", "reads as the name of your session"},
		{"S\u00adh\u2060op\ufe0f", "CONFLICT", "reads as the name of your session"},
		{"Cafe\u0301", "CONFLICT", "reads as the name of your session"},
		{"Ice\u00a0cream", "CONFLICT", "reads as the name of your session"},
		{"Ice  cream", "CONFLICT", "reads as the name of your session"},
		{"\u200eМосква", "CONFLICT", "reads as the name of your session"},
		{"Shop\u202e", "BAD_USER_INPUT", "name must not contain bidirectional formatting characters (U+202E;"},
		{"\u2067Shop\u2069", "BAD_USER_INPUT", "(U+2067;"},
		{"Sh\u043ep", "BAD_USER_INPUT", `name mixes scripts in one word ("Shоp": Cyrillic and Latin)`},
		{"\u200b", "BAD_USER_INPUT", "name must hold a visible character"},
	} {
		res := srv.GraphQL(t, admin, createNamed, map[string]any{"n": tt.name})
		if len(res.Errors) != 1 {
			t.Errorf("a session named %q: %s %+v, want %s", tt.name, res.Data, res.Errors, tt.code)
			continue
		}
		e := res.Errors[0]
		field, _ := e.Extensions["field"].(string)
		if e.Code() != tt.code || field != "name" || !strings.Contains(e.Message, tt.want) {
			t.Errorf("a session named %q: %s %q (field %q), want %s naming name: %q", tt.name, e.Code(), e.Message, field, tt.code, tt.want)
		}
	}
	for _, name := range []string{"Cafe", "Shop 2", "Moskva"} {
		var out createdSession
		srv.MustGraphQL(t, admin, createNamed, map[string]any{"n": name}, &out)
		if got := out.CreateSession.Session.Name; got != name {
			t.Errorf("createSession(name: %q) named it %q", name, got)
		}
	}
}

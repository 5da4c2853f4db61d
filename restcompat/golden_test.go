package restcompat_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/restcompat"
)

var update = flag.Bool("update", false, "rewrite the golden files of the REST contract")

// checkGolden compares an answer with testdata/golden/<name>.golden: the
// status line, then the body exactly as sent.
func checkGolden(t *testing.T, name string, res apptest.Response) {
	t.Helper()
	got := fmt.Appendf(nil, "HTTP %d\n%s", res.Status, res.Body)
	path := filepath.Join("testdata", "golden", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./restcompat -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s: answer differs from %s\n got: %s\nwant: %s", name, path, got, want)
	}
}

// step is one request of a scenario. Its path, token and body may name
// values captured by earlier steps as {NAME}.
type step struct {
	name         string
	method, path string
	token, body  string
	headers      map[string]string
	status       int
	capture      func(t *testing.T, res apptest.Response, vars map[string]string)
}

func expand(s string, vars map[string]string) string {
	for k, v := range vars {
		s = strings.ReplaceAll(s, "{"+k+"}", v)
	}
	return s
}

func runSteps(t *testing.T, srv *apptest.Server, vars map[string]string, steps []step) {
	t.Helper()
	for _, st := range steps {
		headers := map[string]string{"Content-Type": "application/json"}
		for k, v := range st.headers {
			headers[k] = v
		}
		res := srv.Do(t, st.method, "/api/v1"+expand(st.path, vars), expand(st.token, vars), expand(st.body, vars), headers)
		if res.Status != st.status {
			t.Fatalf("%s: %s %s: status %d, want %d: %s", st.name, st.method, st.path, res.Status, st.status, res.Body)
		}
		if ct := res.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s: Content-Type %q, want application/json", st.name, ct)
		}
		if res.Status >= 500 {
			t.Errorf("%s: server error %d: %s", st.name, res.Status, res.Body)
		}
		checkGolden(t, st.name, res)
		if res.Status < 300 {
			if err := restcompat.CheckAnswer(st.method, expand(st.path, vars), res.Body); err != nil {
				t.Errorf("%s: %v", st.name, err)
			}
		}
		if st.capture != nil {
			st.capture(t, res, vars)
		}
	}
}

// data returns the data of a success envelope.
func data(t *testing.T, res apptest.Response) map[string]any {
	t.Helper()
	var env struct {
		Status string
		Data   map[string]any
	}
	res.JSON(t, &env)
	if env.Status != "success" {
		t.Fatalf("not a success envelope: %s", res.Body)
	}
	return env.Data
}

func captureField(field, as string) func(*testing.T, apptest.Response, map[string]string) {
	return func(t *testing.T, res apptest.Response, vars map[string]string) {
		v, ok := data(t, res)[field].(string)
		if !ok {
			t.Fatalf("no %s in %s", field, res.Body)
		}
		vars[as] = v
	}
}

// TestGoldenREST walks every REST operation of the contract so far, success
// and failure, and pins each answer byte for byte.
func TestGoldenREST(t *testing.T) {
	cfg := apptest.Config(t)
	cfg.NodeID = "golden-node" // an admin's session record names it (owner)
	srv := apptest.Start(t, cfg)
	admin := apptest.AdminToken
	vars := map[string]string{"ADMIN": admin}
	var user2 struct {
		CreateUser struct {
			Token string
			User  struct{ ID string }
		}
	}
	srv.MustGraphQL(t, admin, `mutation { createUser(name: "second") { user { id } token } }`, nil, &user2)
	vars["U2"] = user2.CreateUser.Token

	runSteps(t, srv, vars, []step{
		{name: "session_create", method: "POST", path: "/session", token: "{ADMIN}", body: `{"name":"shop"}`, status: 201,
			capture: func(t *testing.T, res apptest.Response, vars map[string]string) {
				captureField("id", "S1")(t, res, vars)
				captureField("token", "TS1")(t, res, vars)
			}},
		{name: "session_create_no_body", method: "POST", path: "/session", token: "Bearer {U2}", status: 201, capture: captureField("id", "S2")},
		{name: "session_create_by_session_token", method: "POST", path: "/session", token: "{TS1}", body: `{}`, status: 403},
		{name: "session_create_no_token", method: "POST", path: "/session", body: `{}`, status: 401},
		{name: "session_create_bad_token", method: "POST", path: "/session", token: "wgu_nope", body: `{}`, status: 401},
		{name: "session_list_admin", method: "GET", path: "/session", token: "{ADMIN}", status: 200},
		{name: "session_list_user", method: "GET", path: "/session", token: "{U2}", status: 200},
		{name: "session_list_session_token", method: "GET", path: "/session", token: "{TS1}", status: 200},
		{name: "session_get", method: "GET", path: "/session/{S1}", token: "{TS1}", status: 200},
		{name: "session_get_other_user", method: "GET", path: "/session/{S1}", token: "{U2}", status: 404},
		{name: "session_get_unknown", method: "GET", path: "/session/no-such-session", token: "{ADMIN}", status: 404},

		{name: "webhook_create", method: "POST", path: "/session/{S1}/webhook", token: "{ADMIN}",
			body:   `{"url":"https://example.com/hooks/wa","displayName":"orders","enabled":true,"events":{"inbound-message.upsert":true,"messages.update":true,"call":false},"headers":{"X-Api-Key":"k-123","X-Team":"ops"}}`,
			status: 201, capture: captureField("id", "W1")},
		{name: "webhook_create_minimal", method: "POST", path: "/session/{S1}/webhook", token: "{TS1}", body: `{"url":"http://hooks.example.org:8443/in?x=1"}`, status: 201, capture: captureField("id", "W2")},
		{name: "webhook_create_disabled", method: "POST", path: "/session/{S1}/webhook", token: "{ADMIN}", body: `{"url":"https://example.net/h","enabled":false,"events":{}}`, status: 201, capture: captureField("id", "W3")},
		{name: "webhook_create_other_session", method: "POST", path: "/session/{S1}/webhook", token: "{U2}", body: `{"url":"https://example.com/h"}`, status: 404},
		{name: "webhook_create_missing_url", method: "POST", path: "/session/{S1}/webhook", token: "{ADMIN}", body: `{"displayName":"x"}`, status: 400},
		{name: "webhook_create_bad_url", method: "POST", path: "/session/{S1}/webhook", token: "{ADMIN}", body: `{"url":"example.com/hook"}`, status: 400},
		{name: "webhook_create_unknown_event", method: "POST", path: "/session/{S1}/webhook", token: "{ADMIN}", body: `{"url":"https://example.com/h","events":{"messages.upsert":true}}`, status: 400},
		{name: "webhook_create_header_number", method: "POST", path: "/session/{S1}/webhook", token: "{ADMIN}", body: `{"url":"https://example.com/h","headers":{"X-Count":3}}`, status: 400},
		{name: "webhook_create_unknown_field", method: "POST", path: "/session/{S1}/webhook", token: "{ADMIN}", body: `{"url":"https://example.com/h","secret":"mine"}`, status: 400},

		{name: "webhook_list", method: "GET", path: "/session/{S1}/webhook", token: "{ADMIN}", status: 200},
		{name: "webhook_list_page2", method: "GET", path: "/session/{S1}/webhook?page=2&pageSize=2", token: "{TS1}", status: 200},
		{name: "webhook_list_page_zero", method: "GET", path: "/session/{S1}/webhook?page=0", token: "{TS1}", status: 400},
		{name: "webhook_list_pagesize_1000", method: "GET", path: "/session/{S1}/webhook?pageSize=1000", token: "{TS1}", status: 400},
		{name: "webhook_list_other_session", method: "GET", path: "/session/{S2}/webhook", token: "{TS1}", status: 404},
		{name: "webhook_get", method: "GET", path: "/session/{S1}/webhook/{W1}", token: "{TS1}", status: 200},
		{name: "webhook_get_in_other_session", method: "GET", path: "/session/{S2}/webhook/{W1}", token: "{ADMIN}", status: 404},
		{name: "webhook_update_partial", method: "PUT", path: "/session/{S1}/webhook/{W1}", token: "{TS1}", body: `{"displayName":"orders v2","enabled":false}`, status: 200},
		{name: "webhook_update_events", method: "PUT", path: "/session/{S1}/webhook/{W1}", token: "{ADMIN}", body: `{"events":{"call":true},"headers":{}}`, status: 200},
		{name: "webhook_update_bad_url", method: "PUT", path: "/session/{S1}/webhook/{W1}", token: "{ADMIN}", body: `{"url":"ws://example.com"}`, status: 400},
		{name: "webhook_update_unknown", method: "PUT", path: "/session/{S1}/webhook/no-such-webhook", token: "{ADMIN}", body: `{"enabled":true}`, status: 404},
		{name: "webhook_update_other_user", method: "PUT", path: "/session/{S1}/webhook/{W1}", token: "{U2}", body: `{"enabled":true}`, status: 404},
		{name: "webhook_get_after_update", method: "GET", path: "/session/{S1}/webhook/{W1}", token: "{ADMIN}", status: 200},
		{name: "webhook_delete", method: "DELETE", path: "/session/{S1}/webhook/{W2}", token: "{TS1}", status: 200},
		{name: "webhook_delete_again", method: "DELETE", path: "/session/{S1}/webhook/{W2}", token: "{TS1}", status: 404},
		{name: "webhook_list_after_delete", method: "GET", path: "/session/{S1}/webhook?page=1&pageSize=20", token: "{TS1}", status: 200},

		{name: "route_unknown", method: "GET", path: "/sessions", token: "{ADMIN}", status: 404},
		{name: "route_wrong_method", method: "PATCH", path: "/session/{S1}/webhook", token: "{ADMIN}", status: 405},
		{name: "content_type_wrong", method: "POST", path: "/session", token: "{ADMIN}", body: `name=x`, headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, status: 415},

		{name: "session_delete_by_other_user", method: "DELETE", path: "/session/{S1}", token: "{U2}", status: 404},
		{name: "session_delete", method: "DELETE", path: "/session/{S1}", token: "{ADMIN}", status: 200},
		{name: "session_get_after_delete", method: "GET", path: "/session/{S1}", token: "{ADMIN}", status: 404},
		{name: "session_token_after_delete", method: "GET", path: "/session", token: "{TS1}", status: 401},

		// Names: unique among a user's sessions (ignoring case and the
		// spaces around), generated when none is given.
		{name: "session_create_name_taken", method: "POST", path: "/session", token: "{U2}", body: `{"name":" SESSION-1 "}`, status: 409},
		{name: "session_create_name_blank", method: "POST", path: "/session", token: "{U2}", body: `{"name":""}`, status: 201},
		{name: "session_create_name_freed", method: "POST", path: "/session", token: "{ADMIN}", body: `{"name":"shop"}`, status: 201},
		{name: "session_create_name_of_other_user", method: "POST", path: "/session", token: "{U2}", body: `{"name":"Shop"}`, status: 201},
	})
}

// TestBodyLimit: a body over --max-body is 413 and names the limit.
func TestBodyLimit(t *testing.T) {
	cfg := apptest.Config(t)
	cfg.MaxBody = 1 << 10
	srv := apptest.Start(t, cfg)
	var s struct {
		CreateSession struct{ Session struct{ ID string } }
	}
	srv.MustGraphQL(t, apptest.AdminToken, `mutation { createSession(name: "s") { session { id } } }`, nil, &s)
	body, _ := json.Marshal(map[string]string{"url": "https://example.com/" + strings.Repeat("a", 2000)})
	res := srv.REST(t, "POST", "/session/"+s.CreateSession.Session.ID+"/webhook", apptest.AdminToken, string(body))
	if res.Status != 413 {
		t.Fatalf("status %d, want 413: %s", res.Status, res.Body)
	}
	checkGolden(t, "body_too_large", res)
}

package e2e

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/logtest"
	"github.com/wagraph/wagraph/whatsapp"
)

// ofRequest returns the log lines of request id, the access log's debug
// line apart. It decodes the lines itself rather than taking Records, which
// skips a line that is not JSON: the server logs JSON only, and a line that
// is not fails the test.
func ofRequest(t *testing.T, logs *logtest.Buffer, id string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range logs.Lines() {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is not JSON (%v): %s", err, line)
		}
		if rec["request_id"] == id && rec["msg"] != "http" {
			out = append(out, rec)
		}
	}
	return out
}

func startLogged(t *testing.T, sandbox bool) (*apptest.Server, *logtest.Buffer) {
	t.Helper()
	log, logs := logtest.New(slog.LevelDebug)
	cfg := apptest.Config(t)
	if sandbox {
		cfg = apptest.SandboxConfig(t)
	}
	return apptest.StartLogged(t, cfg, log), logs
}

// graphQL posts one operation and returns the response with its headers.
func graphQL(t *testing.T, s *apptest.Server, query string, vars map[string]any) (apptest.GQLResponse, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	res := s.Do(t, "POST", "/graphql", apptest.AdminToken, string(body), map[string]string{"Content-Type": "application/json"})
	var out apptest.GQLResponse
	res.JSON(t, &out)
	return out, res.Header.Get("X-Request-Id")
}

// wantOneFailureLine checks the log holds exactly one line about request
// id, at level, naming the session and carrying the cause.
func wantOneFailureLine(t *testing.T, logs *logtest.Buffer, id, level, sessionID, cause string) {
	t.Helper()
	if id == "" {
		t.Fatal("the response has no X-Request-Id")
	}
	lines := ofRequest(t, logs, id)
	if len(lines) != 1 {
		t.Fatalf("%d log lines of request %s, want 1: %v", len(lines), id, lines)
	}
	line := lines[0]
	if line["level"] != level || line["session_id"] != sessionID {
		t.Errorf("log line %v, want level %s and session_id %s", line, level, sessionID)
	}
	if logged := fmt.Sprint(line["cause"], " ", line["err"]); !strings.Contains(logged, cause) {
		t.Errorf("log line %v does not carry the cause %q", line, cause)
	}
}

// TestWhatsAppRefusalLogged: WhatsApp refuses an operation (the invite link
// of a group in which the account is no longer an admin, refused by the
// network with 401); through REST and through GraphQL the client reads why
// in the contract's words, and the log holds one line of the request with
// whatsmeow's cause, the request id and the session id. The client's
// message does not carry the cause.
func TestWhatsAppRefusalLogged(t *testing.T) {
	t.Parallel()
	s, logs := startLogged(t, true)
	const owner, member, invitee = "4915550008001", "4915550008002", "4915550008003"
	// whatsmeow's text of the refusal (ErrGroupInviteLinkUnauthorized).
	const cause = "you don't have the permission to get the group's invite link"
	sess := s.LinkSession(t, owner)
	res := s.REST(t, "POST", "/session/"+sess.ID+"/group", apptest.AdminToken, `{"subject":"Team","participants":["`+member+`"]}`)
	if res.Status != http.StatusOK {
		t.Fatalf("create group: %d %s", res.Status, res.Body)
	}
	var created struct{ Data struct{ ID string } }
	res.JSON(t, &created)
	gj, err := whatsapp.ParseJID(created.Data.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Network(t).SetRole(gj, owner, "member"); err != nil {
		t.Fatal(err)
	}
	wantMsg := "the account is not an admin of group " + gj.String()

	t.Run("REST", func(t *testing.T) {
		res := s.REST(t, "POST", "/session/"+sess.ID+"/group/"+gj.String()+"/send-invite", apptest.AdminToken,
			`{"number":"`+invitee+`","message":"Join us"}`)
		if res.Status != http.StatusUnprocessableEntity {
			t.Fatalf("send-invite: %d %s, want 422", res.Status, res.Body)
		}
		msg := res.Message(t)
		if !strings.Contains(msg, wantMsg) || strings.Contains(msg, cause) {
			t.Errorf("message %q: want %q and not the cause", msg, wantMsg)
		}
		wantOneFailureLine(t, logs, res.Header.Get("X-Request-Id"), "WARN", sess.ID, cause)
	})
	t.Run("GraphQL", func(t *testing.T) {
		out, id := graphQL(t, s, `mutation($s: ID!, $j: ID!, $n: String!) { sendGroupInvite(sessionId: $s, jid: $j, number: $n, message: "Join us") { messageId } }`,
			map[string]any{"s": sess.ID, "j": gj.String(), "n": invitee})
		if len(out.Errors) != 1 || out.Errors[0].Code() != "WHATSAPP_REFUSED" {
			t.Fatalf("errors %+v, want one WHATSAPP_REFUSED", out.Errors)
		}
		if msg := out.Errors[0].Message; !strings.Contains(msg, wantMsg) || strings.Contains(msg, cause) {
			t.Errorf("message %q: want %q and not the cause", msg, wantMsg)
		}
		wantOneFailureLine(t, logs, id, "WARN", sess.ID, cause)
	})
}

// TestInternalFailureLogged: storage failing under a request about a
// session (the webhooks table dropped behind the server's back, while the
// tokens and sessions still answer) is logged once, at error, with the
// cause, the request id and the session id (REST: the path's, GraphQL: the
// field's argument); the client reads only the request id.
func TestInternalFailureLogged(t *testing.T) {
	t.Parallel()
	s, logs := startLogged(t, false)
	var created struct {
		CreateSession struct{ Session struct{ ID string } }
	}
	s.MustGraphQL(t, apptest.AdminToken, `mutation { createSession(name: "x") { session { id } } }`, nil, &created)
	sid := created.CreateSession.Session.ID
	db, postgres := s.RawDB(t, "wagraph.db")
	drop, cause := "DROP TABLE webhooks", "no such table: webhooks"
	if postgres {
		// The deliveries' foreign key depends on the table there.
		drop, cause = "DROP TABLE webhooks CASCADE", `relation "webhooks" does not exist`
	}
	if _, err := db.Exec(drop); err != nil {
		t.Fatal(err)
	}

	t.Run("REST", func(t *testing.T) {
		res := s.REST(t, "GET", "/session/"+sid+"/webhook", apptest.AdminToken, "")
		id := res.Header.Get("X-Request-Id")
		if msg := res.Message(t); res.Status != http.StatusInternalServerError || msg != "internal error (request id "+id+")" {
			t.Fatalf("GET webhooks: %d %s", res.Status, res.Body)
		}
		wantOneFailureLine(t, logs, id, "ERROR", sid, cause)
	})
	t.Run("GraphQL", func(t *testing.T) {
		out, id := graphQL(t, s, `query($s: ID!) { webhooks(sessionId: $s) { total } }`, map[string]any{"s": sid})
		if len(out.Errors) != 1 || out.Errors[0].Message != "internal error (request id "+id+")" {
			t.Fatalf("errors %+v, want one internal error", out.Errors)
		}
		wantOneFailureLine(t, logs, id, "ERROR", sid, cause)
	})
}

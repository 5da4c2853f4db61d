package webui_test

import (
	"strings"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/chromedp"

	"github.com/wagraph/wagraph/internal/apptest"
)

// TestDashboardSessionsInABrowser: the token prompt says where tokens come
// from; a refused token is said so and not kept; a session needs a name
// (an empty one is refused beside the field, a name in use too, with the
// server's CONFLICT message); a session paired by phone code from the
// pairing page; its row on the sessions page follows its status live through disconnect, connect
// and logout, each asked from the page; a delete asks for a second click;
// a session token sees its one session and no way to create another; in
// sandbox mode the pairing page's simulated phone links a session.
func TestDashboardSessionsInABrowser(t *testing.T) {
	inABrowser(t)
	t.Parallel()
	srv := apptest.StartSandbox(t)
	phones := srv.Network(t)
	b := newBrowser(t, srv.URL, 2*time.Minute, func(e *cdplog.Entry) bool {
		// The wrong token's queries, refused as they must be.
		return e.URL == srv.URL+"/graphql" && strings.Contains(e.Text, "401")
	})

	var refusal, stored, help string
	b.run(t, "a wrong token",
		chromedp.Navigate(srv.URL+"/ui/"),
		chromedp.WaitVisible("#token", chromedp.ByQuery),
		chromedp.Text("#token-help", &help, chromedp.ByQuery),
		chromedp.SendKeys("#token", "wgu_notAToken", chromedp.ByQuery),
		chromedp.Click("#login-submit", chromedp.ByQuery),
		chromedp.Poll(`document.querySelector("#login-error").textContent !== ""`, nil),
		chromedp.Text("#login-error", &refusal, chromedp.ByQuery),
		chromedp.Evaluate(`sessionStorage.getItem("wagraph.token") || ""`, &stored),
	)
	if !strings.Contains(refusal, "UNAUTHENTICATED") || stored != "" {
		t.Errorf("a wrong token: the page says %q and keeps %q", refusal, stored)
	}
	// The prompt says where tokens come from.
	for _, want := range []string{"admin token", "first start", "WAGRAPH_ADMIN_TOKEN", "createUser", "createSession", "createSessionToken"} {
		if !strings.Contains(help, want) {
			t.Errorf("the token prompt %q does not mention %q", help, want)
		}
	}

	// A session needs a name: the form refuses an empty one beside the field.
	var nameRefusal, noneYet string
	b.run(t, "a session without a name",
		chromedp.Evaluate(`document.querySelector("#token").value = ""`, nil),
		chromedp.SendKeys("#token", apptest.AdminToken, chromedp.ByQuery),
		chromedp.Click("#login-submit", chromedp.ByQuery),
		chromedp.WaitVisible("#new-session-name", chromedp.ByQuery),
		chromedp.WaitVisible("#session-rows td.empty", chromedp.ByQuery),
		chromedp.SendKeys("#new-session-name", "   ", chromedp.ByQuery),
		chromedp.Click("#create-session", chromedp.ByQuery),
		chromedp.Poll(`document.querySelector("#new-session-error").textContent !== ""`, nil),
		chromedp.Text("#new-session-error", &nameRefusal, chromedp.ByQuery),
		chromedp.Sleep(300*time.Millisecond),
		chromedp.Text("#session-rows", &noneYet, chromedp.ByQuery),
	)
	if nameRefusal != "Give the session a name." || !strings.Contains(noneYet, "No session yet") {
		t.Errorf("an empty name: the field says %q, the list %q", nameRefusal, noneYet)
	}
	var sessions struct{ Sessions []struct{ ID string } }
	srv.MustGraphQL(t, apptest.AdminToken, `{ sessions { id } }`, nil, &sessions)
	if len(sessions.Sessions) != 0 {
		t.Errorf("an empty name created %d sessions", len(sessions.Sessions))
	}
	b.run(t, "forgetting the token", chromedp.Click("#forget", chromedp.ByQuery), chromedp.WaitVisible("#token", chromedp.ByQuery))

	var loc string
	b.run(t, "signing in and creating a session",
		chromedp.SendKeys("#token", apptest.AdminToken, chromedp.ByQuery),
		chromedp.Click("#login-submit", chromedp.ByQuery),
		chromedp.WaitVisible("#new-session-name", chromedp.ByQuery),
		chromedp.SendKeys("#new-session-name", "Support", chromedp.ByQuery),
		chromedp.Click("#create-session", chromedp.ByQuery),
		chromedp.Click("#pair-new", chromedp.ByQuery),
		chromedp.WaitVisible("#pair-phone", chromedp.ByQuery),
		chromedp.Location(&loc),
	)
	_, after, _ := strings.Cut(loc, "#/sessions/")
	sessionID, _, _ := strings.Cut(after, "/")

	// Paired by phone code.
	const phone = "15550008888"
	var code string
	b.run(t, "asking a pairing code",
		chromedp.SendKeys("#pair-phone", "+1 555 000 8888", chromedp.ByQuery),
		chromedp.Click("#pair-phone-submit", chromedp.ByQuery),
		chromedp.Poll(`/^[A-Z0-9]{4}-[A-Z0-9]{4}$/.test(document.querySelector("#pairing-code").textContent)`, nil),
		chromedp.Text("#pairing-code", &code, chromedp.ByQuery),
	)
	if err := phones.EnterPairingCode(phone, code); err != nil {
		t.Fatalf("the simulated phone entered the page's code %q: %v", code, err)
	}
	b.run(t, "waiting for CONNECTED", chromedp.WaitVisible("#pair-connected", chromedp.ByQuery))

	// The sessions page follows the row's status as the page acts on it.
	row := `#session-rows tr[data-session-id="` + sessionID + `"]`
	status := func(s string) chromedp.Action {
		return chromedp.WaitVisible(row+` [data-status="`+s+`"]`, chromedp.ByQuery)
	}
	var account string
	b.run(t, "the sessions page",
		chromedp.Click(`nav a[href="#/sessions"]`, chromedp.ByQuery),
		status("CONNECTED"),
		chromedp.Text(row, &account, chromedp.ByQuery),
	)
	if !strings.Contains(account, "+"+phone) {
		t.Errorf("the row reads %q; want the linked number +%s", account, phone)
	}
	b.run(t, "disconnect, connect, log out",
		chromedp.Click(row+` button[data-action="disconnect"]`, chromedp.ByQuery),
		status("DISCONNECTED"),
		chromedp.Click(row+` button[data-action="connect"]`, chromedp.ByQuery),
		status("CONNECTED"),
		chromedp.Click(row+` [data-action="delete"]`, chromedp.ByQuery), // Delete, first click: only armed
		chromedp.Sleep(300*time.Millisecond),
		status("CONNECTED"),
	)
	var st struct{ Session *struct{ Status string } }
	srv.MustGraphQL(t, apptest.AdminToken, `query($id: ID!) { session(id: $id) { status } }`, map[string]any{"id": sessionID}, &st)
	if st.Session == nil {
		t.Fatal("one click on Delete deleted the session")
	}

	// A session token reaches its one session: no create form.
	var tok struct{ CreateSessionToken string }
	srv.MustGraphQL(t, apptest.AdminToken, `mutation($id: ID!) { createSessionToken(sessionId: $id) }`, map[string]any{"id": sessionID}, &tok)
	var rows, forms int
	b.run(t, "a session token",
		chromedp.Click("#forget", chromedp.ByQuery),
		chromedp.WaitVisible("#token", chromedp.ByQuery),
		chromedp.SendKeys("#token", tok.CreateSessionToken, chromedp.ByQuery),
		chromedp.Click("#login-submit", chromedp.ByQuery),
		status("CONNECTED"),
		chromedp.Evaluate(`document.querySelectorAll("#session-rows tr[data-session-id]").length`, &rows),
		chromedp.Evaluate(`document.querySelectorAll("#new-session-name").length`, &forms),
	)
	if rows != 1 || forms != 0 {
		t.Errorf("a session token sees %d sessions and %d create forms; want 1 and 0", rows, forms)
	}

	b.run(t, "log out and delete, each confirmed",
		chromedp.Click("#forget", chromedp.ByQuery),
		chromedp.SendKeys("#token", apptest.AdminToken, chromedp.ByQuery),
		chromedp.Click("#login-submit", chromedp.ByQuery),
		status("CONNECTED"),
		chromedp.Click(row+` [data-action="log out"]`, chromedp.ByQuery),
		chromedp.Click(row+` [data-action="log out"]`, chromedp.ByQuery),
		status("LOGGED_OUT"),
	)
	if devices := phones.LinkedDevices(phone); len(devices) != 0 {
		t.Errorf("after the page's logout the phone still lists %v", devices)
	}
	b.run(t, "deleting",
		chromedp.Click(row+` [data-action="delete"]`, chromedp.ByQuery),
		chromedp.Click(row+` [data-action="delete"]`, chromedp.ByQuery),
		chromedp.WaitNotPresent(row, chromedp.ByQuery),
	)
	st.Session = nil
	srv.MustGraphQL(t, apptest.AdminToken, `query($id: ID!) { session(id: $id) { status } }`, map[string]any{"id": sessionID}, &st)
	if st.Session != nil {
		t.Errorf("the session is still there after its delete: %+v", st.Session)
	}

	// In sandbox mode the pairing page offers a simulated phone.
	b.run(t, "pairing with the page's simulated phone",
		chromedp.SendKeys("#new-session-name", "Demo", chromedp.ByQuery),
		chromedp.Click("#create-session", chromedp.ByQuery),
		chromedp.Click("#pair-new", chromedp.ByQuery),
		chromedp.WaitVisible("#qr", chromedp.ByQuery),
		chromedp.Click("#sb-link", chromedp.ByQuery),
		chromedp.WaitVisible("#pair-connected", chromedp.ByQuery),
	)
	if devices := phones.LinkedDevices("4915550123456"); len(devices) != 1 {
		t.Errorf("the simulated phone lists %v, want the one device it linked", devices)
	}

	// Names are unique per user: the server's refusal is shown beside the
	// field, and no session is created.
	var dupRefusal string
	var rowsAfter int
	b.run(t, "a name in use",
		chromedp.Click(`nav a[href="#/sessions"]`, chromedp.ByQuery),
		chromedp.WaitVisible("#session-rows tr[data-session-id]", chromedp.ByQuery),
		chromedp.SendKeys("#new-session-name", "demo", chromedp.ByQuery),
		chromedp.Click("#create-session", chromedp.ByQuery),
		chromedp.Poll(`document.querySelector("#new-session-error").textContent !== ""`, nil),
		chromedp.Text("#new-session-error", &dupRefusal, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll("#session-rows tr[data-session-id]").length`, &rowsAfter),
	)
	if !strings.Contains(dupRefusal, `"demo"`) || !strings.Contains(dupRefusal, "unique") || rowsAfter != 1 {
		t.Errorf("a name in use: the field says %q; %d sessions listed, want 1", dupRefusal, rowsAfter)
	}
	b.report(t)
}

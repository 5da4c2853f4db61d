package webui_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/wagraph/wagraph/internal/apptest"
)

// TestPasskeyStepInABrowser walks the pairing page through the passkey
// step (must-show 1): the simulated phone of an account that requires a
// passkey scans the code; the page shows the challenge as JSON to copy and
// a box for the answer; an answer that is not JSON is refused in the page;
// the simulated passkey's answer fills the box and is sent; the page shows
// the code, which is the phone's, and the confirm button; confirming
// links the session.
func TestPasskeyStepInABrowser(t *testing.T) {
	inABrowser(t)
	t.Parallel()
	srv := apptest.StartSandbox(t)
	const phone = "15550007777"
	if err := srv.Network(t).RequirePasskey(phone); err != nil {
		t.Fatal(err)
	}
	res := srv.REST(t, "POST", "/session", apptest.AdminToken, `{"name":"Passkey"}`)
	if res.Status != http.StatusCreated {
		t.Fatalf("create session: %d %s", res.Status, res.Body)
	}
	var created struct{ Data struct{ ID string } }
	res.JSON(t, &created)
	id := created.Data.ID

	b := newBrowser(t, srv.URL, 2*time.Minute, nil)
	signIn(t, b)
	var challenge string
	b.run(t, "scanning with a simulated phone that requires a passkey",
		chromedp.Navigate(srv.URL+"/ui/#/sessions/"+id+"/pair"),
		chromedp.WaitVisible(`#qr`, chromedp.ByQuery),
		chromedp.SetValue("#sb-link-phone", phone, chromedp.ByQuery),
		chromedp.Click("#sb-link", chromedp.ByQuery),
		chromedp.WaitVisible("#passkey-challenge", chromedp.ByQuery),
		chromedp.Value("#passkey-challenge", &challenge, chromedp.ByQuery),
	)
	var opts struct {
		Challenge string `json:"challenge"`
		RPID      string `json:"rpId"`
	}
	if err := json.Unmarshal([]byte(challenge), &opts); err != nil || opts.RPID != "whatsapp.com" || opts.Challenge == "" {
		t.Fatalf("the challenge shown: %v %q", err, challenge)
	}
	var notices string
	b.run(t, "sending an answer that is not JSON",
		chromedp.SetValue("#passkey-assertion", "not json", chromedp.ByQuery),
		chromedp.Click("#passkey-submit", chromedp.ByQuery),
		chromedp.WaitVisible("#notices .notice.error", chromedp.ByQuery),
		chromedp.Text("#notices", &notices, chromedp.ByQuery),
	)
	if !strings.Contains(notices, "not JSON") {
		t.Errorf("notice %q", notices)
	}
	var pasted, code string
	b.run(t, "answering with the simulated passkey and sending it",
		chromedp.Click("#sb-passkey", chromedp.ByQuery),
		chromedp.WaitVisible(`#passkey-assertion`, chromedp.ByQuery),
		chromedp.Poll(`document.querySelector("#passkey-assertion").value.includes("clientDataJSON")`, nil, chromedp.WithPollingTimeout(10*time.Second)),
		chromedp.Value("#passkey-assertion", &pasted, chromedp.ByQuery),
		chromedp.Click("#passkey-submit", chromedp.ByQuery),
		chromedp.WaitVisible("#passkey-code", chromedp.ByQuery),
		chromedp.Text("#passkey-code", &code, chromedp.ByQuery),
	)
	if !strings.Contains(pasted, `"public-key"`) {
		t.Errorf("the answer box holds %q", pasted)
	}
	if shown := srv.Network(t).PasskeyCode(phone); code == "" || code != shown {
		t.Fatalf("the page shows %q, the phone %q", code, shown)
	}
	var status string
	b.run(t, "confirming the code",
		chromedp.Click("#passkey-confirm", chromedp.ByQuery),
		chromedp.WaitVisible("#pair-connected", chromedp.ByQuery),
		chromedp.Text("#pair-status", &status, chromedp.ByQuery),
	)
	if !strings.Contains(status, "CONNECTED") {
		t.Errorf("status %q", status)
	}
	st := srv.WaitStatus(t, id, "CONNECTED", nil)
	srv.Track(apptest.Session{ID: id, Phone: phone, JID: st["jid"].(string)})
	b.report(t)
}

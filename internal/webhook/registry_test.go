package webhook_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/webhook"
)

// nonPublicURLs are webhook URLs whose host rules them out by its own text,
// with the part of the refusal that names why.
var nonPublicURLs = []struct{ url, why string }{
	{"http://127.1/h", "host 127.1 stands for 127.0.0.1, a loopback address"},
	{"http://2130706433/h", "host 2130706433 stands for 127.0.0.1, a loopback address"},
	{"http://0177.0.0.1/h", "host 0177.0.0.1 stands for 127.0.0.1, a loopback address"},
	{"http://0x7f000001/h", "host 0x7f000001 stands for 127.0.0.1, a loopback address"},
	{"http://0x7f.1:8080/h", "host 0x7f.1 stands for 127.0.0.1, a loopback address"},
	{"http://10.1.2/h", "host 10.1.2 stands for 10.1.0.2, a private address"},
	{"http://localhost./h", "host localhost. is a loopback name"},
	{"http://api.localhost/h", "host api.localhost is a loopback name"},
	{"http://100.64.0.1/h", "100.64.0.1 is a carrier-grade NAT address"},
	{"http://127.0.0.1.nip.io/h", "host 127.0.0.1.nip.io stands for 127.0.0.1, a loopback address"},
	{"https://127-0-0-1.sslip.io/h", "host 127-0-0-1.sslip.io stands for 127.0.0.1, a loopback address"},
	{"http://[::ffff:127.0.0.1]/h", "::ffff:127.0.0.1 is a loopback address"},
	{"http://[64:ff9b::a9fe:a9fe]/h", "64:ff9b::a9fe:a9fe is the cloud metadata address"},
	{"http://metadata.google.internal/computeMetadata/v1/", "host metadata.google.internal is a cloud metadata name"},
	{"http://169.254.169.254/latest", "169.254.169.254 is the cloud metadata address"},
	{"http://[fe80::1%25eth0]/h", "fe80::1%eth0 is a link-local address"},
}

// publicURLs pass at save time; their addresses are the dialer's to judge.
var publicURLs = []string{
	"https://example.com/hook",
	"http://93.184.216.34/h",
	"https://8.8.8.8:8443/h",
	"http://[2001:4860::8888]/h",
	"https://hooks.example.org./h",
	"https://8-8-8-8.sslip.io/h",
}

// newRegistry returns a registry on a fresh SQLite database holding one
// session, "s1".
func newRegistry(t *testing.T, allowPrivate bool) (*webhook.Registry, *ent.Client) {
	t.Helper()
	db := dbtest.Open(t).Ent
	t.Cleanup(func() { db.Close() })
	ctx := t.Context()
	if err := db.User.Create().SetID("u1").SetName("owner").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.Session.Create().SetID("s1").SetName("s").SetOwnerID("u1").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	n := 0
	newID := func() string { n++; return fmt.Sprintf("w%d", n) }
	now := func() time.Time { return time.Unix(1700000000, 0) }
	return webhook.NewRegistry(db, nil, now, newID, allowPrivate, 0), db
}

func TestSaveRefusesNonPublicURLs(t *testing.T) {
	ctx := t.Context()
	reg, db := newRegistry(t, false)
	const sid = "s1"
	good := "https://example.com/hook"
	existing, _, err := reg.Create(ctx, sid, webhook.Spec{URL: &good})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range nonPublicURLs {
		t.Run(c.url, func(t *testing.T) {
			u := c.url
			_, _, createErr := reg.Create(ctx, sid, webhook.Spec{URL: &u})
			_, updateErr := reg.Update(ctx, sid, existing.ID, webhook.Spec{URL: &u})
			for op, err := range map[string]error{"create": createErr, "update": updateErr} {
				f := fault.From(err)
				if f == nil || f.Code != fault.Invalid || f.Field != "url" {
					t.Fatalf("%s %s: %v; want BAD_USER_INPUT on url", op, u, err)
				}
				want := "url points at a loopback, private or link-local address (" + c.why + "); start the server with --allow-private-urls to allow it"
				if f.Message != want {
					t.Fatalf("%s %s: %q; want %q", op, u, f.Message, want)
				}
			}
		})
	}
	all, err := db.Webhook.Query().All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || all[0].URL != good {
		t.Fatalf("stored after the refusals: %v; want only %s", all, good)
	}
	for _, u := range publicURLs {
		if _, _, err := reg.Create(ctx, sid, webhook.Spec{URL: &u}); err != nil {
			t.Errorf("create %s: %v", u, err)
		}
	}
}

func TestSaveAllowsPrivateURLsWhenAllowed(t *testing.T) {
	ctx := t.Context()
	reg, _ := newRegistry(t, true)
	for _, c := range nonPublicURLs {
		u := c.url
		if _, _, err := reg.Create(ctx, "s1", webhook.Spec{URL: &u}); err != nil {
			t.Errorf("create %s with --allow-private-urls: %v", u, err)
		}
	}
}

// TestSaveRefusesNonPublicURLsOverREST: the client sees each refusal as a
// 400 whose message names url and the setting.
func TestSaveRefusesNonPublicURLsOverREST(t *testing.T) {
	srv := apptest.Start(t, apptest.Config(t))
	admin := apptest.AdminToken
	var created struct{ Data struct{ ID string } }
	srv.REST(t, "POST", "/session", admin, `{"name":"hooks"}`).JSON(t, &created)
	sid := created.Data.ID
	for _, c := range nonPublicURLs[:10] { // the inet_aton forms, localhost., CGNAT, nip.io
		t.Run(c.url, func(t *testing.T) {
			res := srv.REST(t, "POST", "/session/"+sid+"/webhook", admin, `{"url":"`+c.url+`"}`)
			if res.Status != 400 {
				t.Fatalf("status %d, want 400: %s", res.Status, res.Body)
			}
			msg := res.Message(t)
			if !strings.HasPrefix(msg, "url ") || !strings.Contains(msg, c.why) || !strings.Contains(msg, "--allow-private-urls") {
				t.Fatalf("message %q does not name url, %q and --allow-private-urls", msg, c.why)
			}
		})
	}
	var page struct{ Total int }
	srv.REST(t, "GET", "/session/"+sid+"/webhook", admin, "").JSON(t, &page)
	if page.Total != 0 {
		t.Fatalf("%d webhooks stored after the refusals", page.Total)
	}
}

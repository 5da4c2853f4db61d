package sessionsettings

import (
	"context"
	"strings"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/internal/fault"
)

func ptr[T any](v T) *T { return &v }

// TestUpdateKeepsAbsentFields: a field left out keeps its value, a bad
// one changes nothing and is named, the settings survive a new service
// (durable), and the password is shown nowhere but Proxy.
func TestUpdateKeepsAbsentFields(t *testing.T) {
	ctx := context.Background()
	db := dbtest.Open(t).Ent
	db.User.Create().SetID("u1").SetName("owner").ExecX(ctx)
	db.Session.Create().SetID("s1").SetOwnerID("u1").ExecX(ctx)
	svc := New(db)

	got, err := svc.Get(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if got.SendRate != nil || got.SendJitter != 0 || got.SimulateTyping || got.AutoMarkRead || got.AutoRejectCalls || got.ShownProxy() != nil {
		t.Fatalf("defaults: %+v", got)
	}
	if _, err := svc.Update(ctx, "s1", Input{SendRate: ptr("30/m"), SendJitter: ptr("2s"), AutoMarkRead: ptr(true),
		Proxy: ptr("socks5://bob:hunter2@127.0.0.1:1080")}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Update(ctx, "s1", Input{AutoRejectCalls: ptr(true), CallRejectMessage: ptr("Please write instead")}); err != nil {
		t.Fatal(err)
	}
	_, err = svc.Update(ctx, "s1", Input{AutoMarkRead: ptr(false), SendRate: ptr("fast")})
	if f := fault.From(err); f == nil || f.Field != "sendRate" {
		t.Fatalf("a bad rate: %v", err)
	}

	again := New(db) // another process, or after a restart
	got, err = again.Get(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if got.SendRate == nil || got.SendRate.String() != "30/m" || got.SendJitter != 2*time.Second || !got.AutoMarkRead ||
		!got.AutoRejectCalls || got.CallRejectMessage != "Please write instead" {
		t.Errorf("stored: %+v", got)
	}
	if p := got.ShownProxy(); p == nil || *p != "socks5://bob:***@127.0.0.1:1080" {
		t.Errorf("proxy shown as %v", p)
	}
	if full, _ := again.Proxy(ctx, "s1"); full != "socks5://bob:hunter2@127.0.0.1:1080" {
		t.Errorf("Proxy: %q", full)
	}
	if s := db.Session.GetX(ctx, "s1").String(); strings.Contains(s, "hunter2") {
		t.Errorf("the row's String shows the password: %s", s)
	}

	got, err = again.Update(ctx, "s1", Input{SendRate: ptr(""), Proxy: ptr("")})
	if err != nil {
		t.Fatal(err)
	}
	if got.SendRate != nil || got.ShownProxy() != nil || !got.AutoMarkRead {
		t.Errorf("after clearing: %+v", got)
	}
	if full, _ := again.Proxy(ctx, "s1"); full != "" {
		t.Errorf("Proxy after clearing: %q", full)
	}
	if _, err := again.Get(ctx, "nope"); fault.CodeOf(err) != fault.NotFound {
		t.Errorf("an unknown session: %v", err)
	}
}

package e2e

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/whatsapp"
)

// newerThanBuiltin is a version above the one whatsmeow announces.
func newerThanBuiltin(t *testing.T) string {
	t.Helper()
	parts := strings.Split(whatsapp.BuiltinVersion(), ".")
	n, err := strconv.ParseUint(parts[2], 10, 32)
	if len(parts) != 3 || err != nil {
		t.Fatalf("built-in version %q", whatsapp.BuiltinVersion())
	}
	return fmt.Sprintf("%s.%s.%d", parts[0], parts[1], n+1)
}

// TestOutdatedClient: the network starts requiring a version above the
// built-in one. With --wa-version auto the refused session learns the
// newer version from the network's page and is CONNECTED again by itself;
// with builtin it stays DISCONNECTED with the "client outdated" reason,
// and the server keeps serving.
func TestOutdatedClient(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"auto", "builtin"} {
		t.Run(mode, func(t *testing.T) {
			cfg := apptest.SandboxConfig(t)
			setting, err := whatsapp.ParseVersionSetting(mode)
			if err != nil {
				t.Fatal(err)
			}
			cfg.WAVersion = setting
			srv := apptest.Start(t, cfg)
			sess := srv.LinkSession(t, "4915550123456")
			apptest.Settle(t, srv.Network(t), sess)
			sub := srv.Subscribe(t, apptest.AdminToken, `subscription($id: ID!) { sessionStatus(sessionId: $id) { status statusReason } }`, map[string]any{"id": sess.ID})
			type state struct {
				SessionStatus struct{ Status, StatusReason string }
			}
			var first state
			sub.Next(&first)

			newer := newerThanBuiltin(t)
			srv.MustGraphQL(t, apptest.AdminToken, `mutation($v: String!) { sandboxRequireClientVersion(minimum: $v) }`, map[string]any{"v": newer}, nil)

			refused := "client outdated: WhatsApp refused version " + whatsapp.BuiltinVersion()
			sawRefusal := false
			for {
				var st state
				sub.Next(&st)
				if st.SessionStatus.Status == "DISCONNECTED" && st.SessionStatus.StatusReason == refused {
					sawRefusal = true
					if mode == "builtin" {
						break
					}
				}
				if st.SessionStatus.Status == "CONNECTED" && sawRefusal {
					break
				}
			}
			if mode == "builtin" {
				time.Sleep(time.Second) // nothing brings it back
				got := srv.WaitStatus(t, sess.ID, "DISCONNECTED", nil)
				var out struct{ Session struct{ StatusReason string } }
				srv.MustGraphQL(t, apptest.AdminToken, `query($id: ID!) { session(id: $id) { statusReason } }`, map[string]any{"id": sess.ID}, &out)
				if out.Session.StatusReason != refused {
					t.Errorf("statusReason %q (%v); want %q", out.Session.StatusReason, got, refused)
				}
				if res := srv.REST(t, "GET", "/session/"+sess.ID, apptest.AdminToken, ""); res.Status != http.StatusOK || !strings.Contains(string(res.Body), refused) {
					t.Errorf("REST session: %d %s; want the reason", res.Status, res.Body)
				}
				return
			}
			// Connected again, announcing the version the network asks for.
			srv.WaitStatus(t, sess.ID, "CONNECTED", nil)
		})
	}
}

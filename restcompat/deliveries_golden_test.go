package restcompat_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/apptest"
)

// TestGoldenDeliveries pins the delivery log paths byte for byte: a test
// event answered 500 then 200, its redelivery, the pages, and the
// refusals. Each delivery is let finish before the next request, so the
// pinned clock's readings fall in one order (and every durationMs is 1000:
// the pinned clock steps a second at each reading).
func TestGoldenDeliveries(t *testing.T) {
	cfg := apptest.Config(t)
	cfg.AllowPrivateURLs = true
	cfg.WebhookRetry = []time.Duration{0, 20 * time.Millisecond}
	srv := apptest.Start(t, cfg)
	admin := apptest.AdminToken
	sid := srv.CreateSession(t, "hooks")
	rc := apptest.NewReceiver(t, http.StatusInternalServerError, http.StatusOK)
	hook := func(url string) string {
		var r struct {
			CreateWebhook struct{ Webhook struct{ ID string } }
		}
		srv.MustGraphQL(t, admin, `mutation($s: ID!, $u: String) { createWebhook(sessionId: $s, input: {url: $u}) { webhook { id } } }`,
			map[string]any{"s": sid, "u": url}, &r)
		return r.CreateWebhook.Webhook.ID
	}
	var user2 struct{ CreateUser struct{ Token string } }
	srv.MustGraphQL(t, admin, `mutation { createUser(name: "second") { token } }`, nil, &user2)
	vars := map[string]string{"ADMIN": admin, "S": sid, "W": hook(rc.URL + "/in"), "W2": hook(rc.URL + "/other"), "U2": user2.CreateUser.Token}

	// The answers wait until the request that made the delivery has its
	// own answer: that answer is the delivery as stored, before any attempt.
	release := rc.Hold()
	runSteps(t, srv, vars, []step{
		{name: "delivery_test", method: "POST", path: "/session/{S}/webhook/{W}/test", token: "{ADMIN}", status: 200, capture: captureField("id", "D1")},
	})
	release()
	srv.WaitDeliveries(t, sid, vars["W"])
	release = rc.Hold()
	runSteps(t, srv, vars, []step{
		{name: "deliveries_list_one", method: "GET", path: "/session/{S}/webhook/{W}/deliveries", token: "{ADMIN}", status: 200},
		{name: "delivery_redeliver", method: "POST", path: "/session/{S}/webhook/{W}/deliveries/{D1}/redeliver", token: "{ADMIN}", status: 200},
	})
	release()
	srv.WaitDeliveries(t, sid, vars["W"])
	runSteps(t, srv, vars, []step{
		{name: "deliveries_list_first_1", method: "GET", path: "/session/{S}/webhook/{W}/deliveries?first=1", token: "{ADMIN}", status: 200,
			capture: func(t *testing.T, res apptest.Response, vars map[string]string) {
				var page struct{ EndCursor string }
				res.JSON(t, &page)
				vars["C1"] = page.EndCursor
			}},
		{name: "deliveries_list_after", method: "GET", path: "/session/{S}/webhook/{W}/deliveries?first=1&after={C1}", token: "{ADMIN}", status: 200},
		{name: "deliveries_list_empty", method: "GET", path: "/session/{S}/webhook/{W2}/deliveries", token: "{ADMIN}", status: 200},
		{name: "deliveries_unknown_webhook", method: "GET", path: "/session/{S}/webhook/no-such-webhook/deliveries", token: "{ADMIN}", status: 404},
		{name: "deliveries_other_user", method: "GET", path: "/session/{S}/webhook/{W}/deliveries", token: "{U2}", status: 404},
		{name: "deliveries_first_zero", method: "GET", path: "/session/{S}/webhook/{W}/deliveries?first=0", token: "{ADMIN}", status: 400},
		{name: "deliveries_first_twice", method: "GET", path: "/session/{S}/webhook/{W}/deliveries?first=1&first=2", token: "{ADMIN}", status: 400},
		{name: "deliveries_bad_after", method: "GET", path: "/session/{S}/webhook/{W}/deliveries?after=page2", token: "{ADMIN}", status: 400},
		{name: "delivery_redeliver_unknown", method: "POST", path: "/session/{S}/webhook/{W}/deliveries/dlv_nope/redeliver", token: "{ADMIN}", status: 404},
		{name: "delivery_redeliver_other_webhook", method: "POST", path: "/session/{S}/webhook/{W2}/deliveries/{D1}/redeliver", token: "{ADMIN}", status: 404},
		{name: "delivery_redeliver_other_user", method: "POST", path: "/session/{S}/webhook/{W}/deliveries/{D1}/redeliver", token: "{U2}", status: 404},
		{name: "delivery_test_unknown_webhook", method: "POST", path: "/session/{S}/webhook/no-such-webhook/test", token: "{ADMIN}", status: 404},
		{name: "delivery_redeliver_wrong_method", method: "GET", path: "/session/{S}/webhook/{W}/deliveries/{D1}/redeliver", token: "{ADMIN}", status: 405},
	})
	// Disabled through GraphQL: the REST answer would carry the receiver's
	// port, which changes from run to run.
	srv.MustGraphQL(t, admin, `mutation($s: ID!, $w: ID!) { updateWebhook(sessionId: $s, id: $w, input: {enabled: false}) { id } }`,
		map[string]any{"s": sid, "w": vars["W"]}, nil)
	runSteps(t, srv, vars, []step{
		{name: "delivery_redeliver_disabled", method: "POST", path: "/session/{S}/webhook/{W}/deliveries/{D1}/redeliver", token: "{ADMIN}", status: 409},
	})
}

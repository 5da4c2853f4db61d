package graph_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/apptest"
)

// deliveryServer is a test server that may deliver to loopback, retrying
// quickly.
func deliveryServer(t *testing.T) *apptest.Server {
	t.Helper()
	cfg := apptest.Config(t)
	cfg.AllowPrivateURLs = true
	cfg.WebhookRetry = []time.Duration{0, 20 * time.Millisecond, 20 * time.Millisecond}
	return apptest.Start(t, cfg)
}

// createHook creates a webhook of the session delivering to url and
// returns its id and secret.
func createHook(t *testing.T, srv *apptest.Server, sid, url string) (id, secret string) {
	t.Helper()
	var r struct {
		CreateWebhook struct {
			Webhook struct{ ID string }
			Secret  string
		}
	}
	srv.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $u: String) {
		createWebhook(sessionId: $s, input: {url: $u, headers: [{name: "X-Team", value: "ops"}]}) { webhook { id } secret } }`,
		map[string]any{"s": sid, "u": url}, &r)
	return r.CreateWebhook.Webhook.ID, r.CreateWebhook.Secret
}

// standardWebhooksValid is the receiver's check of Standard Webhooks,
// written from the specification alone: the key is the base64 after
// "whsec_"; the signed content is "id.timestamp.body"; webhook-signature is
// a space-separated list of "v1,<base64 HMAC-SHA256>", one of which must
// match.
func standardWebhooksValid(secret string, h http.Header, body []byte) bool {
	enc, ok := strings.CutPrefix(secret, "whsec_")
	key, err := base64.StdEncoding.DecodeString(enc)
	if !ok || err != nil || len(key) == 0 {
		return false
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(h.Get("webhook-id") + "." + h.Get("webhook-timestamp") + "."))
	mac.Write(body)
	want := mac.Sum(nil)
	for _, sig := range strings.Fields(h.Get("webhook-signature")) {
		v, b64, ok := strings.Cut(sig, ",")
		got, err := base64.StdEncoding.DecodeString(b64)
		if ok && v == "v1" && err == nil && hmac.Equal(got, want) {
			return true
		}
	}
	return false
}

const deliveryFields = `id eventId event attempt status statusCode durationMs error createdAt attempts { n statusCode durationMs error at }`

type gqlAttempt struct {
	N          int
	StatusCode *int
	DurationMs int
	Error      *string
	At         string
}

type gqlDelivery struct {
	ID, EventID, Event, Status, CreatedAt string
	Attempt                               int
	StatusCode, DurationMs                *int
	Error                                 *string
	Attempts                              []gqlAttempt
}

type gqlConnection struct {
	Edges []struct {
		Cursor string
		Node   gqlDelivery
	}
	PageInfo struct {
		HasNextPage bool
		EndCursor   *string
	}
}

func deliveriesOf(t *testing.T, srv *apptest.Server, token, sid, wid string, vars map[string]any) gqlConnection {
	t.Helper()
	if vars == nil {
		vars = map[string]any{}
	}
	vars["s"], vars["w"] = sid, wid
	var r struct{ Deliveries gqlConnection }
	srv.MustGraphQL(t, token, `query($s: ID!, $w: ID!, $first: Int, $after: String) {
		deliveries(sessionId: $s, webhookId: $w, first: $first, after: $after) {
			edges { cursor node { `+deliveryFields+` } } pageInfo { hasNextPage endCursor } } }`, vars, &r)
	return r.Deliveries
}

func testWebhook(t *testing.T, srv *apptest.Server, sid, wid string) gqlDelivery {
	t.Helper()
	var r struct{ TestWebhook gqlDelivery }
	srv.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $w: ID!) { testWebhook(sessionId: $s, id: $w) { `+deliveryFields+` } }`,
		map[string]any{"s": sid, "w": wid}, &r)
	return r.TestWebhook
}

// TestDeliveriesRetryThenDelivered: testWebhook's event reaches a receiver
// answering 500 then 200, signed as Standard Webhooks says with the secret
// createWebhook gave, and the deliveries query shows both attempts.
func TestDeliveriesRetryThenDelivered(t *testing.T) {
	srv := deliveryServer(t)
	sid := srv.CreateSession(t, "hooks")
	rc := apptest.NewReceiver(t, http.StatusInternalServerError, http.StatusOK)
	wid, secret := createHook(t, srv, sid, rc.URL+"/in")

	release := rc.Hold()
	created := testWebhook(t, srv, sid, wid)
	if created.Status != "PENDING" || created.Attempt != 0 || len(created.Attempts) != 0 || created.Event != "WEBHOOK_TEST" ||
		created.StatusCode != nil || created.DurationMs != nil || created.Error != nil {
		t.Errorf("testWebhook answered %+v, want a PENDING WEBHOOK_TEST delivery before any attempt", created)
	}
	release()
	srv.WaitDeliveries(t, sid, wid)

	reqs := rc.Requests()
	if len(reqs) != 2 {
		t.Fatalf("receiver got %d requests, want 2", len(reqs))
	}
	for i, req := range reqs {
		if !standardWebhooksValid(secret, req.Header, req.Body) {
			t.Errorf("request %d: signature %q does not verify", i+1, req.Header.Get("webhook-signature"))
		}
		sec, err := strconv.ParseInt(req.Header.Get("webhook-timestamp"), 10, 64)
		if err != nil || time.Since(time.Unix(sec, 0)).Abs() > time.Minute {
			t.Errorf("request %d: webhook-timestamp %q is not the unix time of sending", i+1, req.Header.Get("webhook-timestamp"))
		}
		if req.Header.Get("webhook-id") != created.EventID || req.Header.Get("X-Team") != "ops" || req.Header.Get("Content-Type") != "application/json" {
			t.Errorf("request %d: headers %v, want webhook-id %s, X-Team ops, JSON", i+1, req.Header, created.EventID)
		}
		var env struct {
			ID, Event, SessionID string
			Seq                  int64
			Data                 struct{ WebhookID, Message string }
		}
		if err := json.Unmarshal(req.Body, &env); err != nil || env.ID != created.EventID || env.Event != "webhook.test" ||
			env.SessionID != sid || env.Seq != 1 || env.Data.WebhookID != wid || env.Data.Message == "" {
			t.Errorf("request %d: body %s, want the webhook.test envelope of %s", i+1, req.Body, created.EventID)
		}
	}

	conn := deliveriesOf(t, srv, apptest.AdminToken, sid, wid, nil)
	if len(conn.Edges) != 1 || conn.PageInfo.HasNextPage || conn.PageInfo.EndCursor == nil || *conn.PageInfo.EndCursor != created.ID {
		t.Fatalf("deliveries %+v, want the one delivery", conn)
	}
	got := conn.Edges[0].Node
	if got.ID != created.ID || got.Status != "DELIVERED" || got.Attempt != 2 || got.StatusCode == nil || *got.StatusCode != 200 ||
		got.Error != nil || got.DurationMs == nil || got.Event != "WEBHOOK_TEST" || got.CreatedAt != created.CreatedAt {
		t.Errorf("delivery %+v, want DELIVERED after 2 attempts, last 200", got)
	}
	if len(got.Attempts) != 2 {
		t.Fatalf("attempts %+v, want 2", got.Attempts)
	}
	first, second := got.Attempts[0], got.Attempts[1]
	if first.N != 1 || first.StatusCode == nil || *first.StatusCode != 500 || first.Error == nil || *first.Error != "the receiver answered 500" {
		t.Errorf("attempt 1 %+v, want 500 with its error", first)
	}
	if second.N != 2 || second.StatusCode == nil || *second.StatusCode != 200 || second.Error != nil || !(second.At > first.At) {
		t.Errorf("attempt 2 %+v, want 200 without error, after attempt 1", second)
	}
}

// TestRedeliverAndTest: redeliver makes a new delivery of the same event
// (same webhook-id), listed first; a disabled webhook refuses redelivery
// but testWebhook still reaches it; REST redeliver is held to the webhook
// of its path; and the list pages newest first by cursor.
func TestRedeliverAndTest(t *testing.T) {
	srv := deliveryServer(t)
	sid := srv.CreateSession(t, "hooks")
	rc := apptest.NewReceiver(t)
	wid, _ := createHook(t, srv, sid, rc.URL)
	otherWid, _ := createHook(t, srv, sid, rc.URL+"/other")
	admin := apptest.AdminToken

	first := testWebhook(t, srv, sid, wid)
	srv.WaitDeliveries(t, sid, wid)
	var r struct{ Redeliver gqlDelivery }
	srv.MustGraphQL(t, admin, `mutation($s: ID!, $d: ID!) { redeliver(sessionId: $s, deliveryId: $d) { `+deliveryFields+` } }`,
		map[string]any{"s": sid, "d": first.ID}, &r)
	again := r.Redeliver
	if again.ID == first.ID || again.EventID != first.EventID || again.Status != "PENDING" || again.Attempt != 0 {
		t.Errorf("redeliver answered %+v, want a new PENDING delivery of event %s", again, first.EventID)
	}
	srv.WaitDeliveries(t, sid, wid)
	reqs := rc.Requests()
	if len(reqs) != 2 || reqs[0].Header.Get("webhook-id") != first.EventID || reqs[1].Header.Get("webhook-id") != first.EventID {
		t.Errorf("receiver got %d requests, want 2 with webhook-id %s", len(reqs), first.EventID)
	}

	// REST: the path's webhook must be the delivery's.
	res := srv.REST(t, "POST", "/session/"+sid+"/webhook/"+otherWid+"/deliveries/"+first.ID+"/redeliver", admin, "")
	if res.Status != 404 || res.Message(t) != "delivery "+first.ID+" not found" {
		t.Errorf("REST redeliver under another webhook: %d %s, want 404", res.Status, res.Body)
	}
	res = srv.REST(t, "POST", "/session/"+sid+"/webhook/"+wid+"/deliveries/"+first.ID+"/redeliver", admin, "")
	if res.Status != 200 {
		t.Fatalf("REST redeliver: %d %s", res.Status, res.Body)
	}
	srv.WaitDeliveries(t, sid, wid)

	// Newest first, by cursor: the REST redelivery, the GraphQL one, the first.
	var ids []string
	var after any
	for {
		page := deliveriesOf(t, srv, admin, sid, wid, map[string]any{"first": 2, "after": after})
		for _, e := range page.Edges {
			ids = append(ids, e.Node.ID)
			if e.Cursor != e.Node.ID || e.Node.Status != "DELIVERED" {
				t.Errorf("edge %+v: want cursor = id and DELIVERED", e)
			}
		}
		if !page.PageInfo.HasNextPage {
			break
		}
		after = *page.PageInfo.EndCursor
	}
	if len(ids) != 3 || ids[1] != again.ID || ids[2] != first.ID || !slices.IsSortedFunc(ids, func(a, b string) int { return strings.Compare(b, a) }) {
		t.Errorf("pages gave %v, want 3 deliveries newest first ending %s, %s", ids, again.ID, first.ID)
	}

	srv.MustGraphQL(t, admin, `mutation($s: ID!, $w: ID!) { updateWebhook(sessionId: $s, id: $w, input: {enabled: false}) { id } }`,
		map[string]any{"s": sid, "w": wid}, nil)
	gql := srv.GraphQL(t, admin, `mutation($s: ID!, $d: ID!) { redeliver(sessionId: $s, deliveryId: $d) { id } }`, map[string]any{"s": sid, "d": first.ID})
	if len(gql.Errors) != 1 || gql.Errors[0].Code() != "CONFLICT" || !strings.Contains(gql.Errors[0].Message, "webhook "+wid+" is disabled") {
		t.Errorf("redeliver to a disabled webhook: %+v, want CONFLICT naming it", gql.Errors)
	}
	before := len(rc.Requests())
	test := testWebhook(t, srv, sid, wid)
	srv.WaitDeliveries(t, sid, wid)
	conn := deliveriesOf(t, srv, admin, sid, wid, map[string]any{"first": 1})
	if n := len(rc.Requests()); n != before+1 || conn.Edges[0].Node.ID != test.ID || conn.Edges[0].Node.Status != "DELIVERED" {
		t.Errorf("testWebhook on a disabled webhook: %d new requests, newest delivery %+v; want it delivered", n-before, conn.Edges[0].Node)
	}
}

// TestDeliveriesRefusals: a session the token does not reach, a webhook or
// delivery not in the session, and bad paging arguments.
func TestDeliveriesRefusals(t *testing.T) {
	srv := deliveryServer(t)
	admin := apptest.AdminToken
	sid := srv.CreateSession(t, "mine")
	rc := apptest.NewReceiver(t)
	wid, _ := createHook(t, srv, sid, rc.URL)
	dlv := testWebhook(t, srv, sid, wid)
	srv.WaitDeliveries(t, sid, wid)
	other := srv.CreateSession(t, "other")
	otherWid, _ := createHook(t, srv, other, rc.URL)
	var u struct{ CreateUser struct{ Token string } }
	srv.MustGraphQL(t, admin, `mutation { createUser(name: "stranger") { token } }`, nil, &u)

	tests := []struct {
		name, token, query string
		vars               map[string]any
		code, field, msg   string
	}{
		{"deliveries of a session not reached", u.CreateUser.Token, `query($s: ID!, $w: ID!) { deliveries(sessionId: $s, webhookId: $w) { pageInfo { hasNextPage } } }`,
			map[string]any{"s": sid, "w": wid}, "NOT_FOUND", "", "session " + sid + " not found"},
		{"deliveries of another session's webhook", admin, `query($s: ID!, $w: ID!) { deliveries(sessionId: $s, webhookId: $w) { pageInfo { hasNextPage } } }`,
			map[string]any{"s": sid, "w": otherWid}, "NOT_FOUND", "", "webhook " + otherWid + " not found"},
		{"first 0", admin, `query($s: ID!, $w: ID!) { deliveries(sessionId: $s, webhookId: $w, first: 0) { pageInfo { hasNextPage } } }`,
			map[string]any{"s": sid, "w": wid}, "BAD_USER_INPUT", "first", "first must be between 1 and 100 (got 0)"},
		{"first 101", admin, `query($s: ID!, $w: ID!) { deliveries(sessionId: $s, webhookId: $w, first: 101) { pageInfo { hasNextPage } } }`,
			map[string]any{"s": sid, "w": wid}, "BAD_USER_INPUT", "first", "first must be between 1 and 100 (got 101)"},
		{"after not a cursor", admin, `query($s: ID!, $w: ID!) { deliveries(sessionId: $s, webhookId: $w, after: "evt_1") { pageInfo { hasNextPage } } }`,
			map[string]any{"s": sid, "w": wid}, "BAD_USER_INPUT", "after", `after must be the endCursor of a page of this list (got "evt_1")`},
		{"redeliver in another session", admin, `mutation($s: ID!, $d: ID!) { redeliver(sessionId: $s, deliveryId: $d) { id } }`,
			map[string]any{"s": other, "d": dlv.ID}, "NOT_FOUND", "", "delivery " + dlv.ID + " not found"},
		{"redeliver by a token not reaching the session", u.CreateUser.Token, `mutation($s: ID!, $d: ID!) { redeliver(sessionId: $s, deliveryId: $d) { id } }`,
			map[string]any{"s": sid, "d": dlv.ID}, "NOT_FOUND", "", "session " + sid + " not found"},
		{"test another session's webhook", admin, `mutation($s: ID!, $w: ID!) { testWebhook(sessionId: $s, id: $w) { id } }`,
			map[string]any{"s": sid, "w": otherWid}, "NOT_FOUND", "", "webhook " + otherWid + " not found"},
		{"test by a token not reaching the session", u.CreateUser.Token, `mutation($s: ID!, $w: ID!) { testWebhook(sessionId: $s, id: $w) { id } }`,
			map[string]any{"s": sid, "w": wid}, "NOT_FOUND", "", "session " + sid + " not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := srv.GraphQL(t, tt.token, tt.query, tt.vars)
			if len(res.Errors) != 1 {
				t.Fatalf("errors %+v, want one", res.Errors)
			}
			e := res.Errors[0]
			field, _ := e.Extensions["field"].(string)
			if e.Code() != tt.code || field != tt.field || e.Message != tt.msg {
				t.Errorf("got %s field %q %q, want %s field %q %q", e.Code(), field, e.Message, tt.code, tt.field, tt.msg)
			}
		})
	}
	if n := len(rc.Requests()); n != 1 {
		t.Errorf("receiver got %d requests, want only the one test: refusals send nothing", n)
	}
}

package app_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/config"
)

// TestRateLimitIsPerUser: the tokens of one user draw on one bucket, so
// minting session tokens buys no rate (issue 21, finding 9: ten session
// tokens of one user got 1,375 requests served in 2 s against 103 for one
// token). Another user's bucket is its own.
func TestRateLimitIsPerUser(t *testing.T) {
	cfg := apptest.Config(t)
	cfg.Rate = config.Rate{Per: 0.5, Burst: 6}
	srv := apptest.Start(t, cfg)
	// The setup spends the admin's burst: a user of its own does the rest.
	var user struct{ CreateUser struct{ Token string } }
	srv.MustGraphQL(t, apptest.AdminToken, `mutation { createUser(name: "many-tokens") { token } }`, nil, &user)
	var tokens []string
	for i := range 3 {
		var created struct{ CreateSession struct{ Token string } }
		srv.MustGraphQL(t, user.CreateUser.Token, fmt.Sprintf(`mutation { createSession(name: "s%d") { token } }`, i), nil, &created)
		tokens = append(tokens, created.CreateSession.Token)
	}
	// The user's burst of 6 went on 3 creations; 3 are left for all its
	// tokens together, whichever asks.
	served := 0
	for range 4 {
		for _, tok := range append(tokens, user.CreateUser.Token) {
			res := srv.Do(t, "GET", "/api/v1/session", tok, "", nil)
			switch res.Status {
			case http.StatusOK:
				served++
			case http.StatusTooManyRequests:
			default:
				t.Fatalf("status %d: %s", res.Status, res.Body)
			}
		}
	}
	if served > 4 { // 3 left, and at most one more refilled meanwhile
		t.Errorf("4 tokens of one user were served %d of 16 requests; one user's bucket holds 3 after its 3 creations", served)
	}
	if served == 0 {
		t.Error("none served: the user's bucket was empty from the start")
	}
	// Another user is untouched by the first one's spending.
	var other struct{ CreateUser struct{ Token string } }
	srv.MustGraphQL(t, apptest.AdminToken, `mutation { createUser(name: "neighbour") { token } }`, nil, &other)
	if res := srv.Do(t, "GET", "/api/v1/session", other.CreateUser.Token, "", nil); res.Status != http.StatusOK {
		t.Errorf("another user: status %d: %s", res.Status, res.Body)
	}
}

// TestHeaderlessUpgradeIsChargedToItsToken: a browser cannot set a header
// on a websocket upgrade, so the dashboard's socket comes without one and
// names its token in connection_init. It is charged there, to that token's
// user: an anonymous flood from the same address (all clients behind one
// reverse proxy) that emptied the address's bucket does not refuse it
// (finding 10). A socket naming no valid token is charged to the address.
func TestHeaderlessUpgradeIsChargedToItsToken(t *testing.T) {
	cfg := apptest.Config(t)
	cfg.Rate = config.Rate{Per: 0.1, Burst: 3}
	srv := apptest.Start(t, cfg)
	// The flood: anonymous requests from this address until refused.
	for i := 0; ; i++ {
		res := srv.Do(t, "GET", "/api/v1/session", "", "", nil)
		if res.Status == http.StatusTooManyRequests {
			break
		}
		if i > 10 {
			t.Fatalf("the address's bucket never emptied (last status %d)", res.Status)
		}
	}
	c := srv.DialWebsocket(t, "graphql-transport-ws", nil)
	send(t, c, `{"type":"connection_init","payload":{"Authorization":"Bearer `+apptest.AdminToken+`"}}`)
	m, err := next(t, c)
	if err != nil || m["type"] != "connection_ack" {
		t.Fatalf("a header-less socket naming a valid token, from a flooded address: %v %v; want connection_ack", m, err)
	}
	// Without a valid token the socket is the address's: refused 4429 now
	// that the address's bucket is empty.
	bad := srv.DialWebsocket(t, "graphql-transport-ws", nil)
	send(t, bad, `{"type":"connection_init","payload":{"Authorization":"Bearer wgu_not-a-token"}}`)
	if ce := closeOf(t, bad); ce == nil || ce.Code != 4429 {
		t.Fatalf("a guessing socket from the flooded address closed with %v; want 4429", ce)
	}
}

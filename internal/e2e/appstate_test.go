package e2e

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
)

// TestProfileNameUpdatesInParallel: parallel PUT update-profile-name of one
// session all answer 200: they take turns on the session's app state, each
// lands on the network as one patch, the name afterwards is the one written
// last, and the next update works too (parallel patches built on one stored
// state used to answer 502 and break the session's app state for good).
func TestProfileNameUpdatesInParallel(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	const phone = apptest.LinkedPhone
	n := s.Network(t)
	path := s.URL + "/api/v1/session/" + sess.ID + "/update-profile-name"
	const critical = "critical_block"

	before := n.AppStateVersion(phone, critical)
	names := []string{"Parallel A", "Parallel B", "Parallel C", "Parallel D", "Parallel E"}
	answers := make([]string, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() { answers[i] = put(s, path, `{"name":"`+name+`"}`) })
	}
	wg.Wait()
	for i, a := range answers {
		if a != "200 "+`{"status":"success","data":{}}` {
			t.Errorf("update %q answered %s", names[i], a)
		}
	}
	if got, want := n.AppStateVersion(phone, critical), before+uint64(len(names)); got != want {
		t.Errorf("network critical_block version %d, want %d: one patch per update", got, want)
	}
	last := accountView(t, s, phone).PushName
	if !strings.HasPrefix(last, "Parallel ") {
		t.Fatalf("network push name %q is none of %v", last, names)
	}
	s.WaitStatus(t, sess.ID, "CONNECTED", func(m map[string]any) bool { return m["pushName"] == last })

	if a := put(s, path, `{"name":"Afterwards"}`); a != "200 "+`{"status":"success","data":{}}` {
		t.Fatalf("update after the parallel ones answered %s", a)
	}
	if got := accountView(t, s, phone).PushName; got != "Afterwards" {
		t.Errorf("network push name %q, want Afterwards", got)
	}
	s.WaitStatus(t, sess.ID, "CONNECTED", func(m map[string]any) bool { return m["pushName"] == "Afterwards" })
	apptest.Settle(t, n, sess)
}

// put sends one PUT with the admin token and returns "status body" (or the
// transport error): it runs on goroutines of its own, where a test must not
// fail itself.
func put(s *apptest.Server, url, body string) string {
	req, err := http.NewRequest(http.MethodPut, url, strings.NewReader(body))
	if err != nil {
		return err.Error()
	}
	req.Header.Set("Authorization", apptest.AdminToken)
	req.Header.Set("Content-Type", "application/json")
	res, err := s.Client().Do(req)
	if err != nil {
		return err.Error()
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%d %s", res.StatusCode, strings.TrimSpace(string(b)))
}

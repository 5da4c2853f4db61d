// Package testclient is what a test needs to act as a client of something
// that runs apart from it (a server, a child process, a simulated network):
// Until polls for a condition nothing signals, and GraphQL runs one
// operation over HTTP against a base URL.
//
// It is a leaf on purpose: internal/apptest starts a whole server and so
// imports nearly every package, which therefore cannot import it in their
// own tests (whatsapp, auth, cluster); they share this instead. apptest
// keeps what needs its Server.
package testclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"
)

// pollEvery is how often Until reads its condition: often enough that a
// test waits little past the moment it holds, seldom enough to leave the
// CPU to the code under test on a loaded two-core machine.
const pollEvery = 5 * time.Millisecond

// Until polls cond until it holds, failing the test when it still does not
// after timeout; what names the condition in the failure.
func Until(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", timeout, what)
		}
		time.Sleep(pollEvery)
	}
}

// maxAnswer bounds the answer GraphQL reads: a test's answers are small,
// and a runaway one should fail, not exhaust the test's memory.
const maxAnswer = 64 << 20

// GraphQL posts one operation to base+"/graphql" with the Authorization
// header authorization (none when empty) and decodes its data into out
// (nil: not decoded). A transport failure, a status other than 200, an
// answer that is not GraphQL, or any GraphQL error is an error. It fails
// no test itself, so it may be called from any goroutine.
func GraphQL(ctx context.Context, hc *http.Client, base, authorization, query string, vars map[string]any, out any) error {
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		return fmt.Errorf("graphql %q: variables: %w", query, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/graphql", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("graphql %q: %w", query, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	res, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("graphql %q: %w", query, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxAnswer))
	if err != nil {
		return fmt.Errorf("graphql %q: read: %w", query, err)
	}
	var answer struct {
		Data   json.RawMessage   `json:"data"`
		Errors []json.RawMessage `json:"errors"`
	}
	if err := json.Unmarshal(raw, &answer); err != nil || len(answer.Errors) > 0 || res.StatusCode != http.StatusOK {
		return fmt.Errorf("graphql %q: %d %.2000s", query, res.StatusCode, raw)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(answer.Data, out); err != nil {
		return fmt.Errorf("graphql %q: data: %w", query, err)
	}
	return nil
}

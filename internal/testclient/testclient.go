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
	"strings"
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

// Error is one GraphQL error as a client reads it.
type Error struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

// Code is the error's extensions.code.
func (e Error) Code() string { c, _ := e.Extensions["code"].(string); return c }

func (e Error) String() string { return e.Code() + ": " + e.Message }

// Answer is a GraphQL answer as it came: the HTTP status, the data and the
// errors.
type Answer struct {
	Status int             `json:"-"`
	Data   json.RawMessage `json:"data"`
	Errors []Error         `json:"errors"`
}

// Post posts one operation to base+"/graphql" with the Authorization
// header authorization (none when empty) and returns the answer, whatever
// errors it holds: a query that fails validation (422) is an answer too.
// Only a transport failure or a body that is not a GraphQL answer is an
// error. It fails no test itself, so it may be called from any goroutine.
func Post(ctx context.Context, hc *http.Client, base, authorization, query string, vars map[string]any) (Answer, error) {
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		return Answer{}, fmt.Errorf("graphql %q: variables: %w", query, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/graphql", bytes.NewReader(body))
	if err != nil {
		return Answer{}, fmt.Errorf("graphql %q: %w", query, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	res, err := hc.Do(req)
	if err != nil {
		return Answer{}, fmt.Errorf("graphql %q: %w", query, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxAnswer))
	if err != nil {
		return Answer{}, fmt.Errorf("graphql %q: read: %w", query, err)
	}
	ans := Answer{Status: res.StatusCode}
	if err := json.Unmarshal(raw, &ans); err != nil || ans.Data == nil && ans.Errors == nil {
		return ans, fmt.Errorf("graphql %q: HTTP %d, not a GraphQL answer: %.2000s", query, res.StatusCode, raw)
	}
	return ans, nil
}

// GraphQL runs one operation that must succeed (Post) and decodes its data
// into out (nil: not decoded). A transport failure, a status other than
// 200, an answer that is not GraphQL, or any GraphQL error is an error
// naming the errors' codes and messages.
func GraphQL(ctx context.Context, hc *http.Client, base, authorization, query string, vars map[string]any, out any) error {
	ans, err := Post(ctx, hc, base, authorization, query, vars)
	if err != nil {
		return err
	}
	if len(ans.Errors) > 0 || ans.Status != http.StatusOK {
		msgs := make([]string, len(ans.Errors))
		for i, e := range ans.Errors {
			msgs[i] = e.String()
		}
		return fmt.Errorf("graphql %q: HTTP %d: %s", query, ans.Status, strings.Join(msgs, "; "))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(ans.Data, out); err != nil {
		return fmt.Errorf("graphql %q: data: %w", query, err)
	}
	return nil
}

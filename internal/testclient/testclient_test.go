package testclient

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeTB records a failure instead of ending the test, so Until's failing
// path can be checked.
type fakeTB struct {
	testing.TB
	failed string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = format
	panic(f) // as Fatalf ends the goroutine
}

func TestUntil(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	Until(t, 5*time.Second, "the third call", func() bool { return n.Add(1) >= 3 })
	if got := n.Load(); got != 3 {
		t.Errorf("cond called %d times, want 3", got)
	}

	f := &fakeTB{TB: t}
	func() {
		defer func() {
			if r := recover(); r != f {
				t.Fatalf("Until did not fail the test: %v", r)
			}
		}()
		Until(f, 20*time.Millisecond, "never", func() bool { return false })
	}()
	if f.failed != "not within %s: %s" {
		t.Errorf("failure %q", f.failed)
	}
}

func TestGraphQL(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case r.URL.Path != "/graphql" || r.Header.Get("Authorization") != "tok":
			http.Error(w, "no", http.StatusUnauthorized)
		case strings.Contains(string(body), "invalid"):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = io.WriteString(w, `{"errors":[{"message":"no field invalid","extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}`)
		case strings.Contains(string(body), "bad"):
			_, _ = io.WriteString(w, `{"errors":[{"message":"bad field"}]}`)
		default:
			_, _ = io.WriteString(w, `{"data":{"n":7}}`)
		}
	}))
	t.Cleanup(srv.Close)
	ctx := context.Background()

	var out struct{ N int }
	if err := GraphQL(ctx, srv.Client(), srv.URL, "tok", "{ n }", nil, &out); err != nil || out.N != 7 {
		t.Errorf("good query: %+v, %v", out, err)
	}
	tests := []struct{ name, auth, query, want string }{
		{"GraphQL error", "tok", "{ bad }", "bad field"},
		{"refused", "", "{ n }", "401"},
		{"invalid", "tok", "{ invalid }", "422: GRAPHQL_VALIDATION_FAILED: no field invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := GraphQL(ctx, srv.Client(), srv.URL, tt.auth, tt.query, nil, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one naming %q", err, tt.want)
			}
		})
	}
}

// TestPost: an answer with errors is an answer (a test asserts its codes);
// only what is not a GraphQL answer is an error.
func TestPost(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusUnprocessableEntity)
		_, _ = io.WriteString(w, `{"errors":[{"message":"no field x","path":["x"],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}`)
	}))
	t.Cleanup(srv.Close)
	ans, err := Post(context.Background(), srv.Client(), srv.URL, "tok", "{ x }", nil)
	if err != nil || ans.Status != http.StatusUnprocessableEntity || len(ans.Errors) != 1 ||
		ans.Errors[0].Code() != "GRAPHQL_VALIDATION_FAILED" || ans.Errors[0].Message != "no field x" || len(ans.Errors[0].Path) != 1 {
		t.Errorf("answer %+v, %v", ans, err)
	}
	if _, err := Post(context.Background(), srv.Client(), srv.URL, "", "{ x }", nil); err == nil || !strings.Contains(err.Error(), "HTTP 401, not a GraphQL answer") {
		t.Errorf("a plain-text 401: %v", err)
	}
}

package health_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"

	"github.com/wagraph/wagraph/internal/health"
	"github.com/wagraph/wagraph/internal/storage"
)

// probe says what the test tells it.
type probe struct{ err error }

func (p probe) Check(context.Context) error { return p.err }

func get(h http.Handler, path string) (int, string, string) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code, rec.Header().Get("Content-Type"), rec.Body.String()
}

// TestReadiness: /readyz is 503 naming the database's state when it takes
// no writes (each kind the probe reports), 503 while the sessions restore
// or when the restore was cut short by a stop, 200 once it ran to its end.
func TestReadiness(t *testing.T) {
	t.Parallel()
	log := slog.New(slog.DiscardHandler)
	type step struct {
		probe error
		ran   *bool // Restored(*ran) before the request; nil: not yet
		code  int
		body  string
	}
	yes, no := true, false
	var tests = []struct {
		name  string
		steps []step
	}{
		{"restoring, then ready", []step{
			{code: 503, body: `{"status":"starting","sessions":"restoring"}`},
			{ran: &yes, code: 200, body: `{"status":"ready"}`},
			{ran: &no, code: 200, body: `{"status":"ready"}`}, // a later call changes nothing
		}},
		{"stopped while restoring", []step{{ran: &no, code: 503, body: `{"status":"starting","sessions":"restoring"}`}}},
	}
	for _, kind := range []storage.ProbeKind{storage.ProbeFull, storage.ProbeUnreachable, storage.ProbeReadOnly, storage.ProbeTimeout, storage.ProbeFailed} {
		tests = append(tests, struct {
			name  string
			steps []step
		}{"database " + string(kind), []step{{probe: &storage.ProbeError{Kind: kind, Err: syscall.EIO}, ran: &yes, code: 503,
			body: fmt.Sprintf(`{"status":"unavailable","database":%q}`, kind)}}})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for i, s := range tc.steps {
				rd := health.NewReadiness(probe{s.probe}, log)
				for _, prior := range tc.steps[:i+1] {
					if prior.ran != nil {
						rd.Restored(*prior.ran)
					}
				}
				if s.ran != nil {
					select {
					case <-rd.Done():
					default:
						t.Fatal("Done is open after Restored")
					}
				}
				code, ctype, body := get(rd, "/readyz")
				if code != s.code || body != s.body+"\n" || ctype != "application/json" {
					t.Errorf("step %d: %d %s %s; want %d %s", i, code, ctype, body, s.code, s.body)
				}
			}
		})
	}
}

// TestStarting: while the storage opens the process is alive, not ready,
// and asks every other client to retry.
func TestStarting(t *testing.T) {
	t.Parallel()
	h := http.HandlerFunc(health.Starting)
	for _, tc := range []struct {
		path, body string
		code       int
		retry      string
	}{
		{"/healthz", `{"status":"ok"}`, 200, ""},
		{"/readyz", `{"status":"starting","storage":"opening"}`, 503, ""},
		{"/graphql", `{"status":"failed","message":"wagraph is starting: retry in a moment"}`, 503, "1"},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.path, nil))
		if rec.Code != tc.code || rec.Body.String() != tc.body+"\n" || rec.Header().Get("Retry-After") != tc.retry || rec.Header().Get("Content-Type") != "application/json" {
			t.Errorf("GET %s while starting: %d %q %v; want %d %s", tc.path, rec.Code, rec.Body, rec.Header(), tc.code, tc.body)
		}
	}
	if code, _, body := get(http.HandlerFunc(health.Live), "/healthz"); code != 200 || body != `{"status":"ok"}`+"\n" {
		t.Errorf("/healthz: %d %s", code, body)
	}
}

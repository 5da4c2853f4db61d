// Package health is what a supervisor asks the process: /healthz (alive:
// it answers) and /readyz (ready: the database takes writes and the linked
// sessions have been started), and both while the storage is still opening.
// Their bodies are written here once, for the front door of the process and
// for the server's routes.
package health

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/wagraph/wagraph/internal/storage"
)

// Live is /healthz: the process answers.
func Live(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
}

// Starting answers every request while the storage opens: the process is
// alive, not ready, and nothing else can be served yet.
func Starting(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/healthz":
		Live(w, r)
	case "/readyz":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"status":"starting","storage":"opening"}` + "\n"))
	default:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"status":"failed","message":"wagraph is starting: retry in a moment"}` + "\n"))
	}
}

// WriteProbe tells whether the database takes writes (storage.Probe: a
// real write at most once a second, shared by the callers meanwhile, so
// unauthenticated probes cannot turn into a flood of writes).
type WriteProbe interface {
	Check(ctx context.Context) error
}

// Readiness is /readyz once the storage is open: whether the database
// takes writes, and whether the linked sessions have been started.
type Readiness struct {
	probe    WriteProbe
	log      *slog.Logger
	started  atomic.Bool   // the restore ran to its end
	once     sync.Once     // Restored's
	restored chan struct{} // closed when the restore has ended
}

// NewReadiness is /readyz over probe; it is 503 until Restored(true).
func NewReadiness(probe WriteProbe, log *slog.Logger) *Readiness {
	return &Readiness{probe: probe, log: log, restored: make(chan struct{})}
}

// Restored tells that the restore of the linked sessions has ended; ran
// says whether it ran to its end (the server did not stop first): only
// then is the process ready. Later calls change nothing.
func (rd *Readiness) Restored(ran bool) {
	rd.once.Do(func() {
		rd.started.Store(ran)
		close(rd.restored)
	})
}

// Done is closed once the restore has ended (Restored).
func (rd *Readiness) Done() <-chan struct{} { return rd.restored }

// ServeHTTP answers 200 when the database takes a write and the linked
// sessions have been started; else 503 naming what is missing: the
// database's state (storage.ProbeKind: full, unreachable, read-only,
// timeout, failed) or the sessions still restoring.
func (rd *Readiness) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if err := rd.probe.Check(r.Context()); err != nil {
		kind := storage.KindOf(err)
		rd.log.ErrorContext(r.Context(), "readyz: the database takes no writes", "database", string(kind), "err", err)
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"status":"unavailable","database":"` + string(kind) + `"}` + "\n"))
		return
	}
	if !rd.started.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"status":"starting","sessions":"restoring"}` + "\n"))
		return
	}
	_, _ = w.Write([]byte(`{"status":"ready"}` + "\n"))
}

// Package app is the composition root: it opens the databases, builds every
// part from the configuration, serves HTTP and stops everything in order. The
// command calls Run; end-to-end tests call New and use Handler to run a whole
// server in-process.
package app

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	_ "github.com/mattn/go-sqlite3" // the SQLite driver

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/graph"
	"github.com/wagraph/wagraph/internal/account"
	"github.com/wagraph/wagraph/internal/auth"
	"github.com/wagraph/wagraph/internal/cluster"
	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/internal/ingest"
	"github.com/wagraph/wagraph/internal/media"
	"github.com/wagraph/wagraph/internal/messaging"
	"github.com/wagraph/wagraph/internal/metrics"
	"github.com/wagraph/wagraph/internal/revocation"
	"github.com/wagraph/wagraph/internal/sessions"
	"github.com/wagraph/wagraph/internal/storage"
	"github.com/wagraph/wagraph/internal/webhook"
	"github.com/wagraph/wagraph/whatsapp"
	"github.com/wagraph/wagraph/whatsapp/sandbox"
)

// Options are what the process gives the application besides its settings.
type Options struct {
	Logger *slog.Logger
	// Announce receives the bootstrap admin token, printed once (stderr).
	Announce io.Writer
	// Now and Rand default to the wall clock and crypto/rand; tests pin them
	// to get byte-for-byte stable responses.
	Now  func() time.Time
	Rand io.Reader
	// Listener, when set, is where Run serves instead of listening on
	// --addr: a test learns the address before the server has started.
	Listener net.Listener
	// DebugListener, when set, is where Run serves /debug/pprof instead
	// of listening on --debug-addr.
	DebugListener net.Listener
	// EventBuffer is how many live events one subscriber may have waiting
	// before it is cut off; 0 is events.DefaultBuffer. Tests shrink it.
	EventBuffer int
}

// withDefaults fills what the process left unset.
func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Announce == nil {
		o.Announce = os.Stderr
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Rand == nil {
		o.Rand = rand.Reader
	}
	return o
}

// App is one wagraph server.
type App struct {
	cfg     config.Config
	log     *slog.Logger
	sqlDB   *sql.DB
	db      *ent.Client
	probe   writeProbe // /readyz's write to the database
	handler http.Handler

	waStore io.Closer         // the whatsmeow device store
	manager *whatsapp.Manager // nil until built
	// ops runs the WhatsApp operations of the API: the manager, or on
	// PostgreSQL the router that runs each where its session runs.
	ops      sessionOps
	node     *cluster.Node   // this process in the cluster; nil on SQLite
	router   *cluster.Router // nil on SQLite
	network  io.Closer       // the simulated network in sandbox mode
	sandbox  graph.SandboxNetwork
	local    *sandbox.Local // the in-process network of --sandbox
	messages *messaging.Service
	// messageStore is the messages' record, which the sink writes and
	// the messaging service reads: built before both, so neither waits
	// for the other.
	messageStore *messaging.Store
	loader       *media.Loader
	preparer     *media.Preparer    // its pools bound the media work of sends and pictures
	versions     *whatsapp.Versions // the WhatsApp Web version the sessions announce
	hooks        *webhooks          // the event log and the webhook dispatcher; nil until built
	metrics      *metrics.Metrics   // what /metrics shows
	debug        *debugServer       // /debug/pprof on --debug-addr; nil when unset
	eventLog     *events.Log
	bus          *events.Bus
	eventBuf     int // Options.EventBuffer
	sink         *ingest.Sink

	eventListener *storage.Listener // PostgreSQL's notifications to bus; nil on SQLite
	revocations   *storage.Listener // the other processes' revocations; nil on SQLite

	// The background work: restoring the linked sessions, then the
	// scheduler. Close cancels it and waits for it.
	stopBackground  context.CancelFunc
	background      sync.WaitGroup
	restored        chan struct{} // closed when the restore has ended
	sessionsStarted atomic.Bool   // the restore ran to its end

	closeMu sync.Mutex
	closed  bool
}

// ShutdownGrace is how long in-flight requests may finish at shutdown.
const ShutdownGrace = 30 * time.Second

// New builds a server: it opens (and creates) the database, ensures the
// bootstrap admin and wires the HTTP handlers, and returns without waiting
// for the linked sessions: they are restored in the background (Ready).
func New(ctx context.Context, cfg config.Config, opts Options) (*App, error) {
	opts = opts.withDefaults()
	now := func() time.Time { return opts.Now().UTC().Truncate(time.Millisecond) }
	random := &lockedReader{r: opts.Rand}
	newID := func() string { return uuid.Must(uuid.NewRandomFromReader(random)).String() }

	store, err := storage.Open(ctx, cfg.DataDir, cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	sqlDB, db := store.SQL, store.Ent
	a := &App{cfg: cfg, log: opts.Logger, sqlDB: sqlDB, db: db, probe: storage.NewProbe(store), restored: make(chan struct{})}
	a.eventBuf = opts.EventBuffer

	var announceTo *sql.DB // on PostgreSQL, the other processes hear of revocations
	if cfg.Clustered() {
		announceTo = sqlDB
	}
	authSvc := auth.NewService(db, random, now, newID, auth.Options{
		Announcer: revocation.NewAnnouncer(announceTo, a.log), MaxSessionTokens: cfg.Quotas.TokensPerSession,
	})
	if err := authSvc.Bootstrap(ctx, cfg.AdminToken, opts.Announce, a.log); err != nil {
		a.Close()
		return nil, fmt.Errorf("bootstrap admin: %w", err)
	}
	a.metrics = newMetrics(db, a, a.log)
	a.openEvents(now, random)
	a.hooks = a.startWebhooks(now, random)
	a.openSink()
	if err := a.startWhatsApp(ctx); err != nil {
		a.Close()
		return nil, err
	}
	var leases sessions.Claimer // in a cluster, the creator holds a new session first
	if a.node != nil {
		leases = a.node
	}
	sessionSvc := sessions.NewService(sessions.ServiceOptions{
		DB: db, Tokens: authSvc, Unlinker: a.ops, Leases: leases, Ended: a.bus, Now: now, NewID: newID,
		PerUser: cfg.Quotas.SessionsPerUser, Logger: a.log,
	})
	resolver := &graph.Resolver{
		DB:         db,
		Sessions:   sessionSvc,
		Auth:       authSvc,
		Registry:   webhook.NewRegistry(db, random, now, newID, cfg.AllowPrivateURLs, cfg.Quotas.WebhooksPerSession),
		Deliveries: a.hooks.deliveries,
		WhatsApp:   a.ops,
		Account:    account.NewService(a.ops),
		Messages:   a.messages,
		Media:      a.loader,
		Pictures:   a.preparer,
		Sandbox:    a.sandbox,
		Now:        now,
		NewID:      newID,
		Events:     a.bus,
		NodeID:     cfg.NodeID,
	}
	if a.node != nil {
		resolver.Leases = a.node
	}
	a.listenRevocations(authSvc, resolver)
	limiter := auth.NewLimiter(cfg.Rate.Per, cfg.Rate.Burst, time.Now, cfg.TrustedProxies...)
	a.handler = a.routes(resolver, authSvc, limiter)
	a.startBackground(ctx)
	return a, nil
}

// Handler is the whole HTTP surface.
func (a *App) Handler() http.Handler { return a.handler }

// Serve serves HTTP on ln until ctx is done, then lets in-flight requests
// finish for up to ShutdownGrace.
func (a *App) Serve(ctx context.Context, ln net.Listener) error {
	return serve(ctx, ln, a.handler, a.log)
}

func serve(ctx context.Context, ln net.Listener, h http.Handler, log *slog.Logger) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down", "grace", ShutdownGrace)
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// Close stops the background work (a restore under way, the scheduler),
// disconnects every session, stops the simulated network, the webhook
// dispatcher and the event log, and releases the databases. It may be
// called twice.
func (a *App) Close() error {
	a.closeMu.Lock()
	defer a.closeMu.Unlock()
	if a.closed {
		return nil
	}
	a.closed = true
	if a.stopBackground != nil {
		a.stopBackground()
		a.background.Wait()
	}
	if a.manager != nil {
		a.manager.Close()
	}
	if a.node != nil {
		// After the manager: its sessions are stopped (and their statuses
		// saved under the leases), so the others may start them at once.
		lctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := a.node.Leave(lctx); err != nil {
			a.log.Warn("giving the session leases back failed: they expire by themselves", "err", err)
		}
		cancel()
	}
	if a.revocations != nil {
		a.revocations.Close()
	}
	a.closeEvents()
	var errs []error
	if a.network != nil {
		errs = append(errs, a.network.Close())
	}
	if a.hooks != nil {
		a.hooks.close()
	}
	if a.waStore != nil {
		errs = append(errs, a.waStore.Close())
	}
	errs = append(errs, a.db.Close()) // closes sqlDB too
	// Last: a shutdown that hangs can still be looked at.
	if a.debug != nil {
		errs = append(errs, a.debug.close())
	}
	return errors.Join(errs...)
}

// Run is the whole life of `wagraph serve`: listen, open the storage and
// build the server, serve until ctx is done, stop in order. The port opens
// first: while the storage opens /healthz answers and /readyz says what it
// waits for, and the linked sessions reconnect after that, in the
// background (/readyz is 503 until they have been started).
func Run(ctx context.Context, cfg config.Config, opts Options) error {
	opts = opts.withDefaults()
	ln := opts.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", cfg.Addr); err != nil {
			return fmt.Errorf("--addr %s: %w", cfg.Addr, err)
		}
	}
	debugLn, err := listenDebug(cfg, opts)
	if err != nil {
		ln.Close()
		return err
	}
	clusterLn, err := listenCluster(cfg)
	if err != nil {
		ln.Close()
		if debugLn != nil {
			debugLn.Close()
		}
		return err
	}
	front := &frontDoor{}
	front.set(http.HandlerFunc(serveStarting))
	serveCtx, stopServing := context.WithCancel(ctx)
	defer stopServing()
	served := make(chan error, 1)
	go func() { served <- serve(serveCtx, ln, front, opts.Logger) }()

	if cfg.Clustered() && cfg.AdvertiseAddr == "" {
		at := ln // where the calls of the other processes are served
		if clusterLn != nil {
			at = clusterLn
		}
		cfg.AdvertiseAddr = advertised(at.Addr())
	}
	a, err := New(ctx, cfg, opts)
	if err != nil {
		stopServing()
		<-served
		if debugLn != nil {
			debugLn.Close()
		}
		if clusterLn != nil {
			clusterLn.Close()
		}
		return err
	}
	defer a.Close()
	var clusterServed <-chan error // nil (never ready) without a listener of its own
	if clusterLn != nil {
		clusterServed = a.serveCluster(serveCtx, clusterLn)
	}
	if debugLn != nil {
		a.debug = serveDebug(debugLn, a.log)
	}
	defer context.AfterFunc(ctx, a.endStreams)()
	front.set(a.handler)
	a.log.Info("wagraph listening", "addr", ln.Addr().String(), "graphql", "http://"+ln.Addr().String()+"/graphql", "data_dir", cfg.DataDir)
	// Both listeners stop together, before a.Close: the calls under way
	// finish while the manager still runs.
	select {
	case err := <-served:
		if clusterServed != nil {
			stopServing()
			if cerr := <-clusterServed; cerr != nil {
				a.log.Error("serving the calls between the processes failed", "err", cerr)
			}
		}
		return err
	case err := <-clusterServed:
		// Without its cluster listener the process cannot take the calls
		// for its sessions: it stops, as when --addr fails.
		stopServing()
		if serr := <-served; err == nil { // ctx is done: both stopped
			return serr
		}
		return fmt.Errorf("--cluster-addr: %w", err)
	}
}

// frontDoor serves the handler of the moment: the starting answers while
// the storage opens, then the server's.
type frontDoor struct{ h atomic.Pointer[http.Handler] }

func (f *frontDoor) set(h http.Handler) { f.h.Store(&h) }

func (f *frontDoor) ServeHTTP(w http.ResponseWriter, r *http.Request) { (*f.h.Load()).ServeHTTP(w, r) }

// serveStarting answers while the storage opens: the process is alive, not
// ready, and nothing else can be served yet.
func serveStarting(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/healthz":
		_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
	case "/readyz":
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"status":"starting","storage":"opening"}` + "\n"))
	default:
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"status":"failed","message":"wagraph is starting: retry in a moment"}` + "\n"))
	}
}

// lockedReader lets one random source serve concurrent requests.
type lockedReader struct {
	mu sync.Mutex
	r  io.Reader
}

func (l *lockedReader) Read(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Read(p)
}

// sessionOps runs the WhatsApp operations where each session runs, reads
// a session's state and forgets a deleted one: the manager, or the router.
type sessionOps interface {
	graph.WhatsApp
	sessions.Unlinker
}

// advertised is the address the other processes of a cluster reach this
// one at when --advertise-addr is unset: the listening address, with the
// machine's name when it listens on every interface.
func advertised(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return addr.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if name, err := os.Hostname(); err == nil {
			host = name
		}
	}
	return net.JoinHostPort(host, port)
}

// Package app is the composition root: it opens the databases, builds every
// part from the configuration and stops everything in order. The command
// (cmd/wagraph) listens, calls New and serves Handler; end-to-end tests call
// New and use Handler to run a whole server in-process.
package app

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/google/uuid"
	_ "github.com/mattn/go-sqlite3" // the SQLite driver

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/graph"
	"github.com/wagraph/wagraph/internal/account"
	"github.com/wagraph/wagraph/internal/auth"
	"github.com/wagraph/wagraph/internal/chats"
	"github.com/wagraph/wagraph/internal/cluster"
	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/datadir"
	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/internal/geocode"
	"github.com/wagraph/wagraph/internal/health"
	"github.com/wagraph/wagraph/internal/ingest"
	"github.com/wagraph/wagraph/internal/linkpreview"
	"github.com/wagraph/wagraph/internal/lookup"
	"github.com/wagraph/wagraph/internal/media"
	"github.com/wagraph/wagraph/internal/mediakeep"
	"github.com/wagraph/wagraph/internal/messaging"
	"github.com/wagraph/wagraph/internal/metrics"
	"github.com/wagraph/wagraph/internal/natsstream"
	"github.com/wagraph/wagraph/internal/netguard"
	"github.com/wagraph/wagraph/internal/revocation"
	"github.com/wagraph/wagraph/internal/sessions"
	"github.com/wagraph/wagraph/internal/sessionsettings"
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
	// EventBuffer is how many live events one subscriber may have waiting before it is cut off; 0 is events.DefaultBuffer. Tests shrink it.
	EventBuffer int
	// QRTimeouts is how long a pairing's QR codes show; zero is whatsmeow's (the first a minute). Tests shorten it.
	QRTimeouts whatsapp.QRTimeouts
	Media      mediakeep.Setup // a test's media store (nil: --media-store's) and the keeper's timings
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

// App is one wagraph server: what serves it and what stops it. Every part
// is built by New, and handed what it depends on there; the App keeps only
// what its methods reach.
type App struct {
	handler http.Handler
	// clusterCalls serves the calls the other processes of a cluster
	// forward here, on --cluster-addr (ClusterCalls); nil on SQLite.
	clusterCalls http.Handler
	bus          *events.Bus       // ended first at shutdown (EndStreams); end-to-end tests read it
	local        *sandbox.Local    // the in-process network of --sandbox; nil otherwise
	ready        *health.Readiness // /readyz, and Ready
	probe        *storage.Probe    // /readyz's write to the database (internal tests fill the disk under it)
	keeper       *mediakeep.Keeper // of the store --media-store names; nil: none

	parts closers // what Close stops, in its order

	closeMu sync.Mutex
	closed  bool
}

// New builds a server: it opens (and creates) the database, ensures the
// bootstrap admin and wires the HTTP handlers, and returns without waiting
// for the linked sessions: they are restored in the background (Ready).
//
// Each part is built once, from what it depends on, in the order of those
// dependencies; a part that starts work of its own goes into parts at once,
// so that a failure further down stops what was built before it.
func New(ctx context.Context, cfg config.Config, opts Options) (_ *App, err error) {
	opts = opts.withDefaults()
	log := opts.Logger
	now := func() time.Time { return opts.Now().UTC().Truncate(time.Millisecond) }
	random := &lockedReader{r: opts.Rand}
	newID := func() string { return uuid.Must(uuid.NewRandomFromReader(random)).String() }

	if cfg.UsesDataDir() {
		datadir.RestrictReporting(cfg.DataDir, log)
	}
	store, err := storage.Open(ctx, cfg.DataDir, cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	db := store.Ent
	parts := closers{log: log, db: db}
	defer func() {
		if err != nil {
			parts.close()
		}
	}()
	probe := storage.NewProbe(store) // /readyz's write to the database

	var announceTo *sql.DB // on PostgreSQL, the other processes hear of revocations
	if cfg.Clustered() {
		announceTo = store.SQL
	}
	authSvc := auth.NewService(db, random, now, newID, auth.Options{
		Announcer: revocation.NewAnnouncer(announceTo, log), MaxSessionTokens: cfg.Quotas.TokensPerSession,
	})
	// Under the setup lock: the processes of a cluster started at once on
	// an empty database would each create the admin (and, given the same
	// --admin-token, all but one die on its hash).
	if err := store.WithSetupLock(ctx, func(ctx context.Context) error {
		return authSvc.Bootstrap(ctx, cfg.AdminToken, opts.Announce, log)
	}); err != nil {
		return nil, fmt.Errorf("bootstrap admin: %w", err)
	}

	// What the parts below count as they work: each is handed the
	// counters; /metrics, built once they all exist, shows them.
	counters := newCounters()
	// The events, then what delivers and records them: the dispatcher
	// delivers from the event log, and the sink, which the sessions and
	// the messaging service publish through, wakes it after each commit
	// and records the messages in the store the messaging service reads.
	var followURL string // on PostgreSQL other processes commit events of the same sessions
	if cfg.Clustered() {
		followURL = cfg.DatabaseURL
	}
	stream := events.OpenStream(db, events.StreamOptions{
		Log:         events.LogOptions{Now: now, Random: random, Logger: log},
		Bus:         events.BusOptions{Buffer: opts.EventBuffer, Observer: counters, Stored: counters, Logger: log},
		DatabaseURL: followURL,
	})
	parts.events = stream
	hooks := webhook.StartOutbox(db, webhook.OutboxOptions{
		Dispatcher:   webhook.DispatcherOptions{Schedule: cfg.WebhookRetry, Now: now, Logger: log, Observer: counters},
		AllowPrivate: cfg.AllowPrivateURLs, Timeout: cfg.WebhookTimeout, Random: random,
	})
	parts.hooks = hooks
	keeper, err := mediakeep.Open(cfg.Media, cfg.DataDir, opts.Media, db, log) // the store --media-store names; nil: none
	if err != nil {
		return nil, err
	}
	messageStore, chatStore := messaging.NewStore(db, cfg.Clustered()).KeepMedia(keeper.Keeps()), chats.NewStore(db, cfg.Clustered(), nil)
	settings, automations := sessionsettings.New(db), messaging.NewAutomations(log) // what the settings act on, from the sink

	// The WhatsApp side: the device store, the cluster this process is a
	// member of on PostgreSQL, the simulated network in sandbox mode, the
	// version the sessions announce, and the session manager over them.
	waStore, err := openDeviceStore(ctx, cfg, store, log)
	if err != nil {
		return nil, err
	}
	parts.waStore = waStore
	var (
		node     *cluster.Node        // nil on SQLite
		statuses whatsapp.StatusStore = sessions.NewStatusStore(db)
		held     func() []string      // the sessions this process runs; nil: all
	)
	if cfg.Clustered() {
		// On PostgreSQL every process is a member of a cluster (maybe of
		// one): it runs the sessions it leases, and saves their statuses
		// only while it holds them.
		node, err = cluster.New(cluster.Options{ID: cfg.NodeID, DB: store.SQL, Logger: log, Advertise: cfg.AdvertiseAddr, TTL: cfg.LeaseTTL})
		if err != nil {
			return nil, err
		}
		parts.node, held = node, node.HeldIDs
		statuses = cluster.NewFencedStatuses(sessions.NewStatusStore(db), node)
	}
	// The log of the sessions held on NATS JetStream (nil without --nats-url), woken with the dispatcher.
	if parts.nats, err = natsstream.Start(ctx, natsstream.Options{URL: cfg.NATS.URL, Creds: cfg.NATS.Creds, Stream: cfg.NATS.Stream,
		DB: db, Log: stream.Log, Held: held, Observer: counters, Logger: log}); err != nil {
		return nil, err
	}
	sink := ingest.NewSink(ingest.SinkOptions{
		Bus: stream.Bus, Messages: messageStore, Chats: chatStore, MediaPath: graph.MediaPath, Waker: ingest.Wakers{hooks.Dispatcher, parts.nats}, Follower: automations, Logger: log,
	})
	var (
		network   sandbox.Running   // the simulated network of --sandbox or --sandbox-network; nil: WhatsApp
		transport http.RoundTripper // how the sessions reach the simulated network; nil: WhatsApp
	)
	if cfg.Sandbox || cfg.SandboxNetwork != "" {
		if network, err = sandbox.Open(ctx, log, cfg.SandboxNetwork, filepath.Join(cfg.DataDir, sandbox.StateDirName)); err != nil {
			return nil, err
		}
		parts.network, transport = network, network.Transport()
	}
	local, _ := network.(*sandbox.Local)
	versions, err := newVersions(cfg, log, network)
	if err != nil {
		return nil, err
	}
	manager := whatsapp.NewManager(whatsapp.ManagerOptions{
		Store: waStore, Logger: log, Publisher: sink, Statuses: statuses, Transport: transport,
		Versions: versions, Observer: counters, Proxies: settings,
		// A session taken down by a failure to store reconnects once the
		// database takes writes again (the probe of /readyz).
		Probe: probe,
		// What WhatsApp said of each account's limits, kept in its session's row.
		Limits:     sessions.NewStatusStore(db),
		QRTimeouts: opts.QRTimeouts,
	})
	parts.manager = manager
	// ops runs the WhatsApp operations of the API: the manager, or in a
	// cluster the router that runs each where its session runs.
	var (
		ops          sessionOps         = manager
		leases       leaseHolder        // nil on SQLite
		clusterCalls http.Handler       // nil on SQLite
		nodes        messaging.Liveness // nil on SQLite
	)
	if node != nil {
		if err := node.Join(ctx, manager); err != nil {
			return nil, err
		}
		router := cluster.NewRouter(node, manager, sessions.NewStatusStore(db), ClusterTLS(cfg), log)
		ops, leases, clusterCalls, nodes = router, node, callsHandler(cfg, router), node
	}
	loader := media.NewLoader(media.LoaderOptions{AllowPrivate: cfg.AllowPrivateURLs, MaxBytes: cfg.MaxBody, Logger: log})
	// One preparer, so one set of pools, for sends, pictures and the link
	// previews' images.
	preparer := media.NewPreparerWith(media.PreparerOptions{
		FFmpeg: cfg.FFmpeg, Logger: log, ImageDecodes: cfg.MediaConcurrency.Images,
		FFmpegRuns: cfg.MediaConcurrency.FFmpeg, Downloads: cfg.MediaConcurrency.Downloads,
	})
	accounts := account.NewService(ops)
	messages := messaging.New(messaging.Options{
		DB: db, Sender: ops, Held: held, Loader: loader, Preparer: preparer,
		Geocoder:  geocode.New(cfg.GeocoderURL, netguard.New(netguard.Options{AllowPrivate: cfg.AllowPrivateURLs}), log),
		Previewer: linkpreview.New(linkpreview.Options{AllowPrivate: cfg.AllowPrivateURLs, Images: preparer, Logger: log}),
		Publisher: sink, Store: messageStore, Logger: log, Observer: counters, Invites: accounts,
		MaxScheduled: cfg.Quotas.ScheduledPerSession, MaxScheduledBytes: cfg.Quotas.ScheduledBytesPerSession,
		SharedKeys: cfg.Clustered(), NodeID: cfg.NodeID, Nodes: nodes, Limits: sessions.NewStatusStore(db), Settings: settings, Automations: automations, Keeper: keeper,
	})

	// The API.
	sessionSvc := sessions.NewService(sessions.ServiceOptions{
		DB: db, Tokens: authSvc, Unlinker: ops, Leases: leases, Ended: stream.Bus, Now: now, NewID: newID,
		PerUser: cfg.Quotas.SessionsPerUser, Logger: log, Media: keeper,
	})
	resolver := &graph.Resolver{
		DB:         db,
		Sessions:   sessionSvc,
		Auth:       authSvc,
		Registry:   webhook.NewRegistry(db, random, now, newID, cfg.AllowPrivateURLs, cfg.Quotas.WebhooksPerSession),
		Deliveries: hooks.Deliveries,
		WhatsApp:   ops,
		Account:    accounts,
		Lookup:     lookup.NewService(ops),
		Messages:   messages,
		ChatStore:  chatStore,
		Media:      loader,
		Pictures:   preparer,
		Sandbox:    network,
		Now:        now,
		NewID:      newID,
		Events:     stream.Bus,
		Leases:     leases,
		NodeID:     cfg.NodeID,
		Settings:   settings,
	}
	if cfg.Clustered() { // the other processes' revocations end what this one holds open too
		parts.revocations = revocation.Listen(cfg.DatabaseURL, log, revocation.Receiver{
			SessionDeleted: resolver.SessionDeleted, Revoked: authSvc.Disconnect, RecheckAll: authSvc.RecheckAll,
		})
	}
	// Last, from the parts that hold what it reads at each scrape.
	scraped := metrics.New(metrics.Options{Counters: counters, Sessions: sessions.NewStatusCounts(db, manager), Version: versions, Logger: log})
	ready := health.NewReadiness(probe, log)
	handler := routes(cfg, log, api{
		resolver: resolver, auth: authSvc, limiter: auth.NewLimiter(cfg.Rate.Per, cfg.Rate.Burst, time.Now, cfg.TrustedProxies...),
		counters: counters, metrics: scraped, clusterCalls: clusterCalls, ready: ready,
	})
	bg := newBackground(ctx)
	parts.background = bg
	// What the NATS stream has not taken yet outlives the retention (for events.StreamHold at most).
	bg.run(func(ctx context.Context) {
		stream.Log.RunPrune(ctx, events.Retention{Keep: cfg.EventRetention, Stream: parts.nats.Stream()}, events.PruneInterval)
	})
	bg.run(func(ctx context.Context) {
		ready.Restored(startSessions(ctx, bg, versions, node, manager, sessions.NewStatusStore(db)))
		if ctx.Err() == nil { // after the sessions: due sends and downloads find them connecting, not absent
			bg.run(func(ctx context.Context) { keeper.Run(ctx, ops, held) })
			messages.Run(ctx)
		}
	})
	return &App{
		handler: handler, clusterCalls: clusterCalls, bus: stream.Bus, local: local, ready: ready, probe: probe,
		parts: parts, keeper: keeper,
	}, nil
}

// MediaStore is where received media is kept (nil: none): end-to-end
// tests look into it.
func (a *App) MediaStore() mediakeep.Store { return a.keeper.Store() }

// Handler is the whole HTTP surface.
func (a *App) Handler() http.Handler { return a.handler }

// ClusterCalls serves the calls the other processes of a cluster forward
// here, for the listener of --cluster-addr; nil on SQLite.
func (a *App) ClusterCalls() http.Handler { return a.clusterCalls }

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
	return errors.Join(a.parts.close()...)
}

// closers are the parts that run until they are stopped, in the order
// Close stops them, which is not the reverse of the order New builds them
// in (the sessions stop before the cluster lease they ran under is given
// back, the event log before the webhook dispatcher). A part New has not
// built, or that the settings leave out, is nil.
type closers struct {
	log         *slog.Logger
	background  *background // restoring the sessions, then the scheduler
	manager     *whatsapp.Manager
	node        *cluster.Node     // nil on SQLite
	revocations *storage.Listener // nil on SQLite
	events      *events.Stream
	nats        *natsstream.Publisher // nil without --nats-url
	network     sandbox.Running       // nil outside sandbox mode
	hooks       *webhook.Outbox
	waStore     io.Closer // the whatsmeow device store
	db          *ent.Client
}

// close stops the parts in order and returns what failed.
func (c closers) close() []error {
	if c.background != nil {
		c.background.close()
	}
	if c.manager != nil {
		c.manager.Close()
	}
	if c.node != nil {
		// After the manager: its sessions are stopped (and their statuses
		// saved under the leases), so the others may start them at once.
		lctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := c.node.Leave(lctx); err != nil {
			c.log.Warn("giving the session leases back failed: they expire by themselves", "err", err)
		}
		cancel()
	}
	if c.revocations != nil {
		c.revocations.Close()
	}
	c.nats.Close() // nil-safe; before the log it reads
	if c.events != nil {
		c.events.Close()
	}
	var errs []error
	if c.network != nil {
		errs = append(errs, c.network.Close())
	}
	if c.hooks != nil {
		c.hooks.Close()
	}
	if c.waStore != nil {
		errs = append(errs, c.waStore.Close())
	}
	return append(errs, c.db.Close()) // closes the *sql.DB too
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

// leaseHolder knows which process of a cluster runs each session, and
// leases a new one to its creator first: the cluster's node.
type leaseHolder interface {
	graph.Leases
	sessions.Claimer
}

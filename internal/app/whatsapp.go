package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/wagraph/wagraph/graph"
	"github.com/wagraph/wagraph/internal/cluster"
	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/geocode"
	"github.com/wagraph/wagraph/internal/media"
	"github.com/wagraph/wagraph/internal/messaging"
	"github.com/wagraph/wagraph/internal/netguard"
	"github.com/wagraph/wagraph/internal/sessions"
	"github.com/wagraph/wagraph/internal/storage"
	"github.com/wagraph/wagraph/whatsapp"
	"github.com/wagraph/wagraph/whatsapp/sandbox"
)

// openSandbox starts or reaches the simulated network the settings ask for
// (--sandbox: in-process; --sandbox-network: a separate process), points
// the manager's clients at it, and returns its control surface and what
// closes it; nil outside sandbox mode.
func openSandbox(ctx context.Context, cfg config.Config, log *slog.Logger, opts *whatsapp.ManagerOptions) (graph.SandboxNetwork, io.Closer, error) {
	switch {
	case cfg.SandboxNetwork != "":
		r, err := sandbox.Dial(ctx, cfg.SandboxNetwork, log)
		if err != nil {
			return nil, nil, fmt.Errorf("--sandbox-network %s: %w", cfg.SandboxNetwork, err)
		}
		opts.Transport = r.Transport()
		return r, r, nil
	case cfg.Sandbox:
		// The network keeps its world beside the sessions' device store,
		// so the sessions linked to it come back after a restart.
		l, err := sandbox.OpenLocal(log, filepath.Join(cfg.DataDir, sandbox.StateDirName))
		if err != nil {
			return nil, nil, fmt.Errorf("start the simulated network: %w", err)
		}
		opts.Transport = l.Transport()
		return l, l, nil
	}
	return nil, nil, nil
}

func whatsmeowStorePath(cfg config.Config) string { return filepath.Join(cfg.DataDir, "whatsmeow.db") }

// startWhatsApp builds the WhatsApp side: the device store, the simulated
// network in sandbox mode, the session manager, media handling and the
// messaging service with its scheduler.
func (a *App) startWhatsApp(ctx context.Context) error {
	var (
		mopts whatsapp.ManagerOptions
		err   error
	)
	if a.cfg.Clustered() {
		// The device store's tables (whatsmeow_*) in the product's own
		// database, through a pool of their own.
		mopts.Store, err = whatsapp.OpenPostgresStore(ctx, storage.PostgresDriver, a.cfg.DatabaseURL,
			storage.PostgresWhere(a.cfg.DatabaseURL), a.log)
	} else {
		mopts.Store, err = whatsapp.OpenStore(ctx, whatsmeowStorePath(a.cfg), a.log)
	}
	if err != nil {
		return fmt.Errorf("open the WhatsApp device store: %w", err)
	}
	a.waStore = mopts.Store
	sink := a.sink
	mopts.Logger, mopts.Publisher, mopts.Statuses = a.log, sink, sessions.NewStatusStore(a.db)
	if a.cfg.Clustered() {
		// On PostgreSQL every process is a member of a cluster (maybe of
		// one): it runs the sessions it leases, and saves their statuses
		// only while it holds them.
		a.node, err = cluster.New(cluster.Options{ID: a.cfg.NodeID, DB: a.sqlDB, Logger: a.log, Advertise: a.cfg.AdvertiseAddr, TTL: a.cfg.LeaseTTL})
		if err != nil {
			return err
		}
		mopts.Statuses = cluster.NewFencedStatuses(sessions.NewStatusStore(a.db), a.node)
	}
	a.sandbox, a.network, err = openSandbox(ctx, a.cfg, a.log, &mopts)
	if err != nil {
		return err
	}
	if l, ok := a.network.(*sandbox.Local); ok {
		a.local = l
	}
	if a.versions, err = a.newVersions(); err != nil {
		return err
	}
	mopts.Versions = a.versions
	mopts.Observer = a.metrics
	// A session taken down by a failure to store reconnects once the
	// database takes writes again (the probe of /readyz).
	mopts.Probe = a.probe
	a.manager = whatsapp.NewManager(mopts)
	a.ops = a.manager
	var held func() []string
	if a.node != nil {
		if err := a.node.Join(ctx, a.manager); err != nil {
			return err
		}
		a.router = cluster.NewRouter(a.node, a.manager, sessions.NewStatusStore(a.db), clusterTLS(a.cfg), a.log)
		a.ops, held = a.router, a.node.HeldIDs
	}
	a.loader = media.NewLoader(media.LoaderOptions{AllowPrivate: a.cfg.AllowPrivateURLs, MaxBytes: a.cfg.MaxBody, Logger: a.log})
	// One preparer, so one set of pools, for sends and for pictures.
	a.preparer = media.NewPreparerWith(media.PreparerOptions{
		FFmpeg: a.cfg.FFmpeg, Logger: a.log, ImageDecodes: a.cfg.MediaConcurrency.Images,
		FFmpegRuns: a.cfg.MediaConcurrency.FFmpeg, Downloads: a.cfg.MediaConcurrency.Downloads,
	})
	a.messages = messaging.New(messaging.Options{
		DB: a.db, Sender: a.ops, Held: held, Loader: a.loader, Preparer: a.preparer,
		Geocoder:  geocode.New(a.cfg.GeocoderURL, netguard.New(netguard.Options{AllowPrivate: a.cfg.AllowPrivateURLs}), a.log),
		Publisher: sink, Store: a.messageStore, Logger: a.log, Observer: a.metrics,
		MaxScheduled: a.cfg.Quotas.ScheduledPerSession, MaxScheduledBytes: a.cfg.Quotas.ScheduledBytesPerSession,
	})
	return nil
}

// newVersions is the keeper of the announced version (--wa-version). Auto
// mode reads WhatsApp Web's page through the guarded client, or, in
// sandbox mode, the simulated network's page: never the internet.
func (a *App) newVersions() (*whatsapp.Versions, error) {
	opts := whatsapp.VersionOptions{Logger: a.log}
	switch a.cfg.WAVersion {
	case "auto", "":
		opts.Mode = whatsapp.VersionAuto
	case "builtin":
		opts.Mode = whatsapp.VersionBuiltin
	default:
		opts.Mode, opts.Pinned = whatsapp.VersionPinned, a.cfg.WAVersion
	}
	if web, ok := a.network.(interface{ HTTPClient() *http.Client }); ok {
		opts.HTTPClient = web.HTTPClient()
	} else {
		opts.HTTPClient = &http.Client{Transport: netguard.New(netguard.Options{AllowPrivate: a.cfg.AllowPrivateURLs}).Transport()}
	}
	v, err := whatsapp.NewVersions(opts)
	if err != nil {
		return nil, fmt.Errorf("--wa-version %s: %w", a.cfg.WAVersion, err)
	}
	return v, nil
}

// startBackground restores the linked sessions in a goroutine the App owns,
// then runs the scheduler (after the sessions, so due sends find them
// connecting rather than absent). Close cancels both and waits for them.
func (a *App) startBackground(ctx context.Context) {
	bg, stop := context.WithCancel(context.WithoutCancel(ctx))
	a.stopBackground = stop
	a.background.Add(1)
	go func() {
		defer a.background.Done()
		// The sessions start announcing the current version, not one
		// WhatsApp would refuse first.
		if _, err := a.versions.Refresh(bg); err != nil && bg.Err() == nil {
			a.log.Warn("could not read the current WhatsApp Web version; the sessions announce the one in use", "version", a.versions.Current().String(), "err", err)
		}
		a.background.Add(1)
		go func() {
			defer a.background.Done()
			a.versions.Run(bg)
		}()
		a.background.Go(func() { a.eventLog.RunPrune(bg, a.cfg.EventRetention, events.PruneInterval) })
		if a.node != nil {
			a.background.Go(func() { a.node.Run(bg) })
			select {
			case <-a.node.Ready():
				a.sessionsStarted.Store(true)
			case <-bg.Done():
			}
		} else {
			a.sessionsStarted.Store(a.restore(bg))
		}
		close(a.restored)
		if bg.Err() == nil {
			a.messages.Run(bg)
		}
	}()
}

// restore starts every linked session, a few at a time (the manager's
// bound); each
// then reconnects by itself. A session that fails is logged and left
// DISCONNECTED (connectSession starts it again); it stops neither the
// others nor the server. It reports whether it ran to its end, that is
// whether the server did not stop first.
func (a *App) restore(ctx context.Context) bool {
	start := time.Now()
	ids, err := sessions.NewStatusStore(a.db).Linked(ctx)
	if err != nil {
		if ctx.Err() == nil {
			a.log.Error("restoring the linked sessions failed: none was started", "err", err)
		}
		return ctx.Err() == nil
	}
	var failed atomic.Int64
	a.manager.RestoreEach(ctx, ids, func(i int, err error) {
		switch {
		case err == nil, ctx.Err() != nil:
		case fault.CodeOf(err) == fault.NotFound: // deleted since the list was read
			a.log.Debug("the session was deleted before it was restored", "session_id", ids[i])
		default:
			failed.Add(1)
			a.log.Error("restoring the session failed", "session_id", ids[i], "err", err)
		}
	})
	if ctx.Err() != nil {
		a.log.Info("restoring the linked sessions stopped: the server is stopping")
		return false
	}
	a.log.Info("linked sessions started", "sessions", len(ids), "failed", failed.Load(), "took", time.Since(start).Round(time.Millisecond))
	return true
}

// Ready is closed once the restore of the linked sessions has ended: every
// one has been started (and reconnects by itself) or has failed, or the
// server stopped first. Unless it stopped, /readyz answers 200 from then on
// while the database answers.
func (a *App) Ready() <-chan struct{} { return a.restored }

// Sandbox is the in-process simulated network of --sandbox (nil otherwise):
// end-to-end tests assert what it holds.
func (a *App) Sandbox() *sandbox.Local { return a.local }

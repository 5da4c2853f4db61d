package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"go.mau.fi/whatsmeow/store/sqlstore"

	"github.com/wagraph/wagraph/graph"
	"github.com/wagraph/wagraph/internal/cluster"
	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/internal/health"
	"github.com/wagraph/wagraph/internal/messaging"
	"github.com/wagraph/wagraph/internal/netguard"
	"github.com/wagraph/wagraph/internal/storage"
	"github.com/wagraph/wagraph/whatsapp"
	"github.com/wagraph/wagraph/whatsapp/sandbox"
)

// openSandbox starts or reaches the simulated network the settings ask for
// (--sandbox: in-process; --sandbox-network: a separate process) and
// returns its control surface, what closes it and the transport the
// manager's clients reach it through; all nil outside sandbox mode.
func openSandbox(ctx context.Context, cfg config.Config, log *slog.Logger) (graph.SandboxNetwork, io.Closer, http.RoundTripper, error) {
	switch {
	case cfg.SandboxNetwork != "":
		r, err := sandbox.Dial(ctx, cfg.SandboxNetwork, log)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("--sandbox-network %s: %w", cfg.SandboxNetwork, err)
		}
		return r, r, r.Transport(), nil
	case cfg.Sandbox:
		// The network keeps its world beside the sessions' device store,
		// so the sessions linked to it come back after a restart.
		l, err := sandbox.OpenLocal(log, filepath.Join(cfg.DataDir, sandbox.StateDirName))
		if err != nil {
			return nil, nil, nil, fmt.Errorf("start the simulated network: %w", err)
		}
		return l, l, l.Transport(), nil
	}
	return nil, nil, nil, nil
}

func whatsmeowStorePath(cfg config.Config) string { return filepath.Join(cfg.DataDir, "whatsmeow.db") }

// openDeviceStore opens whatsmeow's device store: on PostgreSQL its tables
// (whatsmeow_*) in the product's own database, through a pool of their
// own; on SQLite a database file of its own in the data directory.
func openDeviceStore(ctx context.Context, cfg config.Config, log *slog.Logger) (*sqlstore.Container, error) {
	var (
		st  *sqlstore.Container
		err error
	)
	if cfg.Clustered() {
		st, err = whatsapp.OpenPostgresStore(ctx, storage.PostgresDriver, cfg.DatabaseURL, storage.PostgresWhere(cfg.DatabaseURL), log)
	} else {
		st, err = whatsapp.OpenStore(ctx, whatsmeowStorePath(cfg), log)
	}
	if err != nil {
		return nil, fmt.Errorf("open the WhatsApp device store: %w", err)
	}
	return st, nil
}

// newVersions is the keeper of the announced version (--wa-version). Auto
// mode reads WhatsApp Web's page through the guarded client, or, in
// sandbox mode, the simulated network's page: never the internet.
func newVersions(cfg config.Config, log *slog.Logger, network io.Closer) (*whatsapp.Versions, error) {
	opts := whatsapp.VersionOptions{Setting: cfg.WAVersion, Logger: log}
	if web, ok := network.(interface{ HTTPClient() *http.Client }); ok {
		opts.HTTPClient = web.HTTPClient()
	} else {
		opts.HTTPClient = &http.Client{Transport: netguard.New(netguard.Options{AllowPrivate: cfg.AllowPrivateURLs}).Transport()}
	}
	v, err := whatsapp.NewVersions(opts)
	if err != nil {
		return nil, fmt.Errorf("--wa-version %s: %w", cfg.WAVersion, err)
	}
	return v, nil
}

// backgroundWork is what the background work runs over.
type backgroundWork struct {
	versions  *whatsapp.Versions
	events    *events.Log   // pruned past --event-retention
	retention time.Duration // --event-retention
	// node, in a cluster, starts the sessions it leases; without one (on
	// SQLite) the manager restores every linked session.
	node      *cluster.Node
	manager   *whatsapp.Manager
	linked    whatsapp.LinkedLister // the sessions the manager restores
	scheduler *messaging.Service
	ready     *health.Readiness // told when the sessions have been started
}

// background is the work New starts and Close stops first: restoring the
// linked sessions, then the scheduler, beside the version's refreshes, the
// event log's pruning and, in a cluster, the node's leases.
type background struct {
	stop context.CancelFunc
	wg   sync.WaitGroup
}

// startBackground restores the linked sessions in a goroutine the App owns,
// then runs the scheduler (after the sessions, so due sends find them
// connecting rather than absent). Close cancels both and waits for them.
func startBackground(ctx context.Context, w backgroundWork) *background {
	bg, stop := context.WithCancel(context.WithoutCancel(ctx))
	b := &background{stop: stop}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		w.versions.Prime(bg)
		b.wg.Go(func() { w.versions.Run(bg) })
		b.wg.Go(func() { w.events.RunPrune(bg, w.retention, events.PruneInterval) })
		if w.node != nil {
			b.wg.Go(func() { w.node.Run(bg) })
			select {
			case <-w.node.Ready():
				w.ready.Restored(true)
			case <-bg.Done():
				w.ready.Restored(false)
			}
		} else {
			w.ready.Restored(w.manager.RestoreLinked(bg, w.linked))
		}
		if bg.Err() == nil {
			w.scheduler.Run(bg)
		}
	}()
	return b
}

// close cancels the background work and waits for it.
func (b *background) close() {
	b.stop()
	b.wg.Wait()
}

// Ready is closed once the restore of the linked sessions has ended: every
// one has been started (and reconnects by itself) or has failed, or the
// server stopped first. Unless it stopped, /readyz answers 200 from then on
// while the database answers.
func (a *App) Ready() <-chan struct{} { return a.ready.Done() }

// Sandbox is the in-process simulated network of --sandbox (nil otherwise):
// end-to-end tests assert what it holds.
func (a *App) Sandbox() *sandbox.Local { return a.local }

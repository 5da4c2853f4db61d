package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"sync"

	"go.mau.fi/whatsmeow/store/sqlstore"

	"github.com/wagraph/wagraph/internal/cluster"
	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/datadir"
	"github.com/wagraph/wagraph/internal/netguard"
	"github.com/wagraph/wagraph/internal/storage"
	"github.com/wagraph/wagraph/whatsapp"
	"github.com/wagraph/wagraph/whatsapp/sandbox"
)

// openDeviceStore opens whatsmeow's device store: on PostgreSQL its tables
// (whatsmeow_*) in the product's own database db, through a pool of their
// own, created or upgraded under db's setup lock (the processes of a
// cluster started at once on an empty database would each create them);
// on SQLite a database file of its own in the data directory.
func openDeviceStore(ctx context.Context, cfg config.Config, db *storage.DB, log *slog.Logger) (*sqlstore.Container, error) {
	var (
		st  *sqlstore.Container
		err error
	)
	if cfg.Clustered() {
		err = db.WithSetupLock(ctx, func(ctx context.Context) error {
			st, err = whatsapp.OpenPostgresStore(ctx, storage.PostgresDriver, cfg.DatabaseURL, storage.PostgresWhere(cfg.DatabaseURL), log)
			return err
		})
	} else {
		st, err = whatsapp.OpenStore(ctx, filepath.Join(cfg.DataDir, datadir.DeviceStore), log)
	}
	if err != nil {
		return nil, fmt.Errorf("open the WhatsApp device store: %w", err)
	}
	return st, nil
}

// newVersions is the keeper of the announced version (--wa-version). Auto
// mode reads WhatsApp Web's page through the guarded client, or, in
// sandbox mode, the simulated network's page: never the internet.
func newVersions(cfg config.Config, log *slog.Logger, network sandbox.Running) (*whatsapp.Versions, error) {
	opts := whatsapp.VersionOptions{Setting: cfg.WAVersion, Logger: log}
	if network != nil {
		opts.HTTPClient = network.HTTPClient()
	} else {
		opts.HTTPClient = &http.Client{Transport: netguard.New(netguard.Options{AllowPrivate: cfg.AllowPrivateURLs}).Transport()}
	}
	v, err := whatsapp.NewVersions(opts)
	if err != nil {
		return nil, fmt.Errorf("--wa-version %s: %w", cfg.WAVersion, err)
	}
	return v, nil
}

// background is the work New starts last and Close stops first: the
// version's refreshes, the event log's pruning, in a cluster the node's
// leases, and the start of the sessions followed by the scheduler.
type background struct {
	ctx  context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup
}

func newBackground(ctx context.Context) *background {
	b := &background{}
	b.ctx, b.stop = context.WithCancel(context.WithoutCancel(ctx))
	return b
}

// run runs fn in a goroutine of its own until close.
func (b *background) run(fn func(context.Context)) { b.wg.Go(func() { fn(b.ctx) }) }

// close cancels the background work and waits for it.
func (b *background) close() {
	b.stop()
	b.wg.Wait()
}

// startSessions starts the sessions this process runs, announcing the
// current version: in a cluster those the node leases (it runs in the
// background), else every linked one (the manager's restore). It reports
// whether they were started before ctx ended.
func startSessions(ctx context.Context, b *background, versions *whatsapp.Versions, node *cluster.Node, manager *whatsapp.Manager, linked whatsapp.LinkedLister) bool {
	versions.Prime(ctx)
	b.run(versions.Run)
	if node == nil {
		return manager.RestoreLinked(ctx, linked)
	}
	b.run(node.Run)
	select {
	case <-node.Ready():
		return true
	case <-ctx.Done():
		return false
	}
}

// Ready is closed once the restore of the linked sessions has ended: every
// one has been started (and reconnects by itself) or has failed, or the
// server stopped first. Unless it stopped, /readyz answers 200 from then on
// while the database answers.
func (a *App) Ready() <-chan struct{} { return a.ready.Done() }

// Sandbox is the in-process simulated network of --sandbox (nil otherwise):
// end-to-end tests assert what it holds.
func (a *App) Sandbox() *sandbox.Local { return a.local }

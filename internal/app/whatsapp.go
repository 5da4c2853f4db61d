package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"

	"github.com/wagraph/wagraph/ent"
	entsession "github.com/wagraph/wagraph/ent/session"
	"github.com/wagraph/wagraph/graph"
	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/geocode"
	"github.com/wagraph/wagraph/internal/media"
	"github.com/wagraph/wagraph/internal/messaging"
	"github.com/wagraph/wagraph/internal/netguard"
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
		opts.Point = r.Point
		return r, r, nil
	case cfg.Sandbox:
		l, err := sandbox.NewLocal(log)
		if err != nil {
			return nil, nil, fmt.Errorf("start the simulated network: %w", err)
		}
		opts.Point = l.Point
		return l, l, nil
	}
	return nil, nil, nil
}

// statusStore keeps the manager's status records in the session table.
type statusStore struct{ db *ent.Client }

func (s statusStore) LoadStatus(ctx context.Context, id string) (whatsapp.StatusRecord, bool, error) {
	row, err := s.db.Session.Get(ctx, id)
	if ent.IsNotFound(err) {
		return whatsapp.StatusRecord{}, false, nil
	}
	if err != nil {
		return whatsapp.StatusRecord{}, false, fmt.Errorf("load session %s: %w", id, err)
	}
	rec := whatsapp.StatusRecord{Status: whatsapp.Status(row.Status)}
	if row.Jid != nil {
		rec.JID = *row.Jid
	}
	if row.PushName != nil {
		rec.PushName = *row.PushName
	}
	if row.ConnectedAt != nil {
		rec.ConnectedAt = *row.ConnectedAt
	}
	return rec, true, nil
}

func (s statusStore) SaveStatus(ctx context.Context, id string, rec whatsapp.StatusRecord) error {
	u := s.db.Session.UpdateOneID(id).SetStatus(entsession.Status(rec.Status))
	if rec.JID != "" {
		u.SetJid(rec.JID)
	} else {
		u.ClearJid()
	}
	if rec.PushName != "" {
		u.SetPushName(rec.PushName)
	} else {
		u.ClearPushName()
	}
	if !rec.ConnectedAt.IsZero() {
		u.SetConnectedAt(rec.ConnectedAt.UTC())
	}
	if err := u.Exec(ctx); err != nil {
		return fmt.Errorf("save status of session %s: %w", id, err)
	}
	return nil
}

// linkedSessions lists the sessions with a device to log in at start.
func linkedSessions(ctx context.Context, db *ent.Client) ([]string, error) {
	ids, err := db.Session.Query().Where(entsession.JidNotNil()).IDs(ctx)
	if err != nil {
		return nil, fmt.Errorf("list linked sessions: %w", err)
	}
	return ids, nil
}

// eventSink is the manager's Publisher: every event is recorded (the
// message store) before it is acknowledged to WhatsApp; an error makes
// WhatsApp send it again. The event log and its consumers (webhooks,
// subscriptions) will hang here.
type eventSink struct {
	messages *messaging.Service
	log      *slog.Logger
}

func (e *eventSink) Publish(ctx context.Context, sessionID string, ev whatsapp.Event) error {
	if m := ev.Message; m != nil && m.Media != nil && ev.Data != nil {
		// events.md: mediaUrl is this service's media route, never WhatsApp's.
		ev.Data["mediaUrl"] = graph.MediaPath(sessionID, m.ID)
	}
	if err := e.messages.Record(ctx, sessionID, ev); err != nil {
		return err
	}
	e.log.DebugContext(ctx, "event", "session_id", sessionID, "kind", ev.Kind)
	return nil
}

func whatsmeowStorePath(cfg config.Config) string { return filepath.Join(cfg.DataDir, "whatsmeow.db") }

// startWhatsApp builds the WhatsApp side: the device store, the simulated
// network in sandbox mode, the session manager, media handling and the
// messaging service with its scheduler.
func (a *App) startWhatsApp(ctx context.Context) error {
	store, err := whatsapp.OpenStore(ctx, whatsmeowStorePath(a.cfg), a.log)
	if err != nil {
		return fmt.Errorf("open the WhatsApp device store: %w", err)
	}
	a.waStore = store
	sink := &eventSink{log: a.log}
	mopts := whatsapp.ManagerOptions{Store: store, Logger: a.log, Publisher: sink, Statuses: statusStore{a.db}}
	a.sandbox, a.network, err = openSandbox(ctx, a.cfg, a.log, &mopts)
	if err != nil {
		return err
	}
	if l, ok := a.network.(*sandbox.Local); ok {
		a.local = l
	}
	a.manager = whatsapp.NewManager(mopts)
	a.loader = media.NewLoader(media.LoaderOptions{AllowPrivate: a.cfg.AllowPrivateURLs, MaxBytes: a.cfg.MaxBody, Logger: a.log})
	a.messages = messaging.New(messaging.Options{
		DB: a.db, Sender: a.manager, Loader: a.loader, Preparer: media.NewPreparer(a.cfg.FFmpeg, a.log),
		Geocoder:  geocode.New(a.cfg.GeocoderURL, netguard.New(netguard.Options{AllowPrivate: a.cfg.AllowPrivateURLs}), a.log),
		Publisher: sink, Logger: a.log,
	})
	sink.messages = a.messages
	return nil
}

// restore reconnects every linked session and starts the scheduler (after
// the sessions, so due sends find them connecting rather than absent).
func (a *App) restore(ctx context.Context) error {
	ids, err := linkedSessions(ctx, a.db)
	if err != nil {
		return err
	}
	if err := a.manager.Restore(ctx, ids); err != nil {
		return fmt.Errorf("reconnect sessions: %w", err)
	}
	jobs, stop := context.WithCancel(context.WithoutCancel(ctx))
	a.stopJobs = stop
	a.jobs.Add(1)
	go func() {
		defer a.jobs.Done()
		a.messages.Run(jobs)
	}()
	return nil
}

// Sandbox is the in-process simulated network of --sandbox (nil otherwise):
// end-to-end tests assert what it holds.
func (a *App) Sandbox() *sandbox.Local { return a.local }

package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/wagraph/wagraph/graph"
	"github.com/wagraph/wagraph/internal/auth"
	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/revocation"
	"github.com/wagraph/wagraph/internal/storage"
)

// recheckTimeout bounds the full recheck of the bound tokens a reconnected
// listener makes.
const recheckTimeout = 10 * time.Second

// listenRevocations (PostgreSQL) hands this process the revocations and
// session deletions of the others: their tokens' sockets and streams end
// here too, and a deleted session is forgotten. When the listener
// (re)connects, the notices it missed meanwhile are made up for by checking
// every bound token again. It returns nil on SQLite, or when the listener
// cannot start.
func listenRevocations(cfg config.Config, log *slog.Logger, authSvc *auth.Service, resolver *graph.Resolver) *storage.Listener {
	if !cfg.Clustered() {
		return nil
	}
	l, err := storage.Listen(context.Background(), storage.ListenerOptions{
		URL: cfg.DatabaseURL, Channel: revocation.Channel, Logger: log,
		Notify: func(payload string) {
			n, err := revocation.Decode(payload)
			if err != nil {
				log.Warn("a revocation notice could not be read", "err", err)
				return
			}
			if n.Session != "" {
				resolver.SessionDeleted(n.Session)
			}
			authSvc.Disconnect(n.Tokens...)
		},
		Connected: func() {
			ctx, cancel := context.WithTimeout(context.Background(), recheckTimeout)
			defer cancel()
			if err := authSvc.RecheckAll(ctx); err != nil {
				log.Warn("checking the open connections' tokens again failed; each is checked at its next operation", "err", err)
			}
		},
	})
	if err != nil {
		log.Error("revocations made by other processes will reach this one only at each token's next check", "err", err)
		return nil
	}
	return l
}

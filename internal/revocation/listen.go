package revocation

import (
	"context"
	"log/slog"
	"time"

	"github.com/wagraph/wagraph/internal/storage"
)

// recheckTimeout bounds the full recheck of the bound tokens a reconnected
// listener makes.
const recheckTimeout = 10 * time.Second

// Receiver is what a process does with the other processes' notices.
type Receiver struct {
	SessionDeleted func(id string)                 // forget a deleted session
	Revoked        func(tokens ...string)          // end the revoked tokens' sockets and streams
	RecheckAll     func(ctx context.Context) error // check every bound token again
}

// Listen (PostgreSQL, the database at url) hands this process the
// revocations and session deletions of the others. When the listener
// (re)connects, the notices it missed meanwhile are made up for by
// checking every bound token again. It returns nil when the listener
// cannot start: then a revocation reaches this process at each token's
// next check.
func Listen(url string, log *slog.Logger, r Receiver) *storage.Listener {
	l, err := storage.Listen(context.Background(), storage.ListenerOptions{
		URL: url, Channel: Channel, Logger: log,
		Notify: func(payload string) {
			n, err := Decode(payload)
			if err != nil {
				log.Warn("a revocation notice could not be read", "err", err)
				return
			}
			if n.Session != "" {
				r.SessionDeleted(n.Session)
			}
			r.Revoked(n.Tokens...)
		},
		Connected: func() {
			ctx, cancel := context.WithTimeout(context.Background(), recheckTimeout)
			defer cancel()
			if err := r.RecheckAll(ctx); err != nil {
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

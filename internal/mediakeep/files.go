package mediakeep

import (
	"context"
	"fmt"
	"io"
	"time"

	entmessage "github.com/wagraph/wagraph/ent/message"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/mediastore"
)

// Open opens the kept file sum (a message's media_sha256) for the media
// route; NOT_FOUND when it is not there (pruned, or deleted meanwhile).
func (k *Keeper) Open(ctx context.Context, sum string) (mediastore.Object, mediastore.Info, error) {
	if k == nil {
		return nil, mediastore.Info{}, fault.New(fault.NotFound, "no media is kept")
	}
	return k.store.Open(ctx, sum)
}

// KeepSent keeps the media a session sent, the bytes it uploaded (body,
// read to its end), as the media of the message messageID, when the
// options keep media of type typ. The message's row is there already: the
// send published it before returning. A row not there (its event was not
// stored) leaves the file to nobody: it is deleted again.
func (k *Keeper) KeepSent(ctx context.Context, sessionID, messageID, typ string, size int64, viewOnce bool, body io.Reader) error {
	if k == nil || !k.opts.Wants(typ, size, viewOnce) {
		return nil
	}
	info, err := k.store.Put(ctx, body)
	if err != nil {
		return fmt.Errorf("keep the media of message %s: %w", messageID, err)
	}
	n, err := k.db.Message.Update().
		Where(entmessage.SessionID(sessionID), entmessage.MessageID(messageID)).
		SetMediaSha256(info.SHA256).ClearMediaDue().Save(ctx)
	if err != nil {
		return fmt.Errorf("record the kept media of message %s: %w", messageID, err)
	}
	if n == 0 {
		k.dropUnreferenced(ctx, []string{info.SHA256})
	}
	return nil
}

// SessionFiles lists the kept files the messages of a session refer to:
// what DropUnreferenced is given once the session (and, with it, its
// messages) is deleted.
func (k *Keeper) SessionFiles(ctx context.Context, sessionID string) ([]string, error) {
	if k == nil {
		return nil, nil
	}
	sums, err := k.db.Message.Query().
		Where(entmessage.SessionID(sessionID), entmessage.MediaSha256NotNil()).
		Unique(true).Select(entmessage.FieldMediaSha256).Strings(ctx)
	if err != nil {
		return nil, fmt.Errorf("kept media of session %s: %w", sessionID, err)
	}
	return sums, nil
}

// DropUnreferenced deletes the files of sums no message refers to any
// more: a deleted session's, except those another session's messages
// also refer to. Failures are logged: the session is gone either way.
func (k *Keeper) DropUnreferenced(ctx context.Context, sums []string) {
	if k != nil {
		k.dropUnreferenced(ctx, sums)
	}
}

func (k *Keeper) dropUnreferenced(ctx context.Context, sums []string) {
	for _, sum := range sums {
		used, err := k.db.Message.Query().Where(entmessage.MediaSha256(sum)).Exist(ctx)
		if err == nil && !used {
			err = k.store.Delete(ctx, sum)
		}
		if err != nil {
			k.log.Warn("media keeper: a deleted session's file stays", "sha256", sum, "err", err)
		}
	}
}

func (k *Keeper) runPrune(ctx context.Context) {
	tick := time.NewTicker(k.opts.PruneEvery)
	defer tick.Stop()
	for {
		if n, err := k.Prune(ctx); err != nil && ctx.Err() == nil {
			k.log.Warn("media keeper: prune failed", "err", err)
		} else if n > 0 {
			k.log.Info("media keeper: pruned files past the retention", "files", n, "retention", k.opts.Retention)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Prune removes the kept files older than the retention (none without
// one) and returns how many. The messages' references go first, so the
// media route of a message falls back to the download on demand rather
// than finding a file gone.
func (k *Keeper) Prune(ctx context.Context) (int, error) {
	if k.opts.Retention <= 0 {
		return 0, nil
	}
	cutoff := k.now().Add(-k.opts.Retention)
	var old []string
	err := k.store.Walk(ctx, func(i mediastore.Info) error {
		if i.ModTime.Before(cutoff) {
			old = append(old, i.SHA256)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("list the kept media: %w", err)
	}
	for i, sum := range old {
		if _, err := k.db.Message.Update().Where(entmessage.MediaSha256(sum)).ClearMediaSha256().Save(ctx); err != nil {
			return i, fmt.Errorf("forget pruned media %s: %w", sum, err)
		}
		if err := k.store.Delete(ctx, sum); err != nil {
			return i, err
		}
	}
	return len(old), nil
}

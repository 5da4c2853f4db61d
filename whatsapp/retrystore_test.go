package whatsapp

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/proto/waAdv"
	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/store/sqlstore"
	"go.mau.fi/whatsmeow/types"

	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/internal/storage"
)

// TestRetryStoreKeepsAndPrunes: the device store has whatsmeow's retry
// store on the run's backend (SQLite, and PostgreSQL in make test's
// PostgreSQL pass): a sent message is found again for a retry, one older
// than retryKeep is pruned, and the prune runs at most once per
// retryPruneEvery (whatsmeow would run it at every send).
func TestRetryStoreKeepsAndPrunes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	var c *sqlstore.Container
	var raw *sql.DB
	var err error
	if url := dbtest.DatabaseURL(t); url != "" {
		if c, err = OpenPostgresStore(ctx, storage.PostgresDriver, url, storage.PostgresWhere(url), log); err == nil {
			raw, err = sql.Open(storage.PostgresDriver, url)
		}
	} else {
		path := filepath.Join(t.TempDir(), "whatsmeow.db")
		if c, err = OpenStore(ctx, path, log); err == nil {
			raw, err = sql.Open("sqlite3", "file:"+path+"?_busy_timeout=10000")
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close(); c.Close() })

	jid := types.NewADJID("4915550320001", 0, 3)
	dev := c.NewDevice()
	dev.ID = &jid
	dev.Account = &waAdv.ADVSignedDeviceIdentity{Details: []byte{1}, AccountSignature: make([]byte, 64), AccountSignatureKey: make([]byte, 32), DeviceSignature: make([]byte, 64)}
	if err := c.PutDevice(ctx, dev); err != nil {
		t.Fatal(err)
	}
	if dev, err = c.GetDevice(ctx, jid); err != nil || dev == nil {
		t.Fatalf("the device: %v", err)
	}
	clock := time.Now()
	dev.EventBuffer = newPrunedRetries(dev.EventBuffer, func() time.Time { return clock }, retryPruneEvery)
	chat := types.NewJID("100000000000001", types.HiddenUserServer)
	sent := func(id string, age time.Duration) {
		t.Helper()
		if err := dev.EventBuffer.AddOutgoingEvent(ctx, chat, id, "wa", []byte("plain "+id)); err != nil {
			t.Fatal(err)
		}
		if _, err := raw.ExecContext(ctx, `UPDATE whatsmeow_retry_buffer SET timestamp = $1 WHERE message_id = $2`,
			time.Now().Add(-age).UnixMilli(), id); err != nil {
			t.Fatal(err)
		}
	}
	kept := func(id string) bool {
		t.Helper()
		format, b, err := dev.EventBuffer.GetOutgoingEvent(ctx, chat, types.EmptyJID, id)
		if errors.Is(err, sql.ErrNoRows) {
			return false
		}
		if err != nil || format != "wa" || string(b) != "plain "+id {
			t.Fatalf("message %s from the retry store: %q %q %v", id, format, b, err)
		}
		return true
	}
	prune := func() {
		t.Helper()
		if err := dev.EventBuffer.DeleteOldOutgoingEvents(ctx); err != nil {
			t.Fatal(err)
		}
	}

	sent("RECENT", retryKeep-time.Hour)
	sent("OLD", retryKeep+time.Hour)
	prune()
	if !kept("RECENT") || kept("OLD") {
		t.Fatalf("after the prune: recent kept %v, old kept %v; want only the recent one", kept("RECENT"), kept("OLD"))
	}
	sent("OLD", retryKeep+time.Hour)
	clock = clock.Add(retryPruneEvery - time.Minute)
	prune()
	if !kept("OLD") {
		t.Fatal("pruned again within retryPruneEvery")
	}
	clock = clock.Add(2 * time.Minute)
	prune()
	if kept("OLD") || !kept("RECENT") {
		t.Fatal("the prune after retryPruneEvery did not remove only the old message")
	}
	var _ store.EventBuffer = prunedRetries{}
}

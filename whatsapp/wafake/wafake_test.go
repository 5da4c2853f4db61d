package wafake_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"
	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/store/sqlstore"
	waLog "go.mau.fi/whatsmeow/util/log"

	"github.com/wagraph/wagraph/whatsapp/wafake"
)

func startNetwork(t *testing.T) *wafake.Network {
	t.Helper()
	n, err := wafake.New(wafake.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

// newDevice returns a fresh device store in its own SQLite file (WAL, busy
// timeout: many clients write at once in the larger tests).
func newDevice(t *testing.T) *store.Device {
	t.Helper()
	ctx := context.Background()
	dsn := "file:" + filepath.Join(t.TempDir(), "wm.db") + "?_foreign_keys=on&_journal_mode=WAL&_busy_timeout=10000&_txlock=immediate"
	c, err := sqlstore.New(ctx, "sqlite3", dsn, waLog.Noop)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c.NewDevice()
}

func TestHandshakeOffersQRCodes(t *testing.T) {
	n := startNetwork(t)
	cli := whatsmeow.NewClient(newDevice(t), waLog.Noop)
	n.Point(cli)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	qr, err := cli.GetQRChannel(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := cli.Connect(); err != nil {
		t.Fatal(err)
	}
	defer cli.Disconnect()
	select {
	case item := <-qr:
		if item.Event != "code" {
			t.Fatalf("qr event %q (%v), want code", item.Event, item.Error)
		}
		parts := strings.Split(item.Code, ",")
		if len(parts) != 4 || !strings.HasPrefix(parts[0], "2@") {
			t.Fatalf("qr code %q is not ref,noise,identity,secret", item.Code)
		}
	case <-ctx.Done():
		t.Fatal("no QR code within 10 s")
	}
}

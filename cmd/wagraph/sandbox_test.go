package main

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"
	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/store/sqlstore"
	waLog "go.mau.fi/whatsmeow/util/log"

	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// TestSandboxNetworkProcess: `wagraph sandbox-network` listens on loopback,
// publishes its address and root key, and a whatsmeow client that trusts
// that root reaches it (it offers QR codes); stopping it returns 0.
func TestSandboxNetworkProcess(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"sandbox-network", "--addr", "127.0.0.1:0", "--data-dir", dir}, noEnv, io.Discard, io.Discard)
	}()
	defer func() {
		cancel()
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("sandbox-network exited %d", code)
			}
		case <-time.After(10 * time.Second):
			t.Error("sandbox-network did not stop")
		}
	}()

	var addr string
	var root [32]byte
	deadline := time.Now().Add(10 * time.Second)
	for {
		var err error
		if addr, root, err = wafake.ReadRootFile(filepath.Join(dir, RootFileName)); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no root file: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("listens on %s", addr)
	}
	if err := wafake.TrustRoot(root); err != nil {
		t.Fatal(err)
	}
	c, err := sqlstore.New(context.Background(), "sqlite3", "file:"+filepath.Join(dir, "wm.db")+"?_foreign_keys=on", waLog.Noop)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cli := whatsmeow.NewClient(c.NewDevice(), waLog.Noop)
	wafake.PointAt(cli, addr)
	qctx, qcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer qcancel()
	qr, err := cli.GetQRChannel(qctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := cli.Connect(); err != nil {
		t.Fatal(err)
	}
	defer cli.Disconnect()
	if item := <-qr; item.Event != "code" {
		t.Fatalf("qr event %q, want a code from the separate network", item.Event)
	}
}

func TestSandboxNetworkLoopbackOnly(t *testing.T) {
	var stderr strings.Builder
	code := run(context.Background(), []string{"sandbox-network", "--addr", "0.0.0.0:7780", "--data-dir", t.TempDir()}, noEnv, io.Discard, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "loopback") {
		t.Fatalf("exit %d, stderr %q; want 2 naming loopback", code, stderr.String())
	}
}

func noEnv(string) (string, bool) { return "", false }

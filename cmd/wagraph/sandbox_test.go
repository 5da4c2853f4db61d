package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"
	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/store/sqlstore"
	"go.mau.fi/whatsmeow/types/events"
	waLog "go.mau.fi/whatsmeow/util/log"

	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/storage"
	"github.com/wagraph/wagraph/whatsapp"
	"github.com/wagraph/wagraph/whatsapp/sandbox"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// controlEnv hands the control address to the child process in which
// TestSandboxNetworkProcess plays the server.
const controlEnv = "WAGRAPH_TEST_SANDBOX_CONTROL"

// TestSandboxNetworkProcess: `wagraph sandbox-network` listens on loopback
// and publishes its addresses and root key; a server — a child process, as
// in real use: a process trusts one root for good, and every network makes
// its own — Dials the control address, links a real whatsmeow client
// through it and drives it. Stopping the network returns 0.
func TestSandboxNetworkProcess(t *testing.T) {
	if addr := os.Getenv(controlEnv); addr != "" {
		serverSide(t, addr)
		return
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"sandbox-network", "--addr", "127.0.0.1:0", "--control-addr", "127.0.0.1:0", "--data-dir", dir}, noEnv, io.Discard, io.Discard)
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

	path := filepath.Join(dir, sandbox.RootFileName)
	var rf struct {
		Addr        string `json:"addr"`
		ControlAddr string `json:"controlAddr"`
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(path)
		if err == nil {
			if err := json.Unmarshal(b, &rf); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no root file: %v", err)
		}
	}
	addr, _, err := wafake.ReadRootFile(path)
	if err != nil || addr != rf.Addr {
		t.Fatalf("wafake reads the root file as %q, %v; want %s", addr, err, rf.Addr)
	}
	if !strings.HasPrefix(rf.Addr, "127.0.0.1:") || !strings.HasPrefix(rf.ControlAddr, "127.0.0.1:") || rf.Addr == rf.ControlAddr {
		t.Fatalf("listens on %s, control on %s", rf.Addr, rf.ControlAddr)
	}

	cctx, ccancel := context.WithTimeout(ctx, 60*time.Second)
	defer ccancel()
	child := exec.CommandContext(cctx, os.Args[0], "-test.run=^TestSandboxNetworkProcess$", "-test.count=1", "-test.v")
	child.Env = append(os.Environ(), controlEnv+"="+rf.ControlAddr)
	out, err := child.CombinedOutput()
	if err != nil {
		t.Fatalf("the server process failed (%v):\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: TestSandboxNetworkProcess") {
		t.Fatalf("the server process did not run the test:\n%s", out)
	}
}

// serverSide is the server process: it reaches the network through its
// control address only.
func serverSide(t *testing.T, controlAddr string) {
	ctx := context.Background()
	r, err := sandbox.Dial(ctx, controlAddr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// The client's device store is on the test run's database
	// (internal/dbtest), as a server's would be.
	var c *sqlstore.Container
	if url := dbtest.DatabaseURL(t); url != "" {
		c, err = whatsapp.OpenPostgresStore(ctx, storage.PostgresDriver, url, storage.PostgresWhere(url), nil)
	} else {
		c, err = sqlstore.New(ctx, "sqlite3", "file:"+filepath.Join(t.TempDir(), "wm.db")+"?_foreign_keys=on", waLog.Noop)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cli := whatsmeow.NewClient(c.NewDevice(), waLog.Noop)
	r.Point(cli)
	evts := make(chan any, 64)
	cli.AddEventHandler(func(evt any) {
		switch e := evt.(type) {
		case *events.Connected:
			evts <- evt
		case *events.Message:
			// The phone shares its app state keys after linking, as a
			// message of the account's own: not the contact's.
			if !e.Info.IsFromMe {
				evts <- evt
			}
		}
	})
	qctx, qcancel := context.WithCancel(ctx)
	defer qcancel()
	qr, err := cli.GetQRChannel(qctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := cli.Connect(); err != nil {
		t.Fatal(err)
	}
	item := <-qr
	if item.Event != "code" {
		t.Fatalf("qr event %q, want a code from the separate network", item.Event)
	}
	const me, contact = "491701234567", "4915112345678"
	if _, err := sandbox.Do(ctx, r, sandbox.LinkDevice{QRCode: item.Code, Phone: me}); err != nil {
		t.Fatal(err)
	}
	waitEvent[*events.Connected](t, evts)
	sent, err := sandbox.Do(ctx, r, sandbox.SendText{From: contact, To: me + "@s.whatsapp.net", Text: "over the control port"})
	if err != nil {
		t.Fatal(err)
	}
	id := sent.ID
	if m := waitEvent[*events.Message](t, evts); m.Info.ID != id || m.Message.GetConversation() != "over the control port" {
		t.Errorf("client got %s %q, want %s", m.Info.ID, m.Message.GetConversation(), id)
	}
	if a, err := sandbox.Do(ctx, r, sandbox.Account{Phone: me}); err != nil || a == nil || len(a.LinkedDevices) != 1 || a.LinkedDevices[0] != cli.Store.ID.String() {
		t.Errorf("account %+v, %v; want the linked client", a, err)
	}
	// The same faults as in-process.
	if _, err := sandbox.Do(ctx, r, sandbox.Receipt{From: contact, To: me + "@s.whatsapp.net", MessageID: id, Type: "seen"}); fault.From(err) == nil || fault.From(err).Field != "type" {
		t.Errorf("receipt of an unknown type: %v, want a fault of the field type", err)
	}
	// The client is not disconnected: the network's stop closes its
	// socket, and the process ends. (A Disconnect could race whatsmeow's
	// own acks still in flight inside its frame socket.)
}

func waitEvent[T any](t *testing.T, ch <-chan any) T {
	t.Helper()
	timeout := time.After(15 * time.Second)
	for {
		select {
		case evt := <-ch:
			if e, ok := evt.(T); ok {
				return e
			}
		case <-timeout:
			var zero T
			t.Fatalf("no %T within 15 s", zero)
			return zero
		}
	}
}

func TestSandboxNetworkLoopbackOnly(t *testing.T) {
	for _, args := range [][]string{
		{"--addr", "0.0.0.0:7780"},
		{"--addr", "127.0.0.1:0", "--control-addr", "0.0.0.0:7781"},
	} {
		var stderr strings.Builder
		code := run(context.Background(), append([]string{"sandbox-network", "--data-dir", t.TempDir()}, args...), noEnv, io.Discard, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), "loopback") {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming loopback", args, code, stderr.String())
		}
	}
}

func noEnv(string) (string, bool) { return "", false }

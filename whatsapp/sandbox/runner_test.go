package sandbox_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"

	"github.com/wagraph/wagraph/whatsapp/sandbox"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

type published struct {
	Addr        string `json:"addr"`
	RootKey     string `json:"rootPublicKey"`
	ControlAddr string `json:"controlAddr"`
}

// runNetwork runs sandbox.RunNetwork until the returned stop is called,
// once it has published its root file.
func runNetwork(t *testing.T, opts sandbox.NetworkOptions) (published, func()) {
	t.Helper()
	path := filepath.Join(opts.DataDir, sandbox.RootFileName)
	os.Remove(path)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sandbox.RunNetwork(ctx, opts) }()
	stop := func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("RunNetwork: %v", err)
		}
	}
	var p published
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &p) == nil {
			return p, stop
		}
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("no %s within 10 s", path)
		}
	}
}

// TestRunNetworkKeepsState: `wagraph sandbox-network` with a state
// directory comes back after a restart with the same root (a server that
// trusts it still does) and the same world (here: the minimum client
// version it was told); without one, each start is a new network.
func TestRunNetworkKeepsState(t *testing.T) {
	data, state := t.TempDir(), t.TempDir()
	opts := sandbox.NetworkOptions{Addr: "127.0.0.1:0", ControlAddr: "127.0.0.1:0", DataDir: data, StateDir: state}
	const minimum = "2.3000.2000000003"

	first, stop := runNetwork(t, opts)
	res, err := http.Post("http://"+first.ControlAddr+"/v1/require-client-version", "application/json",
		strings.NewReader(`{"minimum":"`+minimum+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("require-client-version: %s", res.Status)
	}
	stop()

	second, stop := runNetwork(t, opts)
	if second.RootKey != first.RootKey {
		t.Errorf("root after a restart %s, want the kept %s", second.RootKey, first.RootKey)
	}
	if v, err := whatsmeow.GetLatestVersion(t.Context(), wafake.ClientFor(second.Addr)); err != nil || v.String() != minimum {
		t.Errorf("the restarted network advertises %s (%v), want the kept minimum %s", v, err, minimum)
	}
	stop()

	opts.StateDir = ""
	third, stop := runNetwork(t, opts)
	defer stop()
	if third.RootKey == first.RootKey {
		t.Error("a network without a state directory kept the root")
	}
	if v, err := whatsmeow.GetLatestVersion(t.Context(), wafake.ClientFor(third.Addr)); err != nil || v.String() == minimum {
		t.Errorf("a network without a state directory advertises %s (%v), want its default", v, err)
	}
}

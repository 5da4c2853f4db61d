package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/internal/logtest"
	"github.com/wagraph/wagraph/whatsapp/sandbox"
)

// TestSecondServeOnADataDirExits: with a `wagraph serve` running on
// ./data-sandbox, a second one on the same directory (another port) exits
// within 2 s with status 1 and exactly the one line naming the directory
// as given and the first one's pid (after wagraph:, as every error); the first keeps serving. Once the first
// is killed (SIGKILL: no cleanup of its own), the directory is free again.
func TestSecondServeOnADataDirExits(t *testing.T) {
	bin := wagraphBinary(t)
	work := t.TempDir()
	args := []string{"serve", "--sandbox", "--addr", "127.0.0.1:0", "--data-dir", "./data-sandbox"}
	if url := dbtest.DatabaseURL(t); url != "" {
		args = append(args, "--database-url", url)
	}
	first := startProc(t, bin, work, args...)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	second := exec.CommandContext(ctx, bin, args...)
	second.Dir = work
	var stdout, stderr bytes.Buffer
	second.Stdout, second.Stderr = &stdout, &stderr
	start := time.Now()
	err := second.Run()
	took := time.Since(start)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("second serve: %v, want exit status 1; stderr:\n%s", err, stderr.String())
	}
	if took > 2*time.Second {
		t.Errorf("second serve took %s to exit, want at most 2 s", took)
	}
	want := fmt.Sprintf("wagraph: data directory ./data-sandbox is in use by another wagraph (pid %d)\n", first.cmd.Process.Pid)
	if stderr.String() != want || stdout.Len() != 0 {
		t.Errorf("second serve wrote stderr %q, stdout %q; want stderr exactly %q", stderr.String(), stdout.String(), want)
	}

	client := &http.Client{Timeout: 10 * time.Second}
	for _, path := range []string{"/healthz", "/readyz"} {
		if code := waitStatus(t, client, "http://"+first.addr+path, http.StatusOK); code != http.StatusOK {
			t.Errorf("the first server's %s: %d after the second's attempt, want 200", path, code)
		}
	}
	if lines := first.stderr.String(); strings.Contains(lines, "level=ERROR") {
		t.Errorf("the first server logged an error:\n%s", lines)
	}

	first.kill(t)
	third := startProc(t, bin, work, args...)
	if code := waitStatus(t, client, "http://"+third.addr+"/healthz", http.StatusOK); code != http.StatusOK {
		t.Errorf("a server started after the first was killed: /healthz %d", code)
	}
	if b, err := os.ReadFile(filepath.Join(work, "data-sandbox", "wagraph.lock")); err != nil || strings.TrimSpace(string(b)) != fmt.Sprint(third.cmd.Process.Pid) {
		t.Errorf("lock file holds %q (%v), want the running server's pid %d", b, err, third.cmd.Process.Pid)
	}
}

// waitStatus polls url for up to 30 s until it answers want, and returns
// the last status (0 when it never answered).
func waitStatus(t *testing.T, client *http.Client, url string, want int) int {
	t.Helper()
	code := 0
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		res, err := client.Get(url)
		if err != nil {
			continue
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if code = res.StatusCode; code == want {
			break
		}
	}
	return code
}

// TestDataDirLocks: what holds a data directory, in-process (the lock is
// one per open file, so two runs in one process exclude each other too);
// the second run's one line starts wagraph: as every other error does.
func TestDataDirLocks(t *testing.T) {
	t.Run("serve twice", func(t *testing.T) {
		dir := t.TempDir()
		startServer(t, nil, "--addr", "127.0.0.1:0", "--data-dir", dir)
		var stdout, stderr logtest.Buffer
		code := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dir}, noEnv, &stdout, &stderr)
		want := fmt.Sprintf("wagraph: data directory %s is in use by another wagraph (pid %d)\n", dir, os.Getpid())
		if code != 1 || stderr.String() != want {
			t.Errorf("second serve: %d %q, want 1 %q", code, stderr.String(), want)
		}
	})
	t.Run("sandbox-network twice, and a server beside it", func(t *testing.T) {
		dir := t.TempDir()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan int, 1)
		go func() {
			done <- run(ctx, []string{"sandbox-network", "--addr", "127.0.0.1:0", "--control-addr", "127.0.0.1:0", "--data-dir", dir}, noEnv, io.Discard, io.Discard)
		}()
		defer func() {
			cancel()
			<-done
		}()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat(filepath.Join(dir, sandbox.RootFileName)); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the first network wrote no root file")
			}
		}
		var stderr logtest.Buffer
		code := run(context.Background(), []string{"sandbox-network", "--addr", "127.0.0.1:0", "--control-addr", "127.0.0.1:0", "--data-dir", dir}, noEnv, io.Discard, &stderr)
		want := fmt.Sprintf("wagraph: data directory %s is in use by another wagraph sandbox-network (pid %d)\n", dir, os.Getpid())
		if code != 1 || stderr.String() != want {
			t.Errorf("second network: %d %q, want 1 %q", code, stderr.String(), want)
		}
		// A network and the server using it may share a directory (both
		// default to ./data): their files and locks differ.
		startServer(t, nil, "--addr", "127.0.0.1:0", "--data-dir", dir)
	})
}

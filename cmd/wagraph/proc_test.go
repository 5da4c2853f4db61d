package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/logtest"
)

// The wagraph binary of the tests that need real processes (one data
// directory, two processes; a child run as another user), built once per
// test run, with the race detector when the test has it: the packages are
// then the ones `go test -race` compiled already, and only the link is left.
var (
	binOnce sync.Once
	binPath string
	binErr  error
	binDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// wagraphBinary builds (once) and returns the wagraph command, in a
// directory every user may read and run from.
func wagraphBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "wagraph-bin-")
		if binErr != nil {
			return
		}
		if binErr = os.Chmod(binDir, 0o755); binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "wagraph")
		args := []string{"build", "-o", binPath}
		if raceBuild {
			args = append(args, "-race")
		}
		args = append(args, "github.com/wagraph/wagraph/cmd/wagraph")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		// `go test` puts its own go command first on PATH.
		if out, err := exec.CommandContext(ctx, "go", args...).CombinedOutput(); err != nil {
			binErr = &buildError{args: args, err: err, out: string(out)}
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

type buildError struct {
	args []string
	err  error
	out  string
}

func (e *buildError) Error() string {
	return "go " + strings.Join(e.args, " ") + ": " + e.err.Error() + "\n" + e.out
}

// proc is a wagraph child process.
type proc struct {
	cmd    *exec.Cmd
	stderr *logtest.Buffer
	done   chan struct{} // closed when it has exited
	addr   string        // its listening address, once known
}

// startProc starts bin with args in dir and, for serve, waits (up to 30 s)
// for its listening address. It is killed when the test ends.
func startProc(t *testing.T, bin, dir string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(bin, args...), stderr: &logtest.Buffer{}, done: make(chan struct{})}
	p.cmd.Dir = dir
	p.cmd.Stderr, p.cmd.Stdout = p.stderr, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	deadline := time.After(30 * time.Second)
	for {
		if m := listeningRE.FindStringSubmatch(p.stderr.String()); m != nil {
			p.addr = m[1]
			return p
		}
		select {
		case <-p.done:
			t.Fatalf("%v exited before listening:\n%s", args, p.stderr.String())
		case <-deadline:
			t.Fatalf("%v: not listening within 30 s:\n%s", args, p.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// kill ends the process at once (SIGKILL: nothing of it runs after) and
// waits for it.
func (p *proc) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
}

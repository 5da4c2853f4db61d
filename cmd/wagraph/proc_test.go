package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/logtest"
	"github.com/wagraph/wagraph/internal/testbin"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Remove()
	os.Exit(code)
}

// wagraphBinary is the wagraph command (internal/testbin: built once per
// test run, or by make test for every package), in a directory every user
// may read and run from.
func wagraphBinary(t *testing.T) string {
	t.Helper()
	bin, err := testbin.Wagraph()
	if err != nil {
		t.Fatal(err)
	}
	return bin
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
	p := launchProc(t, bin, dir, args...)
	if err := p.waitListening(); err != nil {
		t.Fatal(err)
	}
	return p
}

// launchProc starts bin with args in dir, without waiting for anything. It
// is killed when the test ends.
func launchProc(t *testing.T, bin, dir string, args ...string) *proc {
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
	return p
}

// waitListening waits (up to 30 s) for a serve's listening address,
// logged once it is ready to take requests.
func (p *proc) waitListening() error {
	deadline := time.After(30 * time.Second)
	for {
		if m := listeningRE.FindStringSubmatch(p.stderr.String()); m != nil {
			p.addr = m[1]
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%v exited before listening:\n%s", p.cmd.Args[1:], p.stderr.String())
		case <-deadline:
			return fmt.Errorf("%v: not listening within 30 s:\n%s", p.cmd.Args[1:], p.stderr.String())
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

// stop ends the process as an operator would (SIGTERM: it stops its
// sessions and closes its stores) and waits up to 30 s for it to exit.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("not stopped within 30 s of SIGTERM:\n%s", p.stderr.String())
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("exited %d after SIGTERM:\n%s", code, p.stderr.String())
	}
}

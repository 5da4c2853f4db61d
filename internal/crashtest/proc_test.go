//go:build unix

package crashtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/testbin"
)

// The child processes: wagraph built once per test run, each child in its
// own process group (so a kill reaches anything it started) with its output
// in a file of the test's temporary directory, printed when the test fails.

// buildWagraph is the wagraph command (internal/testbin: built once per
// test run, or by make test for every package).
func buildWagraph(t *testing.T) string {
	t.Helper()
	bin, err := testbin.Wagraph()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// children are the processes of one test and their logs.
type children struct {
	t   *testing.T
	bin string
	dir string // where the logs are

	mu   sync.Mutex
	logs []string // in start order
}

// newChildren builds wagraph and arranges for every child's log to be
// checked for data races and, when the test failed, printed (after the
// children have been killed: this cleanup is registered first, so it runs
// last).
func newChildren(t *testing.T) *children {
	t.Helper()
	if testing.Short() {
		t.Skip("a crash or cluster test (child processes): make test runs it, make test-short skips it")
	}
	dir := t.TempDir()
	cs := &children{t: t, bin: buildWagraph(t), dir: dir}
	t.Cleanup(cs.report)
	return cs
}

func (cs *children) report() {
	cs.mu.Lock()
	logs := append([]string(nil), cs.logs...)
	cs.mu.Unlock()
	for _, path := range logs {
		b, err := os.ReadFile(path)
		if err != nil {
			cs.t.Errorf("read %s: %v", path, err)
			continue
		}
		if bytes.Contains(b, []byte("WARNING: DATA RACE")) {
			cs.t.Errorf("%s: the race detector reported a data race in the child", filepath.Base(path))
		}
		if cs.t.Failed() {
			const most = 64 << 10
			if len(b) > most {
				b = append([]byte("…\n"), b[len(b)-most:]...)
			}
			cs.t.Logf("----- %s -----\n%s", filepath.Base(path), b)
		}
	}
}

// child is one wagraph process.
type child struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed once the process has been waited for
	err  error         // how it ended, once done
}

// start runs wagraph with args as the child name (its log: name.log). The
// child is killed when the test ends, if it still runs.
func (cs *children) start(name string, args ...string) *child {
	cs.t.Helper()
	return cs.startCommand(name, cs.bin, args...)
}

// plainBin is wagraph built without the race detector (testbin.Plain).
func (cs *children) plainBin() string {
	cs.t.Helper()
	bin, err := testbin.Plain()
	if err != nil {
		cs.t.Fatal(err)
	}
	return bin
}

// startPlain is start with wagraph built without the race detector: for the
// storage experiments, whose recovery goal is a figure of the product as it
// runs (storagefail_test.go says why).
func (cs *children) startPlain(name string, args ...string) *child {
	cs.t.Helper()
	return cs.startCommand(name, cs.plainBin(), args...)
}

// startNetwork runs the simulated network (`wagraph sandbox-network`) on a
// data directory of its own as the child "network", and returns its control
// address once it serves (the servers' --sandbox-network). It is the servers' surroundings, not
// what these tests test: a wagraph built without the race detector
// (testbin.Plain) runs it, so that the phones' encryption of a burst does
// not take the detector's time (the network's own races are its
// package's tests' subject, under the detector).
func (cs *children) startNetwork() (control string) {
	cs.t.Helper()
	dataDir := cs.t.TempDir()
	network := cs.startCommand("network", cs.plainBin(), "sandbox-network", "--addr", "127.0.0.1:0", "--control-addr", "127.0.0.1:0", "--data-dir", dataDir)
	return network.controlAddr(cs.t, dataDir)
}

// startCommand is start for a command that runs wagraph itself in the end
// (unshare … wagraph serve): the wrapper must exec it, so the child's pid,
// process group and log are wagraph's.
func (cs *children) startCommand(name, command string, args ...string) *child {
	t := cs.t
	t.Helper()
	path := filepath.Join(cs.dir, name+".log")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close() // the child has its own descriptor
	cmd := exec.Command(command, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = childEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	cs.mu.Lock()
	cs.logs = append(cs.logs, path)
	cs.mu.Unlock()
	c := &child{name: name, cmd: cmd, log: path, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() { c.kill(t) })
	return c
}

// childEnv is this process's environment without wagraph's settings: a
// child is configured by its flags alone.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "WAGRAPH_") {
			env = append(env, kv)
		}
	}
	return env
}

// kill ends the child's process group with SIGKILL, as a crash or the OOM
// killer would, and waits for the child (10 s at most).
func (c *child) kill(t *testing.T) {
	t.Helper()
	select {
	case <-c.done:
		return
	default:
	}
	if err := syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		t.Errorf("kill %s: %v", c.name, err)
	}
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		t.Errorf("%s did not end within 10 s of SIGKILL", c.name)
	}
}

// exited reports whether the child has ended, and how.
func (c *child) exited() (bool, error) {
	select {
	case <-c.done:
		return true, c.err
	default:
		return false, nil
	}
}

// waitFor polls cond every 20 ms until it holds, the child ends (a
// failure: nothing it was waited for can come any more) or limit passes.
func (c *child) waitFor(t *testing.T, what string, limit time.Duration, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(limit)
	var last error
	for {
		ok, err := cond()
		if ok {
			return
		}
		last = err
		if done, how := c.exited(); done {
			t.Fatalf("%s: %s ended (%v) before that", what, c.name, how)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s (last: %v)", what, limit, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// listenAddr waits until the server has logged where it listens
// (--log-format json) and returns the address.
func (c *child) listenAddr(t *testing.T) string {
	t.Helper()
	var addr string
	c.waitFor(t, c.name+" listening", time.Minute, func() (bool, error) {
		f, err := os.Open(c.log)
		if err != nil {
			return false, err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			var rec struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Msg == "wagraph listening" && rec.Addr != "" {
				addr = rec.Addr
				return true, nil
			}
		}
		return false, sc.Err()
	})
	return addr
}

// controlAddr waits for the root file a sandbox network writes into its
// data directory once it serves, and returns its control address.
func (c *child) controlAddr(t *testing.T, dataDir string) string {
	t.Helper()
	var addr string
	c.waitFor(t, c.name+" root file", time.Minute, func() (bool, error) {
		b, err := os.ReadFile(filepath.Join(dataDir, "sandbox-network.json"))
		if err != nil {
			return false, err
		}
		var rf struct{ ControlAddr string }
		if err := json.Unmarshal(b, &rf); err != nil || rf.ControlAddr == "" {
			return false, fmt.Errorf("root file %s: %v", b, err)
		}
		addr = rf.ControlAddr
		return true, nil
	})
	return addr
}

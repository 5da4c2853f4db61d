package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/dbtest"
)

// TestAdminTokenRotation: a changed WAGRAPH_ADMIN_TOKEN revokes the admin
// token of its previous value, and says so; an unset one leaves it.
func TestAdminTokenRotation(t *testing.T) {
	const (
		oldToken = "old-admin-token-0123456789abcdefghijklmn"
		newToken = "new-admin-token-0123456789abcdefghijklmn"
	)
	args := append([]string{"--addr", "127.0.0.1:0"}, storeArgs(t)...)
	viewer := `{"query":"{ viewer { user { name } } }"}`

	s := startServer(t, map[string]string{"WAGRAPH_ADMIN_TOKEN": oldToken}, args...)
	if code, body := s.call(t, oldToken, "POST", "/graphql", viewer); code != http.StatusOK || body["errors"] != nil {
		t.Fatalf("the first token: %d %v", code, body)
	}
	s.stop(t)

	s = startServer(t, map[string]string{"WAGRAPH_ADMIN_TOKEN": newToken}, args...)
	if code, body := s.call(t, oldToken, "GET", "/api/v1/session", ""); code != http.StatusUnauthorized {
		t.Errorf("the previous admin token after rotation: %d %v; want 401", code, body)
	}
	if code, body := s.call(t, newToken, "POST", "/graphql", viewer); code != http.StatusOK || body["errors"] != nil {
		t.Errorf("the new token: %d %v", code, body)
	}
	if out := s.stderr.String(); !strings.Contains(out, "WAGRAPH_ADMIN_TOKEN changed") || strings.Contains(out, oldToken) || strings.Contains(out, newToken) {
		t.Errorf("log does not say the old token was revoked, or names a token:\n%s", out)
	}
	s.stop(t)

	// Unset: the token of the last value stays, nothing is revoked.
	s = startServer(t, map[string]string{}, args...)
	if code, body := s.call(t, newToken, "GET", "/api/v1/session", ""); code != http.StatusOK {
		t.Errorf("the admin token once the setting is unset: %d %v; want 200", code, body)
	}
	// Setting the old value again brings it back and ends the newer one.
	s.stop(t)
	s = startServer(t, map[string]string{"WAGRAPH_ADMIN_TOKEN": oldToken}, args...)
	if code, _ := s.call(t, oldToken, "GET", "/api/v1/session", ""); code != http.StatusOK {
		t.Errorf("the reinstated token: %d; want 200", code)
	}
	if code, _ := s.call(t, newToken, "GET", "/api/v1/session", ""); code != http.StatusUnauthorized {
		t.Errorf("the replaced token: %d; want 401", code)
	}
}

// The child server's data directory, and on the PostgreSQL pass of `make
// test` its database (internal/dbtest): the parent makes both.
const (
	childEnv   = "WAGRAPH_TEST_SERVE_CHILD"
	childDBEnv = "WAGRAPH_TEST_SERVE_CHILD_DATABASE"
)

// TestServeChild is the server of TestUnauthenticatedBodiesCostNoMemory, run
// in a process of its own so its memory can be measured alone. It does
// nothing unless that test started it.
func TestServeChild(t *testing.T) {
	dir := os.Getenv(childEnv)
	if dir == "" {
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	// SIGUSR1 hands the free heap back to the system, so that the next
	// measurement starts from what is live (memoryChild.settle).
	settle := make(chan os.Signal, 1)
	signal.Notify(settle, syscall.SIGUSR1)
	defer signal.Stop(settle)
	go func() {
		for range settle {
			debug.FreeOSMemory()
			fmt.Fprintln(os.Stderr, childSettled)
		}
	}()
	args := []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dir}
	if url := os.Getenv(childDBEnv); url != "" {
		args = append(args, "--database-url", url)
	}
	if code := run(ctx, args,
		envOf(map[string]string{"WAGRAPH_ADMIN_TOKEN": childToken}), io.Discard, os.Stderr); code != 0 {
		t.Fatalf("serve exited %d", code)
	}
}

const childToken = "child-admin-token-0123456789abcdefghijkl"

// childSettled is the line the child writes once its free heap is handed
// back.
const childSettled = "wagraph test child: free memory returned"

// TestUnauthenticatedBodiesCostNoMemory: 16 parallel 60 MiB POSTs without a
// token (to both APIs) are answered before their bodies are read; the
// server's peak memory grows by less than 32 MiB.
func TestUnauthenticatedBodiesCostNoMemory(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		return
	}
	child := startMemoryChild(t)
	addr := child.addr
	client := &http.Client{Timeout: 30 * time.Second}
	// Warm up what a normal request uses, then take the baseline.
	for range 5 {
		req, _ := http.NewRequest("POST", "http://"+addr+"/graphql", strings.NewReader(`{"query":"{ viewer { user { id } } }"}`))
		req.Header.Set("Authorization", childToken)
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	before := memoryKiB(t, child.pid, "VmRSS")

	const size = 60 << 20
	var wg sync.WaitGroup
	statuses := make(chan string, 16)
	for i := range 16 {
		path := []string{"/graphql", "/api/v1/session"}[i%2]
		wg.Go(func() { statuses <- postHuge(addr, path, size) })
	}
	wg.Wait()
	close(statuses)
	for s := range statuses {
		if s != "401" {
			t.Errorf("a 60 MiB POST without a token: %s; want 401 before the body", s)
		}
	}
	peak := memoryKiB(t, child.pid, "VmHWM")
	t.Logf("RSS before %d KiB, peak after %d KiB", before, peak)
	if grew := peak - before; grew >= 32<<10 {
		t.Errorf("peak RSS grew by %d KiB; want under 32 MiB", grew)
	}
}

// memoryChild is a wagraph server in a process of its own (TestServeChild),
// whose memory a test measures alone.
type memoryChild struct {
	addr    string
	pid     int
	settled chan struct{} // a childSettled line was written
}

// settle has the child collect its garbage and hand its free heap back,
// and returns its resident set then, in KiB, with its peak (VmHWM) reset
// to it: what a request takes next shows as growth, not as reuse of what
// the one before left free.
func (c memoryChild) settle(t *testing.T) int {
	t.Helper()
	if err := syscall.Kill(c.pid, syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.settled:
	case <-time.After(30 * time.Second):
		t.Fatal("the server process did not return its free memory")
	}
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", c.pid), []byte("5"), 0); err != nil {
		t.Fatalf("reset the peak resident set: %v", err)
	}
	return memoryKiB(t, c.pid, "VmRSS")
}

// startMemoryChild starts TestServeChild in a child process on the run's
// backend and waits until it listens; it is stopped when the test ends.
func startMemoryChild(t *testing.T) memoryChild {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	child := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestServeChild$", "-test.count=1")
	child.Env = append(os.Environ(), childEnv+"="+t.TempDir(), childDBEnv+"="+dbtest.DatabaseURL(t))
	stderr, err := child.StderrPipe()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = child.Process.Signal(syscall.SIGTERM)
		_ = child.Wait()
		cancel()
	})
	addrc, settled := make(chan string, 1), make(chan struct{}, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil {
				addrc <- m[1]
			}
			if sc.Text() == childSettled {
				settled <- struct{}{}
			}
		}
	}()
	select {
	case addr := <-addrc:
		return memoryChild{addr: addr, pid: child.Process.Pid, settled: settled}
	case <-time.After(30 * time.Second):
		t.Fatal("the server process did not start")
		return memoryChild{}
	}
}

// postHuge announces a body of size bytes without a token and sends it as
// fast as the server takes it, stopping at the answer. It returns the
// status, or what went wrong.
func postHuge(addr, path string, size int) string {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err.Error()
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", path, size)
	go func() { // the body, until the server stops taking it
		chunk := make([]byte, 64<<10)
		for sent := 0; sent < size; sent += len(chunk) {
			if _, err := conn.Write(chunk); err != nil {
				return
			}
		}
	}()
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return "no answer: " + err.Error()
	}
	res.Body.Close()
	return strconv.Itoa(res.StatusCode)
}

// memoryKiB reads a memory figure of a process from /proc.
func memoryKiB(t *testing.T, pid int, field string) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				t.Fatalf("%s: %q", field, line)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

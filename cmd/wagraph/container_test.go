package main

import (
	"context"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/internal/logtest"
	"github.com/wagraph/wagraph/internal/testclient"
)

// TestHealthcheckAsksWhereTheServerListens: `wagraph healthcheck`, with
// the address setting the server was started with (WAGRAPH_ADDR, as the
// image sets it), passes against a ready server bound to the machine's own
// address, to another loopback address and to every address, where the
// image's former `curl http://127.0.0.1:PORT/readyz` was refused for the
// first two; and fails once the server is gone.
func TestHealthcheckAsksWhereTheServerListens(t *testing.T) {
	cases := []struct {
		name, host string
		loopback   bool // 127.0.0.1:PORT reaches the server too
	}{
		{"the machine's own address", testclient.MachineAddress(t), false},
		{"another loopback address", "127.0.0.2", false},
		{"every address", "0.0.0.0", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := startServer(t, map[string]string{"WAGRAPH_ADMIN_TOKEN": strings.Repeat("h", 32)},
				append([]string{"--addr", net.JoinHostPort(c.host, "0")}, storeArgs(t)...)...)
			_, port, err := net.SplitHostPort(srv.addr)
			if err != nil {
				t.Fatal(err)
			}
			listen := net.JoinHostPort(c.host, port)
			if conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", port), time.Second); err == nil {
				conn.Close()
				if !c.loopback {
					t.Fatalf("127.0.0.1:%s reaches the server bound to %s: the case shows nothing", port, listen)
				}
			} else if c.loopback {
				t.Fatalf("127.0.0.1:%s does not reach the server listening on every address: %v", port, err)
			}

			env := envOf(map[string]string{"WAGRAPH_ADDR": listen})
			check := func() (int, string, string) {
				var stdout, stderr logtest.Buffer
				code := run(context.Background(), []string{"healthcheck"}, env, &stdout, &stderr)
				return code, stdout.String(), stderr.String()
			}
			deadline := time.Now().Add(20 * time.Second)
			code, stdout, stderr := check()
			for code != 0 && time.Now().Before(deadline) {
				time.Sleep(100 * time.Millisecond)
				code, stdout, stderr = check()
			}
			if code != 0 || !strings.Contains(stdout, `"status":"ready"`) {
				t.Fatalf("healthcheck with WAGRAPH_ADDR=%s: exit %d, stdout %q, stderr %q", listen, code, stdout, stderr)
			}

			if code := srv.stop(t); code != 0 {
				t.Fatalf("the server exited %d", code)
			}
			code, stdout, stderr = check()
			if code != 1 || !strings.Contains(stderr, "wagraph healthcheck: ") || !strings.Contains(stderr, "/readyz") {
				t.Errorf("healthcheck with the server gone: exit %d, stdout %q, stderr %q; want 1 and why", code, stdout, stderr)
			}
		})
	}
}

// TestHealthcheckDialAddr: where the health check connects for each
// listen address, and the one it cannot know.
func TestHealthcheckDialAddr(t *testing.T) {
	for _, c := range []struct{ listen, want, err string }{
		{"10.0.0.5:8080", "10.0.0.5:8080", ""},
		{"0.0.0.0:8080", "127.0.0.1:8080", ""},
		{":8080", "127.0.0.1:8080", ""},
		{"[::]:8080", "[::1]:8080", ""},
		{"[fd00::2]:9000", "[fd00::2]:9000", ""},
		{"wagraph.internal:8080", "wagraph.internal:8080", ""},
		{"127.0.0.1:0", "", "port 0 is chosen by the system"},
		{"8080", "", `--addr "8080"`},
	} {
		got, err := dialAddr(c.listen)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("dialAddr(%q) = %q, %v; want an error saying %q", c.listen, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("dialAddr(%q) = %q, %v; want %q", c.listen, got, err, c.want)
		}
	}
}

// TestServeSaysTheSandboxIsNotKept: a sandbox whose data directory will
// not outlive the run (here memory, /dev/shm: the mount table says which,
// as it says an anonymous volume of `docker run --rm` in a container, see
// internal/datadir) says at start that its simulated network is lost with
// it, and how to keep it.
func TestServeSaysTheSandboxIsNotKept(t *testing.T) {
	dir, err := os.MkdirTemp("/dev/shm", "wagraph-serve-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	args := []string{"--sandbox", "--addr", "127.0.0.1:0", "--data-dir", dir}
	if url := dbtest.DatabaseURL(t); url != "" {
		args = append(args, "--database-url", url)
	}
	srv := startServer(t, map[string]string{"WAGRAPH_ADMIN_TOKEN": strings.Repeat("s", 32)}, args...)
	var warning string
	for _, line := range strings.Split(srv.stderr.String(), "\n") {
		if strings.Contains(line, "level=WARN") && strings.Contains(line, "data directory will not be kept") {
			warning = line
		}
	}
	for _, want := range []string{"data_dir=" + dir, "memory (tmpfs on /dev/shm)", "the simulated network", "link", "to_keep_it="} {
		if !strings.Contains(warning, want) {
			t.Errorf("the start's warning %q does not say %q; log:\n%s", warning, want, srv.stderr.String())
		}
	}
}

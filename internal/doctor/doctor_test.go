package doctor_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/datadir"
	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/internal/doctor"
	"github.com/wagraph/wagraph/internal/mediastore/s3test"
	"github.com/wagraph/wagraph/internal/natstest"
	"github.com/wagraph/wagraph/whatsapp/sandbox"
)

func noEnv(string) (string, bool) { return "", false }

func load(t *testing.T, args ...string) config.Config {
	t.Helper()
	cfg, err := config.Load(args, noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func ffmpegPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Fatal("ffmpeg is not installed: run make deps")
	}
	return p
}

// webPage is a client of the simulated network's WhatsApp Web page: the
// version lookup answered without the internet.
func webPage(t *testing.T) *http.Client {
	t.Helper()
	l, err := sandbox.NewLocal(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l.HTTPClient()
}

func byCheck(results []doctor.Result) map[string]doctor.Result {
	m := map[string]doctor.Result{}
	for _, r := range results {
		m[r.Check] = r
	}
	return m
}

// TestRunOnAGoodSetup: a migrated database on the run's backend, a
// writable data directory, a working ffmpeg, a reachable version page and
// a free address: every check is OK, and Write reports no failure.
func TestRunOnAGoodSetup(t *testing.T) {
	loc := dbtest.NewLocation(t)
	loc.Open(t) // creates the schema
	args := []string{"--data-dir", loc.DataDir, "--addr", "127.0.0.1:0", "--ffmpeg", ffmpegPath(t)}
	if loc.URL != "" {
		args = append(args, "--database-url", loc.URL)
	}
	results := doctor.Run(context.Background(), load(t, args...), doctor.Options{VersionClient: webPage(t)})
	if len(results) != 9 {
		t.Fatalf("%d results, want 9: %+v", len(results), results)
	}
	for _, r := range results {
		if r.Status != doctor.OK {
			t.Errorf("%s: %s %s; want OK", r.Check, r.Status, r.Message)
		}
	}
	if m := byCheck(results)["database"].Message; !strings.Contains(m, "schema reachable (0 users, 0 sessions)") {
		t.Errorf("database: %q, want the schema read", m)
	}
	if m := byCheck(results)["WhatsApp Web version"].Message; !strings.Contains(m, "read from WhatsApp Web") {
		t.Errorf("version lookup: %q", m)
	}
	var out bytes.Buffer
	if doctor.Write(&out, results) {
		t.Error("Write reports a failure")
	}
	if n := strings.Count(out.String(), "\n"); n != 9 || !strings.HasPrefix(out.String(), "OK    data directory ") {
		t.Errorf("Write printed:\n%s", out.String())
	}
}

// refusingTransport is a network that is down: every connection fails.
func refusingTransport() *http.Transport {
	return &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("network is unreachable")
	}}
}

// TestRunFindsProblems: each problem is reported by its check, with the
// cause and what to do.
func TestRunFindsProblems(t *testing.T) {
	tests := []struct {
		name   string
		setup  func(t *testing.T, dir string) []string // the flags beyond --data-dir dir
		client *http.Client
		check  string
		status doctor.Status
		want   []string // parts of the message
		absent []string // never in any message
	}{
		{name: "data directory under a file", check: "data directory", status: doctor.Fail,
			setup: func(t *testing.T, dir string) []string {
				file := filepath.Join(dir, "file")
				if err := os.WriteFile(file, nil, 0o600); err != nil {
					t.Fatal(err)
				}
				return []string{"--data-dir", filepath.Join(file, "data")}
			},
			want: []string{"not a directory", "choose another --data-dir"}},
		{name: "data directory held", check: "data directory lock", status: doctor.Warn,
			setup: func(t *testing.T, dir string) []string {
				l, err := datadir.Acquire(dir, datadir.ServerLock, "wagraph")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { l.Release() })
				return nil
			},
			want: []string{"in use by a running wagraph (pid " + strconv.Itoa(os.Getpid()) + ")", "stop that one or choose another --data-dir"}},
		// Issue 31: a data directory made beforehand 0755, and a device
		// store another version created 0644 under umask 022.
		{name: "a key store other users may read", check: "private files", status: doctor.Fail,
			setup: func(t *testing.T, dir string) []string {
				if err := os.Chmod(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				for name, mode := range map[string]os.FileMode{"whatsmeow.db": 0o644, "wagraph.db": 0o600} {
					if err := os.WriteFile(filepath.Join(dir, name), nil, mode); err != nil {
						t.Fatal(err)
					}
					if err := os.Chmod(filepath.Join(dir, name), mode); err != nil {
						t.Fatal(err)
					}
				}
				return nil
			},
			want:   []string{"whatsmeow.db (the WhatsApp device store: each linked device's keys) has mode 0644", "chmod go-rwx ", "whatsmeow.db"},
			absent: []string{"wagraph.db ("}},
		{name: "not a database", check: "database", status: doctor.Fail,
			setup: func(t *testing.T, dir string) []string {
				if err := os.WriteFile(filepath.Join(dir, "wagraph.db"), bytes.Repeat([]byte("not sqlite "), 100), 0o600); err != nil {
					t.Fatal(err)
				}
				return nil
			},
			want: []string{"wagraph.db", "not a database", "restore it from a backup"}},
		{name: "PostgreSQL unreachable", check: "database", status: doctor.Fail,
			setup: func(t *testing.T, dir string) []string {
				return []string{"--database-url", "postgres://wagraph:s3cr3t@127.0.0.1:1/wagraph"}
			},
			want: []string{"PostgreSQL 127.0.0.1:1/wagraph", "cannot connect", "check --database-url"}, absent: []string{"s3cr3t"}},
		{name: "listen address in use", check: "listen address", status: doctor.Fail,
			setup: func(t *testing.T, dir string) []string {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { ln.Close() })
				return []string{"--addr", ln.Addr().String()}
			},
			want: []string{"is in use by another process", "choose another --addr"}},
		{name: "ffmpeg that does not run", check: "ffmpeg", status: doctor.Fail,
			setup: func(t *testing.T, dir string) []string {
				p := filepath.Join(t.TempDir(), "ffmpeg")
				if err := os.WriteFile(p, []byte("#!/bin/sh\nexit 3\n"), 0o755); err != nil {
					t.Fatal(err)
				}
				return []string{"--ffmpeg", p}
			},
			want: []string{"does not run", "exit status 3", "point --ffmpeg at a working one"}},
		{name: "no ffmpeg", check: "ffmpeg", status: doctor.Warn,
			setup: func(t *testing.T, dir string) []string { return []string{"--ffmpeg", "none"} },
			want:  []string{"no converter", "install ffmpeg"}},
		{name: "NATS broker unreachable", check: "NATS stream", status: doctor.Fail,
			setup: func(t *testing.T, dir string) []string {
				return []string{"--nats-url", "nats://wagraph:natspw@" + closedAddr(t)}
			},
			want: []string{"cannot reach the NATS broker at nats://wagraph:xxxxx@127.0.0.1:", "no servers available", "is it running", "the events wait in the log"}, absent: []string{"natspw"}},
		{name: "media store that is not a directory", check: "media store", status: doctor.Fail,
			setup: func(t *testing.T, dir string) []string {
				if err := os.WriteFile(filepath.Join(dir, "media"), []byte("not a directory"), 0o600); err != nil {
					t.Fatal(err)
				}
				return nil
			},
			want: []string{"media store", "not a directory", "serve would not start"}},
		{name: "s3 store refusing the secret", check: "media store", status: doctor.Fail,
			setup: func(t *testing.T, dir string) []string {
				endpoint, bucket := s3test.Start(t)
				t.Setenv("AWS_SECRET_ACCESS_KEY", "s3-wrong-secret")
				return []string{"--media-store", "s3://" + bucket + "/media", "--media-s3-endpoint", endpoint}
			},
			want:   []string{"s3://wagraph-media/media", "refused the credentials", "AWS_SECRET_ACCESS_KEY", "received media is not kept"},
			absent: []string{"s3-wrong-secret"}},
		{name: "s3 store without credentials", check: "media store", status: doctor.Fail,
			setup: func(t *testing.T, dir string) []string {
				endpoint, bucket := s3test.Start(t)
				t.Setenv("AWS_ACCESS_KEY_ID", "")
				return []string{"--media-store", "s3://" + bucket, "--media-s3-endpoint", endpoint}
			},
			want: []string{"no S3 credentials", "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY", "serve would not start"}},
		{name: "version page unreachable", check: "WhatsApp Web version", status: doctor.Warn,
			client: &http.Client{Transport: refusingTransport()},
			want:   []string{"the lookup failed", "network is unreachable", "announcing the built-in 2.3000.", "pin --wa-version"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			args := []string{"--data-dir", dir, "--addr", "127.0.0.1:0"}
			if tt.setup != nil {
				args = append(args, tt.setup(t, dir)...)
			}
			client := tt.client
			if client == nil {
				client = &http.Client{Transport: refusingTransport()}
			}
			results := doctor.Run(context.Background(), load(t, args...), doctor.Options{VersionClient: client})
			r := byCheck(results)[tt.check]
			if r.Status != tt.status {
				t.Errorf("%s: %s %q, want %s", tt.check, r.Status, r.Message, tt.status)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.Message, w) {
					t.Errorf("%s: %q does not say %q", tt.check, r.Message, w)
				}
			}
			for _, other := range results {
				for _, a := range tt.absent {
					if strings.Contains(other.Message, a) {
						t.Errorf("%s: %q shows %q", other.Check, other.Message, a)
					}
				}
			}
			var out bytes.Buffer
			if failed := doctor.Write(&out, results); failed != (tt.status == doctor.Fail) {
				t.Errorf("Write reports failed=%v:\n%s", failed, out.String())
			}
		})
	}
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestNATSBroker: a real broker with JetStream is reached and its stream
// named (missing: serve creates it); a stream that does not capture
// wagraph.> is a failure naming it.
func TestNATSBroker(t *testing.T) {
	if testing.Short() {
		t.Skip("a NATS server as a child process: make test runs it, make test-short skips it")
	}
	srv := natstest.Start(t)
	nc, err := nats.Connect(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	if _, err := js.CreateStream(context.Background(), jetstream.StreamConfig{Name: "ELSEWHERE", Subjects: []string{"elsewhere.>"}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		stream string
		status doctor.Status
		want   string
	}{
		{"WAGRAPH", doctor.OK, `JetStream on; stream "WAGRAPH" does not exist yet: serve creates it with subjects wagraph.>`},
		{"ELSEWHERE", doctor.Fail, `stream "ELSEWHERE" exists with subjects [elsewhere.>], which do not cover wagraph.>`},
	} {
		cfg := load(t, "--data-dir", t.TempDir(), "--addr", "127.0.0.1:0", "--nats-url", srv.URL, "--nats-stream", tc.stream)
		r := byCheck(doctor.Run(context.Background(), cfg, doctor.Options{VersionClient: &http.Client{Transport: refusingTransport()}}))["NATS stream"]
		if r.Status != tc.status || !strings.Contains(r.Message, tc.want) {
			t.Errorf("stream %s: %s %q, want %s saying %q", tc.stream, r.Status, r.Message, tc.status, tc.want)
		}
	}
}

// TestMediaStore: doctor names the store it checked and says it takes
// files (leaving none behind), or that it was not looked at.
func TestMediaStore(t *testing.T) {
	endpoint, bucket := s3test.Start(t)
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "media"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"local", []string{"--data-dir", dir}, "local " + filepath.Join(dir, "media") + ": writable (a probe written, read back and deleted)"},
		{"local not made yet", []string{"--data-dir", t.TempDir()}, "/media does not exist yet: serve creates it"},
		{"s3", []string{"--data-dir", dir, "--media-store", "s3://" + bucket + "/kept", "--media-s3-endpoint", endpoint},
			"s3://" + bucket + "/kept at " + endpoint + ": writable"},
		{"none", []string{"--data-dir", dir, "--media-store", "none"}, "skipped: --media-store none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := load(t, append(tc.args, "--addr", "127.0.0.1:0")...)
			r := byCheck(doctor.Run(context.Background(), cfg, doctor.Options{VersionClient: &http.Client{Transport: refusingTransport()}}))["media store"]
			if r.Status != doctor.OK || !strings.Contains(r.Message, tc.want) {
				t.Errorf("%s %q, want OK saying %q", r.Status, r.Message, tc.want)
			}
		})
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "media")); len(entries) != 0 {
		t.Errorf("the probe left %v in the local store", entries)
	}
}

//go:build unix

package crashtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// pgServer is a PostgreSQL server of one test's own, which the test may
// stop and start: the server the other packages' tests share
// (WAGRAPH_TEST_POSTGRES) must never be stopped. It is set up as
// .ci/postgres.sh sets up that one: Debian's binaries, a cluster in a
// temporary directory owned by the postgres account when the test runs as
// root (PostgreSQL refuses to run as root), trust authentication on
// 127.0.0.1 and the socket in that directory only.
type pgServer struct {
	bindir string
	dir    string // the cluster's parent: data/, the socket, server.log
	owner  string // the account the server runs as; "" for this process's
	port   int
	URL    string // postgres://…/postgres of the server's maintenance database
}

// startPostgres initialises and starts a private server, stopped and
// removed when the test ends.
func startPostgres(t *testing.T) *pgServer {
	t.Helper()
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return pgVersion(a) - pgVersion(b) })
	if len(dirs) == 0 {
		t.Fatal("no PostgreSQL server under /usr/lib/postgresql/*/bin (build/deps.sh postgres installs it)")
	}
	// Not t.TempDir: its parent is private to root, and the postgres
	// account has to reach the cluster.
	dir, err := os.MkdirTemp("", "wagraph-crashtest-pg.")
	if err != nil {
		t.Fatal(err)
	}
	pg := &pgServer{bindir: dirs[len(dirs)-1], dir: dir}
	t.Cleanup(func() {
		_, _ = pg.ctl("-D", pg.data(), "-m", "immediate", "stop")
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("remove the private PostgreSQL server's directory: %v", err)
		}
	})
	if os.Geteuid() == 0 {
		pg.owner = "postgres"
		u, err := user.Lookup(pg.owner)
		if err != nil {
			t.Fatalf("the private PostgreSQL server runs as %s: %v", pg.owner, err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := pg.run("initdb", "-D", pg.data(), "-U", "wagraph", "-A", "trust", "-E", "UTF8", "--no-instructions"); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	// Loopback and the socket only; durability is not what is tested.
	conf := fmt.Sprintf("listen_addresses = '127.0.0.1'\nunix_socket_directories = '%s'\nmax_connections = 100\nfsync = off\nsynchronous_commit = off\nfull_page_writes = off\n", dir)
	if err := pg.appendFile("postgresql.conf", conf); err != nil {
		t.Fatal(err)
	}
	if err := pg.writeFile("pg_hba.conf", "local all all trust\nhost  all all 127.0.0.1/32 trust\n"); err != nil {
		t.Fatal(err)
	}
	// A port free now may be taken before the server binds it: another
	// one then.
	var last []byte
	for range 10 {
		pg.port = freePort(t)
		if last, err = pg.ctl("-D", pg.data(), "-l", filepath.Join(dir, "server.log"), "-w", "-t", "30", "-o", fmt.Sprintf("-p %d", pg.port), "start"); err == nil {
			pg.URL = fmt.Sprintf("postgres://wagraph@127.0.0.1:%d/postgres?sslmode=disable", pg.port)
			return pg
		}
	}
	log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
	t.Fatalf("the private PostgreSQL server did not start: %v\n%s\n%s", err, last, log)
	return nil
}

// stop stops the server as an operator would (fast: sessions ended,
// nothing waited for) and waits until it is down.
func (pg *pgServer) stop(t *testing.T) {
	t.Helper()
	if out, err := pg.ctl("-D", pg.data(), "-m", "fast", "-w", "-t", "30", "stop"); err != nil {
		t.Fatalf("pg_ctl stop: %v\n%s", err, out)
	}
}

// start starts the stopped server again on its port and waits until it
// takes connections.
func (pg *pgServer) start(t *testing.T) {
	t.Helper()
	out, err := pg.ctl("-D", pg.data(), "-l", filepath.Join(pg.dir, "server.log"), "-w", "-t", "30", "-o", fmt.Sprintf("-p %d", pg.port), "start")
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(pg.dir, "server.log"))
		t.Fatalf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
}

func (pg *pgServer) data() string { return filepath.Join(pg.dir, "data") }

func (pg *pgServer) ctl(args ...string) ([]byte, error) { return pg.run("pg_ctl", args...) }

// run runs one of the server's programs as its owner (a minute at most).
func (pg *pgServer) run(program string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	argv := append([]string{filepath.Join(pg.bindir, program)}, args...)
	if pg.owner != "" {
		argv = append([]string{"runuser", "-u", pg.owner, "--"}, argv...)
	}
	// pg_ctl start gives the server -l's file for its output: the pipe
	// of CombinedOutput closes when pg_ctl ends.
	return exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
}

// appendFile and writeFile edit a file of the cluster, which belongs to the
// server's owner (as root: written here, then given to the owner).
func (pg *pgServer) appendFile(name, text string) error {
	f, err := os.OpenFile(filepath.Join(pg.data(), name), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func (pg *pgServer) writeFile(name, text string) error {
	return os.WriteFile(filepath.Join(pg.data(), name), []byte(text), 0o600)
}

// pgVersion is the major version in a /usr/lib/postgresql/<v>/bin path.
func pgVersion(bindir string) int {
	v, _ := strconv.Atoi(strings.Split(strings.TrimPrefix(bindir, "/usr/lib/postgresql/"), "/")[0])
	return v
}

// freePort is a port on 127.0.0.1 that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

package app_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/app"
	"github.com/wagraph/wagraph/internal/apptest"
)

// TestProbesAndPlayground: /healthz and /readyz answer, / serves GraphiQL
// (from this server's own files, internal/webui) pointed at /graphql, and
// /ui/ the dashboard (/ui leads there).
func TestProbesAndPlayground(t *testing.T) {
	srv := apptest.Start(t, apptest.Config(t))
	for _, tt := range []struct{ path, want string }{
		{"/healthz", `{"status":"ok"}`},
		{"/readyz", `{"status":"ready"}`},
		{"/", `<script src="/graphiql/init.js">`},
		{"/graphiql/fetcher.js", `"/graphql"`},
		{"/ui/", `<script type="module" src="app.js">`},
		{"/ui", `<script type="module" src="app.js">`},
		{"/ui/gql.js", `"/graphql"`},
	} {
		res := srv.Do(t, "GET", tt.path, "", "", nil)
		if res.Status != 200 || !strings.Contains(string(res.Body), tt.want) {
			t.Errorf("GET %s: %d %s; want 200 containing %s", tt.path, res.Status, res.Body, tt.want)
		}
	}
	if err := srv.App.Close(); err != nil {
		t.Fatal(err)
	}
	if res := srv.Do(t, "GET", "/readyz", "", "", nil); res.Status != 503 {
		t.Errorf("readyz with the database closed: %d, want 503", res.Status)
	}
	if res := srv.Do(t, "GET", "/healthz", "", "", nil); res.Status != 200 {
		t.Errorf("healthz with the database closed: %d, want 200 (the process is up)", res.Status)
	}
}

// TestDataDirCreated: a missing data directory is created, private to its
// owner, with the database in WAL mode.
func TestDataDirCreated(t *testing.T) {
	cfg := apptest.Config(t)
	cfg.DatabaseURL = "" // SQLite's files are what this test is about, on either pass
	cfg.DataDir = filepath.Join(t.TempDir(), "nested", "data")
	a, err := app.New(context.Background(), cfg, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	fi, err := os.Stat(cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o700 {
		t.Errorf("data dir mode %o, want 700", perm)
	}
	if _, err := os.Stat(filepath.Join(cfg.DataDir, "wagraph.db-wal")); err != nil {
		t.Errorf("no write-ahead log beside the database: %v", err)
	}
}

// TestDatabaseURLUnreachable: a PostgreSQL server that does not answer
// stops the start with an error naming its host and database, never the
// URL's password.
func TestDatabaseURLUnreachable(t *testing.T) {
	cfg := apptest.Config(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	cfg.DatabaseURL = "postgres://u:hunter2secret@" + addr + "/wgdb?connect_timeout=5"
	_, err = app.New(context.Background(), cfg, app.Options{})
	if err == nil || !strings.Contains(err.Error(), "PostgreSQL "+addr+"/wgdb") || strings.Contains(err.Error(), "hunter2secret") {
		t.Fatalf("err = %v; want a failure naming PostgreSQL %s/wgdb without the password", err, addr)
	}
}

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/logtest"
)

// TestBackupCommand: `wagraph backup --to FILE` runs beside a server on the
// same SQLite data directory (it takes no lock), writes the file and prints
// what it copied; without --to, or on PostgreSQL, it says what to do; a
// backup that fails says why.
func TestBackupCommand(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, nil, "--addr", "127.0.0.1:0", "--data-dir", dir)
	to := filepath.Join(t.TempDir(), "wagraph-backup.tar.gz")

	var stdout, stderr logtest.Buffer
	if code := run(context.Background(), []string{"backup", "--data-dir", dir, "--to", to}, noEnv, &stdout, &stderr); code != 0 {
		t.Fatalf("backup exited %d; stderr:\n%s", code, stderr.String())
	}
	if fi, err := os.Stat(to); err != nil || fi.Size() == 0 {
		t.Errorf("backup file: %v %v", fi, err)
	}
	if !strings.Contains(stdout.String(), "wagraph.db") {
		t.Errorf("backup printed %q, want what it copied", stdout.String())
	}
	if code, _ := s.call(t, "", "GET", "/healthz", ""); code != 200 {
		t.Errorf("the server beside the backup: /healthz %d", code)
	}
	if strings.Contains(stdout.String(), "not in the backup") {
		t.Errorf("backup of a local store printed %q", stdout.String())
	}

	// Media kept in S3 is not copied: the backup says where it is.
	stdout = logtest.Buffer{}
	s3Env := func(k string) (string, bool) {
		if k == "WAGRAPH_MEDIA_STORE" {
			return "s3://wa-media/prod", true
		}
		return "", false
	}
	if code := run(context.Background(), []string{"backup", "--data-dir", dir, "--to", to + ".s3"}, s3Env, &stdout, &stderr); code != 0 {
		t.Fatalf("backup with an S3 store exited %d; stderr:\n%s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "wagraph.db") || !strings.Contains(stdout.String(), "kept media is in s3://wa-media/prod, not in the backup") {
		t.Errorf("backup with an S3 store printed %q", stdout.String())
	}

	// A backup that fails says why in one line, as the command's other
	// errors do, and exits 1: not a log record alone.
	empty := t.TempDir()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"backup", "--data-dir", empty, "--to", to + "3"}, "wagraph backup: no wagraph.db in " + empty + ": "},
		{[]string{"backup", "--data-dir", dir, "--to", to}, "wagraph backup: backup file " + to + ": "},
	} {
		var stdout, stderr logtest.Buffer
		code := run(context.Background(), tt.args, noEnv, &stdout, &stderr)
		if out := stderr.String(); code != 1 || !strings.HasPrefix(out, tt.want) || strings.Count(out, "\n") != 1 || stdout.String() != "" {
			t.Errorf("%q: %d, stderr %q, stdout %q; want 1 and one line starting %q", tt.args, code, out, stdout.String(), tt.want)
		}
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"backup", "--data-dir", dir}, "--to FILE is required"},
		{[]string{"backup", "--to", to + "2", "--database-url", "postgres://u@db:5432/w"}, "pg_dump"},
		{[]string{"backup", "--output", to}, "did you mean --to?"},
	} {
		var stderr logtest.Buffer
		if code := run(context.Background(), tt.args, noEnv, &logtest.Buffer{}, &stderr); code != 2 || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%q: %d %q, want 2 saying %q", tt.args, code, stderr.String(), tt.want)
		}
	}
}

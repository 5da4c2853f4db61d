package storage_test

import (
	"context"
	"sync"
	"testing"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/internal/storage"
)

// TestMigrateOncePerVersion: a database records the schema version it was
// migrated to; opened again at that version it is not migrated (a table
// dropped behind its back stays dropped), and at any other version it is
// (the table is back, and the version is this build's).
func TestMigrateOncePerVersion(t *testing.T) {
	ctx := context.Background()
	loc := dbtest.NewLocation(t)
	d := loc.Open(t)
	version := func() string {
		t.Helper()
		var v string
		if err := d.SQL.QueryRowContext(ctx, "SELECT version FROM wagraph_schema_version WHERE id = 1").Scan(&v); err != nil {
			t.Fatalf("read the schema version: %v", err)
		}
		return v
	}
	hasAttempts := func() bool {
		t.Helper()
		_, err := d.SQL.ExecContext(ctx, "SELECT count(*) FROM attempts")
		return err == nil
	}
	if v := version(); v != ent.SchemaVersion() {
		t.Fatalf("schema version %q, want this build's %q", v, ent.SchemaVersion())
	}

	for _, step := range []struct {
		name         string
		recorded     string // the version written before the reopen ("": left)
		wantAttempts bool
	}{
		{"same version: not migrated", "", false},
		{"another version: migrated", "an-older-schema", true},
	} {
		if _, err := d.SQL.ExecContext(ctx, "DROP TABLE attempts"); err != nil && step.recorded == "" {
			t.Fatalf("%s: drop attempts: %v", step.name, err)
		}
		if step.recorded != "" {
			if _, err := d.SQL.ExecContext(ctx, "UPDATE wagraph_schema_version SET version = '"+step.recorded+"' WHERE id = 1"); err != nil {
				t.Fatal(err)
			}
		}
		d.Close()
		d = loc.Open(t)
		if got := hasAttempts(); got != step.wantAttempts {
			t.Errorf("%s: table attempts present %v, want %v", step.name, got, step.wantAttempts)
		}
		if v := version(); v != ent.SchemaVersion() {
			t.Errorf("%s: schema version %q, want %q", step.name, v, ent.SchemaVersion())
		}
	}
}

// TestMigrateConcurrentlyOnAnEmptyDatabase: the processes of a cluster
// started at once on an empty PostgreSQL database all come up. Two opens
// at once, each try on a new empty database (copied from template0, not
// from dbtest's migrated template), ten tries: both open, every time, and
// the database ends at this build's schema version. Without the migration
// lock one of the two died on a table the other had just created.
func TestMigrateConcurrentlyOnAnEmptyDatabase(t *testing.T) {
	if !dbtest.Postgres(t) {
		t.Skip("one process holds an SQLite data directory (datadir's lock); the PostgreSQL pass runs this")
	}
	ctx := context.Background()
	const tries = 10
	ready := 0
	for try := 1; try <= tries; try++ {
		url, drop, err := dbtest.NewDatabase("template0")
		if err != nil {
			t.Fatal(err)
		}
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			dbs   [2]*storage.DB
			errs  [2]error
		)
		for i := range dbs {
			wg.Go(func() {
				<-start
				dbs[i], errs[i] = storage.Open(ctx, "", url)
			})
		}
		close(start)
		wg.Wait()
		both := true
		for i, err := range errs {
			if err != nil {
				both = false
				t.Errorf("try %d: open %d of 2: %v", try, i+1, err)
				continue
			}
			var v string
			if err := dbs[i].SQL.QueryRowContext(ctx, "SELECT version FROM wagraph_schema_version WHERE id = 1").Scan(&v); err != nil || v != ent.SchemaVersion() {
				both = false
				t.Errorf("try %d: open %d of 2 sees schema version %q (%v), want %q", try, i+1, v, err, ent.SchemaVersion())
			}
			dbs[i].Close()
		}
		if both {
			ready++
		}
		if err := drop(); err != nil {
			t.Error(err)
		}
	}
	if ready != tries {
		t.Errorf("both opened in %d of %d tries, want every one", ready, tries)
	}
}

package storage_test

import (
	"context"
	"testing"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/internal/dbtest"
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

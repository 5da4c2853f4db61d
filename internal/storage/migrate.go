package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"entgo.io/ent/dialect"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/wagraph/wagraph/ent"
)

// versionTable records the schema version (ent.SchemaVersion) the database
// was last migrated to. It is not in the ent schema, like the write probe's
// table.
const (
	versionTable  = "wagraph_schema_version"
	versionCreate = "CREATE TABLE IF NOT EXISTS " + versionTable + " (id INTEGER PRIMARY KEY, version TEXT NOT NULL)"
	versionRead   = "SELECT version FROM " + versionTable + " WHERE id = 1"
	versionWrite  = "INSERT INTO " + versionTable + " (id, version) VALUES (1, %s) ON CONFLICT (id) DO UPDATE SET version = excluded.version"
)

// migrate brings the database to this build's schema, unless it records
// that it is there already. ent's migration inspects the whole database
// first (the larger part of opening one, most of all on PostgreSQL), and
// it writes to the ent package's shared table descriptions as it goes, so
// two migrations in one process race: a database at this build's version is
// left as it is (a restart, a second process of a cluster, a test's
// database copied from a migrated one: internal/dbtest).
func migrate(ctx context.Context, d *DB) error {
	want := ent.SchemaVersion()
	// Two processes of a cluster creating the table at once: one of them is
	// told it exists (42P07) or that its type does (23505).
	var pe *pgconn.PgError
	if _, err := d.SQL.ExecContext(ctx, versionCreate); err != nil && !(errors.As(err, &pe) && (pe.Code == "42P07" || pe.Code == "23505")) {
		return fmt.Errorf("create %s: %w", versionTable, err)
	}
	var have string
	switch err := d.SQL.QueryRowContext(ctx, versionRead).Scan(&have); {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return fmt.Errorf("read %s: %w", versionTable, err)
	case have == want:
		return nil
	}
	if err := d.Ent.Schema.Create(ctx); err != nil {
		return err
	}
	placeholder := "?"
	if d.Dialect == dialect.Postgres {
		placeholder = "$1"
	}
	if _, err := d.SQL.ExecContext(ctx, fmt.Sprintf(versionWrite, placeholder), want); err != nil {
		return fmt.Errorf("write %s: %w", versionTable, err)
	}
	return nil
}

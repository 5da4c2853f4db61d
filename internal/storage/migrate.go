package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"entgo.io/ent/dialect"

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
// database copied from a migrated one: internal/dbtest). A database that
// is not is migrated under the setup lock (WithSetupLock), its version read
// again once the lock is held: the processes of a cluster started at once
// on an empty database migrate it once, the others wait and find it done.
func migrate(ctx context.Context, d *DB) error {
	want := ent.SchemaVersion()
	// Without the lock first: a restart, the usual case, takes none. An
	// error here (no version table yet, most often) is read again under
	// the lock, where it is reported.
	if have, err := readVersion(ctx, d); err == nil && have == want {
		return nil
	}
	return d.WithSetupLock(ctx, func(ctx context.Context) error {
		// Created under the lock only: CREATE TABLE IF NOT EXISTS is not
		// safe from a concurrent one (23505, 42P07, 42710 on PostgreSQL).
		if _, err := d.SQL.ExecContext(ctx, versionCreate); err != nil {
			return fmt.Errorf("create %s: %w", versionTable, err)
		}
		switch have, err := readVersion(ctx, d); {
		case err != nil:
			return err
		case have == want:
			return nil // another process migrated it while this one waited
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
	})
}

// readVersion is the schema version the database records ("" when none).
func readVersion(ctx context.Context, d *DB) (string, error) {
	var have string
	err := d.SQL.QueryRowContext(ctx, versionRead).Scan(&have)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("read %s: %w", versionTable, err)
	}
	return have, nil
}

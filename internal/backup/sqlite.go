package backup

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mattn/go-sqlite3"
)

// sqliteHeader opens every SQLite database file.
const sqliteHeader = "SQLite format 3\x00"

// stepPages is how many pages one backup step copies: between steps the
// context is looked at, so a cancelled backup stops soon.
const stepPages = 1024

// busyTimeout is how long the copying connection waits on a lock. Readers
// of a WAL database wait only in rare moments (another connection
// recovering the WAL, or restarting it), and briefly.
const busyTimeout = "10000"

// isSQLite reports whether the file at path is an SQLite database (by its
// header; an empty file is not).
func isSQLite(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	head := make([]byte, len(sqliteHeader))
	if _, err := io.ReadFull(f, head); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return false, nil
		}
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	return string(head) == sqliteHeader, nil
}

// fileURI is path as an SQLite URI filename with the query params: the
// characters a URI gives a meaning to are escaped, so any path works.
func fileURI(path, params string) string {
	u := "file:" + strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(filepath.ToSlash(path))
	if params != "" {
		u += "?" + params
	}
	return u
}

// copyDatabases copies the databases names (relative to the data
// directory src) into the same names under stage, all from one snapshot:
// one connection attaches them all and reads each once inside one
// transaction, which holds a read snapshot of every one of them until it
// ends, and SQLite's backup API copies from it. A reader of a WAL database
// takes no lock a writer waits for, so the server commits on meanwhile.
// held, when set, runs once the snapshot is held.
func copyDatabases(ctx context.Context, src, stage string, names []string, held func()) ([]File, error) {
	drv := &sqlite3.SQLiteDriver{}
	// mode=rw: an existing database, never created; the connection
	// writes nothing (query_only), but a read-only one could not read a
	// WAL database whose -shm it may not create (a stopped server's).
	c, err := drv.Open(fileURI(filepath.Join(src, filepath.FromSlash(names[0])), "mode=rw&_busy_timeout="+busyTimeout))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", names[0], err)
	}
	conn := c.(*sqlite3.SQLiteConn)
	defer conn.Close()
	schemas := []string{"main"}
	for i, name := range names[1:] {
		schema := fmt.Sprintf("db%d", i+1)
		if _, err := conn.Exec("ATTACH DATABASE ? AS "+schema,
			[]driver.Value{fileURI(filepath.Join(src, filepath.FromSlash(name)), "mode=rw")}); err != nil {
			return nil, fmt.Errorf("open %s: %w", name, err)
		}
		schemas = append(schemas, schema)
	}
	if _, err := conn.Exec("PRAGMA query_only = 1", nil); err != nil {
		return nil, fmt.Errorf("make the copying connection read-only: %w", err)
	}
	if _, err := conn.Exec("BEGIN", nil); err != nil {
		return nil, fmt.Errorf("begin the read transaction: %w", err)
	}
	defer func() { _, _ = conn.Exec("ROLLBACK", nil) }() // ends a read: nothing to undo
	for i, schema := range schemas {
		// A transaction takes a database's snapshot at its first read.
		if err := readOnce(conn, "SELECT count(*) FROM "+schema+".sqlite_master"); err != nil {
			return nil, fmt.Errorf("read %s: %w", names[i], err)
		}
	}
	if held != nil {
		held()
	}
	files := make([]File, 0, len(names))
	for i, schema := range schemas {
		dst := filepath.Join(stage, filepath.FromSlash(names[i]))
		n, err := copyDatabase(ctx, drv, conn, schema, dst)
		if err != nil {
			return nil, fmt.Errorf("copy %s: %w", names[i], err)
		}
		files = append(files, File{Name: names[i], Bytes: n})
	}
	return files, nil
}

// readOnce runs a query and reads its first row.
func readOnce(conn *sqlite3.SQLiteConn, query string) error {
	rows, err := conn.Query(query, nil)
	if err != nil {
		return err
	}
	defer rows.Close()
	row := make([]driver.Value, len(rows.Columns()))
	if err := rows.Next(row); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// copyDatabase copies the schema of src, whose read transaction holds the
// snapshot, into a new database file dst, a step at a time, and returns
// its size. The copy is not synced (the archive that holds it is).
func copyDatabase(ctx context.Context, drv *sqlite3.SQLiteDriver, src *sqlite3.SQLiteConn, schema, dst string) (int64, error) {
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return 0, err
	}
	c, err := drv.Open(fileURI(dst, "_sync=OFF"))
	if err != nil {
		return 0, err
	}
	dest := c.(*sqlite3.SQLiteConn)
	defer dest.Close()
	b, err := dest.Backup("main", src, schema)
	if err != nil {
		return 0, err
	}
	for last := -1; ; {
		done, err := b.Step(stepPages)
		if err != nil {
			b.Close()
			return 0, err
		}
		if done {
			break
		}
		if err := ctx.Err(); err != nil {
			b.Close()
			return 0, err
		}
		// No progress: a lock was busy (Step says so by not being done).
		// The snapshot is held, so it is another moment's.
		if rem := b.Remaining(); rem == last {
			select {
			case <-ctx.Done():
				b.Close()
				return 0, ctx.Err()
			case <-time.After(10 * time.Millisecond):
			}
		} else {
			last = rem
		}
	}
	if err := b.Finish(); err != nil {
		return 0, err
	}
	if err := dest.Close(); err != nil {
		return 0, err
	}
	fi, err := os.Stat(dst)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// quickCheck runs SQLite's quick_check over the database file at path,
// read as an unchanging file (a copy no one else opens).
func quickCheck(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite3", fileURI(path, "mode=ro&immutable=1"))
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "PRAGMA quick_check")
	if err != nil {
		return fmt.Errorf("SQLite's quick_check: %w", err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return fmt.Errorf("SQLite's quick_check: %w", err)
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("SQLite's quick_check: %w", err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("SQLite's quick_check finds it damaged: %s", strings.Join(problems, "; "))
	}
	return nil
}

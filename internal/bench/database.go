package bench

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	neturl "net/url"
	"strings"
	"time"

	"github.com/wagraph/wagraph/internal/storage"
)

// databases creates the PostgreSQL databases of a run on the server at
// -postgres, one per goal (and one per reference server of goal 5), so that
// no goal measures a database another goal filled; it drops them all at the
// end.
type databases struct {
	server string // the server's URL, whose user may CREATE DATABASE
	admin  *sql.DB
	names  []string
}

func openDatabases(ctx context.Context, server string) (*databases, error) {
	if _, err := neturl.Parse(server); err != nil || !strings.HasPrefix(server, "postgres") {
		return nil, fmt.Errorf("-postgres: want a postgres:// URL of a server whose user may create databases")
	}
	admin, err := sql.Open(storage.PostgresDriver, server)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", storage.PostgresWhere(server), err)
	}
	if err := admin.PingContext(ctx); err != nil {
		admin.Close()
		return nil, fmt.Errorf("connect to %s: %w", storage.PostgresWhere(server), err)
	}
	return &databases{server: server, admin: admin}, nil
}

// create makes an empty database named for label and returns its URL.
func (d *databases) create(ctx context.Context, label string) (string, error) {
	name, err := databaseName(label)
	if err != nil {
		return "", err
	}
	if _, err := d.admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("create database %s on %s: %w", name, storage.PostgresWhere(d.server), err)
	}
	d.names = append(d.names, name)
	u, _ := neturl.Parse(d.server) // parsed in openDatabases
	u.Path = "/" + name
	return u.String(), nil
}

// close drops every database the run created (FORCE: a server the run
// killed may have left its pool open) and disconnects.
func (d *databases) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var first error
	for _, name := range d.names {
		if _, err := d.admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil && first == nil {
			first = fmt.Errorf("drop database %s: %w", name, err)
		}
	}
	d.admin.Close()
	return first
}

// databaseName is "wagraph_bench_<label>_<8 hex digits>": the label keeps
// its letters, digits and underscores only (it is spliced into SQL), and the
// random part keeps runs sharing a server apart.
func databaseName(label string) (string, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("database name: %w", err)
	}
	return "wagraph_bench_" + sqlIdentPart(label) + "_" + hex.EncodeToString(b[:]), nil
}

// sqlIdentPart is label lower-cased with every character but letters,
// digits and '_' dropped, at most 30 characters (PostgreSQL cuts names at
// 63 bytes).
func sqlIdentPart(label string) string {
	var sb strings.Builder
	for _, r := range strings.ToLower(label) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '_' {
			sb.WriteRune(r)
		}
		if sb.Len() == 30 {
			break
		}
	}
	return sb.String()
}

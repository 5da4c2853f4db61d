package graph

import (
	"context"
	"crypto/rand"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	_ "github.com/mattn/go-sqlite3"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/internal/auth"
	"github.com/wagraph/wagraph/internal/dbtest"
)

// countingDriver counts the statements sent to the database.
type countingDriver struct {
	dialect.Driver
	n atomic.Int64
}

func (d *countingDriver) Query(ctx context.Context, query string, args, v any) error {
	d.n.Add(1)
	return d.Driver.Query(ctx, query, args, v)
}

func (d *countingDriver) Exec(ctx context.Context, query string, args, v any) error {
	d.n.Add(1)
	return d.Driver.Exec(ctx, query, args, v)
}

// TestViewerReadsUserOnlyWhenAsked checks that viewer.user is answered from
// the principal when only its id is asked, and from the user's row (one
// query) as soon as another field is, however the fields are spelled.
func TestViewerReadsUserOnlyWhenAsked(t *testing.T) {
	d := dbtest.Open(t)
	drv := &countingDriver{Driver: entsql.OpenDB(d.Dialect, d.SQL)}
	db := ent.NewClient(ent.Driver(drv))
	ctx := t.Context()
	created := time.Date(2026, 11, 24, 1, 2, 3, 0, time.UTC)
	if err := db.User.Create().SetID("u1").SetName("alice").SetAdmin(true).SetCreatedAt(created).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	r := &Resolver{DB: db, Auth: auth.NewService(db, rand.Reader, time.Now, func() string { return "x" }, auth.Options{})}
	srv := NewServer(r, slog.New(slog.DiscardHandler), ServerOptions{})
	// The principal's name and admin flag differ from the row's on purpose:
	// an answer taken from the principal for those fields shows.
	p := &auth.Principal{TokenID: "t1", UserID: "u1", UserName: "stale", Admin: false}

	tests := []struct {
		query       string
		want        string
		wantQueries int64
	}{
		{`{ viewer { user { id } } }`, `{"data":{"viewer":{"user":{"id":"u1"}}}}`, 0},
		{`{ viewer { user { __typename id } } }`, `{"data":{"viewer":{"user":{"__typename":"User","id":"u1"}}}}`, 0},
		{`{ viewer { __typename } }`, `{"data":{"viewer":{"__typename":"Viewer"}}}`, 0},
		{`{ viewer { user { id name } } }`, `{"data":{"viewer":{"user":{"id":"u1","name":"alice"}}}}`, 1},
		{`{ viewer { user { admin } } }`, `{"data":{"viewer":{"user":{"admin":true}}}}`, 1},
		{`{ viewer { user { createdAt } } }`, `{"data":{"viewer":{"user":{"createdAt":"2026-11-24T01:02:03.000Z"}}}}`, 1},
		{`{ viewer { ...V } } fragment V on Viewer { user { id ... on User { name } } }`, `{"data":{"viewer":{"user":{"id":"u1","name":"alice"}}}}`, 1},
		{`{ a: viewer { user { id } } b: viewer { user { nick: name } } }`, `{"data":{"a":{"user":{"id":"u1"}},"b":{"user":{"nick":"alice"}}}}`, 1},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			body := `{"query":` + quote(tc.query) + `}`
			req := httptest.NewRequestWithContext(auth.WithPrincipal(ctx, p), http.MethodPost, "/graphql", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			before := drv.n.Load()
			srv.ServeHTTP(rec, req)
			if got := strings.TrimSpace(rec.Body.String()); got != tc.want {
				t.Errorf("answer %s, want %s", got, tc.want)
			}
			if n := drv.n.Load() - before; n != tc.wantQueries {
				t.Errorf("%d queries, want %d", n, tc.wantQueries)
			}
		})
	}
}

func quote(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
}

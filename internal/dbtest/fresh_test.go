package dbtest

import (
	"os"
	"testing"
	"time"
)

func TestTestDatabaseNames(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	name := testDatabaseName(now)
	if at, ok := madeAt(name); !ok || !at.Equal(now) {
		t.Errorf("madeAt(%q) = %v, %v; want %v", name, at, ok, now)
	}
	if other := testDatabaseName(now); other == name {
		t.Errorf("two names made at once are both %q", name)
	}
	for _, n := range []string{"wagraph_test_0123456789abcdef", "wagraph_template_ab", "wagraph_test_x_1", "postgres"} {
		if at, ok := madeAt(n); ok {
			t.Errorf("madeAt(%q) = %v: a name of another form, want it left alone", n, at)
		}
	}
}

// TestSweepDropsOnlyAbandoned: the sweep drops a test database made longer
// ago than a test binary lives, and leaves one made now.
func TestSweepDropsOnlyAbandoned(t *testing.T) {
	if !Postgres(t) {
		t.Skip("test databases on a PostgreSQL server: the PostgreSQL pass of make test runs this test")
	}
	server := os.Getenv(ServerEnv)
	now := time.Now()
	old, recent := testDatabaseName(now.Add(-abandonedAfter-time.Minute)), testDatabaseName(now)
	for _, name := range []string{old, recent} {
		if err := adminExec(server, "CREATE DATABASE "+name); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = adminExec(server, "DROP DATABASE IF EXISTS "+recent) })
	if err := sweep(server, now); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{old: false, recent: true} {
		if got, err := adminExists(server, name); err != nil || got != want {
			t.Errorf("%s after the sweep: exists %v (%v), want %v", name, got, err, want)
		}
	}
}

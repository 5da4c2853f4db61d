package storage

import (
	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"
)

// ForUpdate, a predicate in form only, makes a SELECT lock its rows FOR NO
// KEY UPDATE on PostgreSQL, so that two transactions that check a count
// before they add to it (a name taken, a quota) take turns on the row they
// lock: it excludes another such lock, yet lets other writers insert rows
// referencing it (their foreign key check takes KEY SHARE, which FOR UPDATE
// would block). SQLite has no row locks (and ent refuses FOR there): its
// one writer lock, taken when the transaction begins (_txlock=immediate),
// already serialises them.
func ForUpdate(s *sql.Selector) {
	if s.Dialect() == dialect.Postgres {
		s.For(sql.LockNoKeyUpdate)
	}
}

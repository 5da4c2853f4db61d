package ent

// SQLiteDSN is the data source of the product's SQLite database at path
// (written by hand: ent generates every other file of this package but
// withtx.go). WAL lets readers run beside the one writer; _txlock=immediate
// takes the write lock at BEGIN, so two writers queue on the busy timeout
// instead of failing with SQLITE_BUSY halfway through a transaction, and
// commits are ordered (the event log's seq relies on it).
//
// synchronous=NORMAL with WAL: a commit appends to the WAL without an fsync
// (the WAL is synced at checkpoints). A committed transaction survives a
// crash of the process (its frames are in the operating system's hands when
// COMMIT returns, which is what "commit before ack" needs against a killed
// or crashing wagraph, and what the crash test checks); an operating-system
// crash or a power loss may roll back the last transactions committed since
// the last checkpoint, never corrupting the database. FULL would fsync the
// WAL on every commit, the event log's largest cost on slow disks.
//
// _stmt_cache_size keeps each connection's most recently used prepared
// statements: the same few queries run on every request, and preparing
// them again was a seventh of a small request's cost.
func SQLiteDSN(path string) string {
	return "file:" + path + "?_journal_mode=WAL&_busy_timeout=10000&_foreign_keys=on&_txlock=immediate&_synchronous=NORMAL&_stmt_cache_size=64"
}

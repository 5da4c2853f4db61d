package ent

// SQLiteDSN is the data source of the product's SQLite database at path
// (written by hand: ent generates every other file of this package but
// withtx.go). WAL lets readers run beside the one writer; _txlock=immediate
// takes the write lock at BEGIN, so two writers queue on the busy timeout
// instead of failing with SQLITE_BUSY halfway through a transaction, and
// commits are ordered (the event log's seq relies on it).
func SQLiteDSN(path string) string {
	return "file:" + path + "?_journal_mode=WAL&_busy_timeout=10000&_foreign_keys=on&_txlock=immediate&_synchronous=NORMAL"
}

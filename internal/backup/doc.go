// Package backup copies an SQLite data directory into one archive while the
// server that owns it keeps running (`wagraph backup --to FILE`), and
// unpacks such an archive into an empty data directory (Restore).
//
// The databases (wagraph.db, whatsmeow.db, and any other file that starts
// with SQLite's header) are copied with SQLite's online backup API from one
// connection that has them all attached and holds one read transaction
// over them: each copy is its database exactly as of one commit, and the
// snapshots are taken one right after the other before anything is
// copied, so all are of (nearly) one moment (the server never writes both
// files in one transaction: there is nothing more to keep together). In
// WAL mode a reader never blocks a writer: the server commits on while the
// copy runs; only its checkpoints cannot pass the copy's snapshot, so the
// -wal files grow for as long as the copy takes and shrink at the next
// checkpoint after. The data directory's lock is not taken: a backup is
// not a second server. Each copy passes SQLite's quick_check before it is
// packed; a restore checks each database again.
//
// Other regular files (the simulated network's state in sandbox mode,
// written whole by rename) are copied as they are. Left out: SQLite's
// -wal, -shm and -journal files (the copies are whole without them), the
// data directory's lock (*.lock), temporary files (*.tmp, *.tmp-*, *.tmp.*
// and names starting with .tmp), and anything that is not a regular file
// or a directory (logged).
//
// The archive is a gzip-compressed tar whose entries are the data
// directory's files by their relative paths ("wagraph.db", "whatsmeow.db",
// "sandbox/network.json"), regular files of mode 0600 and directories of
// 0700, nothing else: `tar -xzf FILE -C DIR` into an empty directory is a
// restore too. It is written beside FILE, synced, and linked into place,
// never over an existing file; the copies are staged in a temporary
// directory beside FILE, which is removed after.
package backup

package backup

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// These tests are about SQLite's files, on either pass of make test: a
// backup of PostgreSQL is pg_dump's.

// serverDSN opens a database as the server does (ent.SQLiteDSN,
// whatsapp.OpenStore): WAL, immediate write transactions; busy is how
// long a writer waits on a lock, in ms.
func serverDSN(path string, busy int) string {
	return fmt.Sprintf("file:%s?_journal_mode=WAL&_busy_timeout=%d&_txlock=immediate&_synchronous=NORMAL", path, busy)
}

// ledgerDB is a database written the way the server writes its event log:
// each transaction appends an entry and moves a running total, so a copy
// taken between commits has total = the sum of its entries.
type ledgerDB struct {
	db   *sql.DB
	path string
}

func openLedger(t *testing.T, path string, busy int) *ledgerDB {
	t.Helper()
	db, err := sql.Open("sqlite3", serverDSN(path, busy))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for _, stmt := range []string{
		`CREATE TABLE IF NOT EXISTS entries (id INTEGER PRIMARY KEY, amount INTEGER NOT NULL, note TEXT NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS total (id INTEGER PRIMARY KEY CHECK (id = 1), sum INTEGER NOT NULL, n INTEGER NOT NULL)`,
		`INSERT OR IGNORE INTO total (id, sum, n) VALUES (1, 0, 0)`,
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	return &ledgerDB{db: db, path: path}
}

// add commits one entry and the total with it.
func (l *ledgerDB) add(amount int) error {
	tx, err := l.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// A note of some size, so the log spans many pages.
	if _, err := tx.Exec(`INSERT INTO entries (amount, note) VALUES (?, ?)`, amount, strings.Repeat("n", 200+amount%300)); err != nil {
		return err
	}
	if _, err := tx.Exec(`UPDATE total SET sum = sum + ?, n = n + 1 WHERE id = 1`, amount); err != nil {
		return err
	}
	return tx.Commit()
}

func (l *ledgerDB) addN(t *testing.T, n int) {
	t.Helper()
	for i := 1; i <= n; i++ {
		if err := l.add(i); err != nil {
			t.Fatal(err)
		}
	}
}

// ledgerState reads a ledger database file and checks it: SQLite's
// integrity_check, and total against the entries. It returns the count.
func ledgerState(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	integrity(t, db, path)
	var sum, n, entries, entrySum int
	if err := db.QueryRow(`SELECT sum, n FROM total`).Scan(&sum, &n); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if err := db.QueryRow(`SELECT count(*), coalesce(sum(amount), 0) FROM entries`).Scan(&entries, &entrySum); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if n != entries || sum != entrySum {
		t.Fatalf("%s: total says %d entries summing %d, the table holds %d summing %d: not one commit's state", path, n, sum, entries, entrySum)
	}
	return n
}

// integrity runs PRAGMA integrity_check, which must say ok.
func integrity(t *testing.T, db *sql.DB, what string) {
	t.Helper()
	var res string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil {
		t.Fatalf("%s: integrity_check: %v", what, err)
	}
	if res != "ok" {
		t.Fatalf("%s: integrity_check: %s", what, res)
	}
}

// makeDataDir makes a data directory as a running sandbox server has it: the
// two databases in WAL mode, open and written (so their -wal and -shm
// files are there), the lock, the simulated network's state and a file
// it was writing aside when the backup came.
func makeDataDir(t *testing.T) (dir string, product, store *ledgerDB) {
	t.Helper()
	dir = t.TempDir()
	product = openLedger(t, filepath.Join(dir, ProductDB), 10000)
	store = openLedger(t, filepath.Join(dir, storeDB), 10000)
	files := map[string]string{
		"wagraph.lock":               "4242\n",
		"sandbox/network.json":       `{"accounts":[]}`,
		"sandbox/network.json.tmp":   `{"accou`,
		"sandbox/.tmp-network-12345": `{"acc`,
		"notes.txt":                  "kept as it is\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir, product, store
}

// archiveEntries lists an archive's entries, with the content of its files.
func archiveEntries(t *testing.T, path string) (names []string, contents map[string][]byte) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	contents = map[string][]byte{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return names, contents
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, hdr.Name)
		switch hdr.Typeflag {
		case tar.TypeReg:
			if hdr.Mode != fileMode {
				t.Errorf("%s has mode %o, want %o", hdr.Name, hdr.Mode, fileMode)
			}
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			contents[hdr.Name] = b
		case tar.TypeDir:
			if hdr.Mode != dirMode {
				t.Errorf("%s has mode %o, want %o", hdr.Name, hdr.Mode, dirMode)
			}
		default:
			t.Errorf("entry %s of type %c", hdr.Name, hdr.Typeflag)
		}
	}
}

// TestSnapshotWhileTheServerWrites: while the backup holds its snapshot,
// the server's writers commit to both databases without waiting (a busy
// timeout of 0: any lock in their way would fail them), and the archive
// holds both databases as of the snapshot, nothing written after; it holds
// the plain files as they are and leaves out the lock, the -wal and -shm
// files and the files written aside.
func TestSnapshotWhileTheServerWrites(t *testing.T) {
	dir, product, store := makeDataDir(t)
	product.addN(t, 300)
	store.addN(t, 120)
	impatientProduct := openLedger(t, product.path, 0)
	impatientStore := openLedger(t, store.path, 0)
	for _, side := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(product.path + side); err != nil {
			t.Fatalf("the live database has no %s file: %v", side, err)
		}
	}

	out := filepath.Join(t.TempDir(), "backup.tar.gz")
	heldCalls := 0
	sum, err := toFile(context.Background(), dir, out, nil, func() {
		heldCalls++
		for i := 0; i < 50; i++ {
			if err := impatientProduct.add(1000); err != nil {
				t.Errorf("a write to wagraph.db while the backup holds its snapshot: %v", err)
				return
			}
			if err := impatientStore.add(1000); err != nil {
				t.Errorf("a write to whatsmeow.db while the backup holds its snapshot: %v", err)
				return
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if heldCalls != 1 {
		t.Fatalf("the snapshot hook ran %d times, want 1", heldCalls)
	}
	if got := ledgerState(t, product.path); got != 350 {
		t.Fatalf("the live wagraph.db holds %d entries, want 350", got)
	}

	names, contents := archiveEntries(t, out)
	want := []string{"wagraph.db", "whatsmeow.db", "sandbox/", "notes.txt", "sandbox/network.json"}
	sort.Strings(names)
	sort.Strings(want)
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("archive entries %q, want %q", names, want)
	}
	if got := string(contents["sandbox/network.json"]); got != `{"accounts":[]}` {
		t.Errorf("sandbox/network.json in the archive: %q", got)
	}
	if got := string(contents["notes.txt"]); got != "kept as it is\n" {
		t.Errorf("notes.txt in the archive: %q", got)
	}

	restored := filepath.Join(t.TempDir(), "restored")
	rsum, err := Restore(context.Background(), out, restored, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := ledgerState(t, filepath.Join(restored, ProductDB)); got != 300 {
		t.Errorf("the backup's wagraph.db holds %d entries, want the 300 committed before the snapshot", got)
	}
	if got := ledgerState(t, filepath.Join(restored, storeDB)); got != 120 {
		t.Errorf("the backup's whatsmeow.db holds %d entries, want the 120 committed before the snapshot", got)
	}
	if len(sum.Databases) != 2 || sum.Databases[0].Name != ProductDB || sum.Databases[1].Name != storeDB || len(sum.Others) != 2 {
		t.Errorf("summary %+v: want wagraph.db, whatsmeow.db and 2 other files", sum)
	}
	for i, d := range rsum.Databases {
		if d != sum.Databases[i] {
			t.Errorf("restored %+v, backed up %+v", d, sum.Databases[i])
		}
	}
	if !strings.HasPrefix(sum.String(), "wrote "+out+" (") || !strings.HasSuffix(sum.String(), "2 other files") {
		t.Errorf("summary line %q", sum.String())
	}
	leftovers, err := os.ReadDir(filepath.Dir(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(leftovers) != 1 {
		t.Errorf("the backup's directory holds %d entries, want only the archive (staging and temporary files removed)", len(leftovers))
	}
}

// TestBackupsUnderAWriter: backups taken while a writer commits as fast as
// it can each restore to one commit's state of each database, pass
// integrity_check, and the writer never fails.
func TestBackupsUnderAWriter(t *testing.T) {
	dir, product, store := makeDataDir(t)
	product.addN(t, 20)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var writeErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 1; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := product.add(i); err != nil {
				writeErr = err
				return
			}
			if err := store.add(i); err != nil {
				writeErr = err
				return
			}
		}
	}()
	counts := []int{}
	for i := 0; i < 4; i++ {
		out := filepath.Join(t.TempDir(), "b.tar.gz")
		if _, err := ToFile(context.Background(), dir, out, nil); err != nil {
			t.Error(err)
			break
		}
		restored := t.TempDir()
		if _, err := Restore(context.Background(), out, restored, nil); err != nil {
			t.Error(err)
			break
		}
		counts = append(counts, ledgerState(t, filepath.Join(restored, ProductDB)))
		ledgerState(t, filepath.Join(restored, storeDB))
	}
	close(stop)
	wg.Wait()
	if writeErr != nil {
		t.Fatalf("the writer failed during the backups: %v", writeErr)
	}
	for i := 1; i < len(counts); i++ {
		if counts[i] < counts[i-1] {
			t.Errorf("backup %d holds %d entries, the one before %d", i, counts[i], counts[i-1])
		}
	}
	if len(counts) > 0 && counts[0] < 20 {
		t.Errorf("the first backup holds %d entries, want the 20 committed before it at least", counts[0])
	}
}

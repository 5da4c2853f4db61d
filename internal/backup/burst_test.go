package backup_test

import (
	"bytes"
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/ent/event"
	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/backup"
	"github.com/wagraph/wagraph/internal/logtest"
	"github.com/wagraph/wagraph/internal/storage"
	"github.com/wagraph/wagraph/whatsapp"
)

// burstSize is the burst's length: long enough that the server is still
// taking it in when the backup is taken, -race or not.
const burstSize = 600

// storedEvent is a row of the event log.
type storedEvent struct {
	seq       int64
	kind, key string
	data      []byte
}

// eventLog reads a session's event log from an SQLite wagraph.db, by id.
func eventLog(t *testing.T, db *sql.DB, sessionID string) map[string]storedEvent {
	t.Helper()
	rows, err := db.Query(`SELECT id, seq, kind, coalesce(key, ''), data FROM events WHERE session_id = ?`, sessionID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	log := map[string]storedEvent{}
	for rows.Next() {
		var id string
		var e storedEvent
		if err := rows.Scan(&id, &e.seq, &e.kind, &e.key, &e.data); err != nil {
			t.Fatal(err)
		}
		log[id] = e
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return log
}

// burstTexts counts the events of the log that hold a text of the burst
// (their key names the WhatsApp message: "inbound-message.upsert/<chat>/<id>").
func burstTexts(log map[string]storedEvent, ids map[string]bool) int {
	n := 0
	for _, e := range log {
		if i := strings.LastIndexByte(e.key, '/'); e.kind == "inbound-message.upsert" && i >= 0 && ids[e.key[i+1:]] {
			n++
		}
	}
	return n
}

// openFile opens an SQLite file read-only and checks it with PRAGMA
// integrity_check.
func openFile(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var res string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
		t.Fatalf("%s: integrity_check says %q (%v)", path, res, err)
	}
	return db
}

// TestBackupDuringBurst (must show 7): a backup taken while a sandbox
// server takes in a burst of inbound texts restores with every event the
// server had committed before the backup began, and at least as many of
// the burst's texts as the server had acknowledged to the network (it
// acknowledges a message only once its event is committed); the backup is
// of the middle of the burst (the live log later holds every text, the
// backup fewer); both restored databases pass integrity_check, the
// restored log is gap-free, the linked device's keys are in the restored
// whatsmeow.db, and the product opens the restored directory.
//
// The server stays on SQLite on both passes of make test: SQLite's files
// are what is backed up (a PostgreSQL database is backed up with pg_dump).
func TestBackupDuringBurst(t *testing.T) {
	cfg := apptest.SandboxConfig(t)
	cfg.DatabaseURL = "" // SQLite's files are what this test is about, on either pass
	s := apptest.Start(t, cfg)
	const phone, contact = "4915550077001", "4915550077002"
	sess := s.LinkSession(t, phone)
	dev, err := whatsapp.ParseJID(sess.JID)
	if err != nil {
		t.Fatal(err)
	}
	net := s.Network(t)
	live, _ := s.RawDB(t, "wagraph.db")

	sent, err := net.SendBurst(contact, phone, "backup-", burstSize)
	if err != nil {
		t.Fatalf("burst: %v (queued %d)", err, len(sent))
	}
	ids := map[string]bool{}
	for _, id := range sent {
		ids[id] = true
	}
	// Wait until the server has taken in part of the burst, not all of it.
	var acked int
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		unacked := net.Unacked(dev)
		if unacked == 0 {
			t.Fatalf("the server took in the whole burst of %d before the backup could start: make the burst longer", burstSize)
		}
		if acked = burstSize - unacked; acked >= 50 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server acknowledged %d texts of the burst in a minute", acked)
		}
	}
	// The network's count first, the log second: every acknowledged text
	// was committed before its acknowledgement, so the log holds them.
	before := eventLog(t, live, sess.ID)
	if n := burstTexts(before, ids); n < acked {
		t.Fatalf("the live log holds %d texts of the burst, the network saw %d acknowledged: acknowledged before committed", n, acked)
	}

	out := filepath.Join(t.TempDir(), "wagraph-backup.tar.gz")
	logger, logs := logtest.New(nil)
	sum, err := backup.ToFile(context.Background(), s.DataDir, out, logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s (backup begun with %d events in the log, %d of %d texts acknowledged; %d unacknowledged after it)",
		sum, len(before), acked, burstSize, net.Unacked(dev))
	if !strings.Contains(logs.String(), `"msg":"backup written"`) {
		t.Errorf("no \"backup written\" in the log:\n%s", logs)
	}

	// The rest of the burst, into the live log.
	for deadline := time.Now().Add(2 * time.Minute); net.Unacked(dev) != 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d texts of the burst still unacknowledged after 2 minutes", net.Unacked(dev))
		}
	}
	if n := burstTexts(eventLog(t, live, sess.ID), ids); n != burstSize {
		t.Fatalf("the live log holds %d texts of the burst, want all %d", n, burstSize)
	}

	restored := filepath.Join(t.TempDir(), "restored")
	rsum, err := backup.Restore(context.Background(), out, restored, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s; other files: %+v", rsum, rsum.Others)
	product := openFile(t, filepath.Join(restored, "wagraph.db"))
	after := eventLog(t, product, sess.ID)
	for id, e := range before {
		got, ok := after[id]
		if !ok {
			t.Errorf("event %s (seq %d, %s) was committed before the backup began and is not in it", id, e.seq, e.kind)
			continue
		}
		if got.seq != e.seq || got.kind != e.kind || got.key != e.key || !bytes.Equal(got.data, e.data) {
			t.Errorf("event %s: restored seq %d %s %s, was seq %d %s %s", id, got.seq, got.kind, got.key, e.seq, e.kind, e.key)
		}
	}
	texts := burstTexts(after, ids)
	if texts < acked {
		t.Errorf("the backup holds %d texts of the burst, the network saw %d acknowledged before it began", texts, acked)
	}
	if texts >= burstSize {
		t.Errorf("the backup holds all %d texts of the burst: it was not taken during it", texts)
	}
	seqs := map[int64]bool{}
	for _, e := range after {
		seqs[e.seq] = true
	}
	for seq := int64(1); seq <= int64(len(after)); seq++ {
		if !seqs[seq] {
			t.Fatalf("the restored log of %d events lacks seq %d: not one commit's state", len(after), seq)
		}
	}

	store := openFile(t, filepath.Join(restored, "whatsmeow.db"))
	var devices int
	if err := store.QueryRow(`SELECT count(*) FROM whatsmeow_device WHERE jid = ?`, sess.JID).Scan(&devices); err != nil {
		t.Fatal(err)
	}
	if devices != 1 {
		t.Errorf("the restored whatsmeow.db holds %d devices %s, want 1", devices, sess.JID)
	}
	if len(rsum.Databases) != 2 || rsum.Databases[0].Name != "wagraph.db" || rsum.Databases[1].Name != "whatsmeow.db" {
		t.Errorf("restored databases %+v, want wagraph.db and whatsmeow.db", rsum.Databases)
	}

	// The product opens it (its schema brought up to date, as at a start)
	// and reads the same log.
	product.Close()
	store.Close()
	opened, err := storage.Open(context.Background(), restored, "")
	if err != nil {
		t.Fatalf("the product does not open the restored data directory: %v", err)
	}
	defer opened.Close()
	n, err := opened.Ent.Event.Query().Where(event.SessionID(sess.ID)).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n != len(after) {
		t.Errorf("the product reads %d events of the restored log, the file holds %d", n, len(after))
	}
}

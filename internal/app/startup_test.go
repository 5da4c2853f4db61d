package app_test

import (
	"database/sql"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/logtest"
	"github.com/wagraph/wagraph/internal/storage"
)

// TestRestoreFailureOfOneSession: a linked session whose device cannot be
// loaded (its keys are damaged) is logged with its session_id and left
// DISCONNECTED; the others are restored and the server becomes ready.
func TestRestoreFailureOfOneSession(t *testing.T) {
	network, control := apptest.RemoteNetwork(t)
	cfg := apptest.SandboxConfig(t)
	cfg.SandboxNetwork = control

	first := apptest.StartLive(t, cfg)
	linked := first.LinkMany(t, 3, "49155520")
	for _, sess := range linked {
		apptest.Settle(t, network, sess)
	}
	first.Stop(t)
	broken := linked[1]
	damageDevice(t, cfg, broken.JID)

	log, logs := logtest.New(nil)
	second := apptest.StartLogged(t, cfg, log) // returns once the restore has ended
	if res := second.Do(t, "GET", "/readyz", "", "", nil); res.Status != http.StatusOK {
		t.Errorf("/readyz %d %s with one session failed; want 200: the others are started", res.Status, res.Body)
	}
	for _, sess := range []apptest.Session{linked[0], linked[2]} {
		second.WaitStatus(t, sess.ID, "CONNECTED", nil)
		second.Track(sess)
	}
	var failed []map[string]any
	for _, r := range logs.Records() {
		if r["msg"] == "restoring the session failed" {
			failed = append(failed, r)
		}
	}
	if len(failed) != 1 || failed[0]["session_id"] != broken.ID || failed[0]["level"] != "ERROR" {
		t.Errorf("restore failures logged: %v; want one error with session_id %s", failed, broken.ID)
	}
	var out struct{ Session struct{ Status string } }
	second.MustGraphQL(t, apptest.AdminToken, `query($id: ID!) { session(id: $id) { status } }`, map[string]any{"id": broken.ID}, &out)
	if out.Session.Status != "DISCONNECTED" {
		t.Errorf("the session that failed is %s, want DISCONNECTED", out.Session.Status)
	}
}

// damageDevice makes the stored device of jid unreadable to whatsmeow: a
// LID with two dots is no JID (types.ParseJID), on either backend, where
// the key columns' constraints of PostgreSQL refuse keys of a wrong length.
func damageDevice(t *testing.T, cfg config.Config, jid string) {
	t.Helper()
	db, query := openDeviceStore(t, cfg), `UPDATE whatsmeow_device SET lid = 'not.a.jid@lid' WHERE jid = ?`
	if cfg.DatabaseURL != "" {
		query = strings.Replace(query, "?", "$1", 1)
	}
	res, err := db.Exec(query, jid)
	if err != nil {
		t.Fatalf("damage device %s: %v", jid, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("damage device %s: %d rows", jid, n)
	}
}

// openDeviceStore opens whatsmeow's device store of a server that is not
// running: its SQLite file in the data directory, or the PostgreSQL
// database it shares with the product.
func openDeviceStore(t *testing.T, cfg config.Config) *sql.DB {
	t.Helper()
	driver, dsn := "sqlite3", "file:"+filepath.Join(cfg.DataDir, "whatsmeow.db")+"?_busy_timeout=10000"
	if cfg.DatabaseURL != "" {
		driver, dsn = storage.PostgresDriver, cfg.DatabaseURL
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

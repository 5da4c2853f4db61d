package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/app"
	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/backup"
	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/internal/mediastore"
	"github.com/wagraph/wagraph/internal/testclient"
)

// TestKeptMediaInABackup (issue 37): a received image kept in the default
// local store (<data-dir>/media), the data directory backed up with
// `wagraph backup` and restored into a fresh directory: a server started on
// that directory serves the same media from the restored file (its
// SHA-256 the ETag), with no connection to WhatsApp to download it again.
func TestKeptMediaInABackup(t *testing.T) {
	t.Parallel()
	if dbtest.Postgres(t) {
		t.Skip("a backup is of a SQLite data directory (wagraph backup); on PostgreSQL the database is the operator's to back up, and the media store is S3")
	}
	s, sess := apptest.StartLinkedWith(t, func(_ *config.Config, o *app.Options) { o.Media.Options.Poll = 100 * time.Millisecond })
	photo := pngImage(t, 26, 14)
	id, err := s.Network(t).SendImage("4915550370101", apptest.LinkedPhone, photo, "image/png", "")
	if err != nil {
		t.Fatal(err)
	}
	waitStored(t, s, sess.ID, id)
	sum := sha256.Sum256(photo)
	etag := `"` + hex.EncodeToString(sum[:]) + `"`
	route := "/session/" + sess.ID + "/message/" + id + "/media"
	testclient.Until(t, 20*time.Second, "the image kept", func() bool {
		return s.REST(t, http.MethodGet, route, apptest.AdminToken, "").Header.Get("ETag") == etag
	})
	dataDir := s.Config.DataDir
	s.Stop(t)

	archive := filepath.Join(t.TempDir(), "wagraph.tar.gz")
	if _, err := backup.ToFile(context.Background(), dataDir, archive, nil); err != nil {
		t.Fatal(err)
	}
	restored := filepath.Join(t.TempDir(), "restored")
	if _, err := backup.Restore(context.Background(), archive, restored, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(restored, mediastore.DirName)); err != nil {
		t.Fatalf("the restored directory has no media store: %v", err)
	}

	// No simulated network: the sessions cannot reach WhatsApp, so what
	// the route serves can only be the restored file.
	cfg := apptest.Config(t)
	cfg.DataDir = restored
	again := apptest.Start(t, cfg)
	res := again.REST(t, http.MethodGet, route, apptest.AdminToken, "")
	if res.Status != http.StatusOK || res.Header.Get("ETag") != etag || !bytes.Equal(res.Body, photo) {
		t.Errorf("the restored server answered %d, ETag %q, %d bytes; want 200, %s, the %d bytes the phone sent",
			res.Status, res.Header.Get("ETag"), len(res.Body), etag, len(photo))
	}
}

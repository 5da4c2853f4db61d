package whatsapp

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"go.mau.fi/whatsmeow/types"
)

// TestStoreFixtureOpens: a device store written by an earlier release opens
// with this one and keeps its linked device: whatsmeow upgrades its schema
// in place. testdata/whatsmeow-v11.db was written by wagraph built with
// whatsmeow v0.0.0-20251217143725-11cf47c62d32 (store schema v11): `make
// sandbox`, one session linked by the simulated phone 4915550123456 (the
// README's walk-through, steps 1-3), then a clean stop.
func TestStoreFixtureOpens(t *testing.T) {
	t.Parallel()
	src, err := os.Open("testdata/whatsmeow-v11.db")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	path := filepath.Join(t.TempDir(), "whatsmeow.db")
	dst, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}

	c, err := OpenStore(t.Context(), path, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("open the earlier release's store: %v", err)
	}
	defer c.Close()
	devs, err := c.GetAllDevices(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := types.NewADJID("4915550123456", 0, 1)
	if len(devs) != 1 || devs[0].ID == nil || *devs[0].ID != want {
		t.Fatalf("devices %v; want the one linked device %s", devs, want)
	}
	dev, err := c.GetDevice(t.Context(), want)
	if err != nil || dev == nil || dev.NoiseKey == nil || dev.IdentityKey == nil {
		t.Fatalf("device %s: %v %v; want its keys", want, dev, err)
	}

	// The tables and columns of schema v12-v15 exist: the device keeps a
	// companion meta nonce (v15) and an NCT salt (v14).
	dev.CompanionMetaNonce = "nonce"
	if err := dev.Save(t.Context()); err != nil {
		t.Fatalf("save the device with a companion meta nonce: %v", err)
	}
	if err := dev.NCTSalt.PutNCTSalt(t.Context(), []byte("salt")); err != nil {
		t.Fatalf("store an NCT salt: %v", err)
	}
	again, err := c.GetDevice(t.Context(), want)
	if err != nil || again.CompanionMetaNonce != "nonce" {
		t.Fatalf("reloaded device: nonce %q, %v", again.CompanionMetaNonce, err)
	}
	if salt, err := again.NCTSalt.GetNCTSalt(t.Context()); err != nil || string(salt) != "salt" {
		t.Errorf("NCT salt %q, %v", salt, err)
	}
}

package mediastore_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/wagraph/wagraph/internal/mediastore"
)

// TestLocalHalfFilesLeftOut: a file a crash left half written (Put writes
// aside under a ".tmp-" name, then renames) is neither listed nor opened
// as kept media; what TestStores checks of both stores holds beside it.
func TestLocalHalfFilesLeftOut(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "media")
	st, err := mediastore.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Put(ctx, bytes.NewReader([]byte("kept media")))
	if err != nil {
		t.Fatal(err)
	}
	half := ".tmp-put-123"
	if err := os.WriteFile(filepath.Join(dir, half), []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	var listed []string
	if err := st.Walk(ctx, func(i mediastore.Info) error { listed = append(listed, i.SHA256); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(listed) != 1 || listed[0] != info.SHA256 {
		t.Errorf("Walk: %v, want [%s] alone", listed, info.SHA256)
	}
	if _, _, err := st.Open(ctx, half); err == nil {
		t.Errorf("Open(%q) opened a half-written file", half)
	}
}

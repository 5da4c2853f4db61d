package mediastore

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"

	"github.com/wagraph/wagraph/internal/fault"
)

// checked is what check uses of a store.
type checked interface {
	Put(ctx context.Context, r io.Reader) (Info, error)
	Open(ctx context.Context, sum string) (Object, Info, error)
	Delete(ctx context.Context, sum string) error
}

// check puts a probe of random bytes through st's own methods (the S3
// store's: a bucket has no place aside), reads it back whole and deletes
// it. Random, so that its name is no kept file's: deleting it never
// deletes media.
func check(ctx context.Context, st checked) error {
	probe := make([]byte, 64)
	rand.Read(probe)
	info, err := st.Put(ctx, bytes.NewReader(probe))
	if err != nil {
		return fmt.Errorf("write a probe: %w", err)
	}
	obj, _, err := st.Open(ctx, info.SHA256)
	if err != nil {
		return fmt.Errorf("read the probe back: %w", err)
	}
	got, err := io.ReadAll(obj)
	obj.Close()
	if err != nil {
		return fmt.Errorf("read the probe back: %w", err)
	}
	if !bytes.Equal(got, probe) {
		return fmt.Errorf("the probe read back is not what was written (%d bytes of %d)", len(got), len(probe))
	}
	if err := st.Delete(ctx, info.SHA256); err != nil {
		return fmt.Errorf("delete the probe: %w", err)
	}
	if _, _, err := st.Open(ctx, info.SHA256); fault.CodeOf(err) != fault.NotFound {
		return fmt.Errorf("the probe is still there after its deletion (%v)", err)
	}
	return nil
}

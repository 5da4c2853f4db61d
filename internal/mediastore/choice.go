package mediastore

import (
	"context"
	"fmt"
	"io"
)

// Kind is a kind of store, as --media-store names it.
type Kind string

const (
	// KindLocal keeps files under the data directory (DirName).
	KindLocal Kind = "local"
	// KindS3 keeps them in an S3-compatible bucket.
	KindS3 Kind = "s3"
	// KindNone keeps none: media is downloaded on demand.
	KindNone Kind = "none"
)

// DirName is the local store's directory in the data directory.
const DirName = "media"

// Store is what the users of kept media (the keeper, the media route,
// doctor) need of either store.
type Store interface {
	Put(ctx context.Context, r io.Reader) (Info, error)
	Open(ctx context.Context, sum string) (Object, Info, error)
	Delete(ctx context.Context, sum string) error
	Walk(ctx context.Context, fn func(Info) error) error
	// Check writes, reads back and deletes a probe.
	Check(ctx context.Context) error
	// String names the store for logs and doctor (never a secret).
	String() string
}

// Choice is the store the settings chose.
type Choice struct {
	Kind Kind
	// Dir is the local store's directory.
	Dir string
	// S3 is the S3 store's bucket and server.
	S3 S3Config
}

// New opens the store chosen: nil, and no error, for KindNone.
func New(c Choice) (Store, error) {
	switch c.Kind {
	case KindLocal:
		st, err := NewLocal(c.Dir)
		if err != nil {
			return nil, err
		}
		return st, nil
	case KindS3:
		st, err := NewS3(c.S3)
		if err != nil {
			return nil, err
		}
		return st, nil
	case KindNone:
		return nil, nil
	}
	return nil, fmt.Errorf("media store: no store of kind %q", c.Kind)
}

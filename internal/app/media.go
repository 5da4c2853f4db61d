package app

import (
	"path/filepath"

	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/mediakeep"
	"github.com/wagraph/wagraph/internal/mediastore"
)

// mediaStore is where the received and sent media are kept (issue 37):
// the one the options give, else a mediastore.Local under the data
// directory; none (nil: media downloaded on demand only) on PostgreSQL,
// where processes may form a cluster that needs a store every process
// reaches (integrations.md §3).
func mediaStore(cfg config.Config, opts Options) (mediakeep.Store, error) {
	switch {
	case opts.MediaStore != nil:
		return opts.MediaStore, nil
	case cfg.Clustered():
		return nil, nil
	}
	return mediastore.NewLocal(filepath.Join(cfg.DataDir, "media"))
}

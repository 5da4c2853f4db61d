package app_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/app"
	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/mediastore"
	"github.com/wagraph/wagraph/internal/mediastore/s3test"
)

// TestMediaStoreChosen: the server opens the store --media-store names:
// files under <data-dir>/media, the S3 bucket (credentials from the AWS
// variables; none stop the start, naming them), or none.
func TestMediaStoreChosen(t *testing.T) {
	endpoint, bucket := s3test.Start(t)
	tests := []struct {
		name  string
		media config.MediaStore
		check func(t *testing.T, cfg config.Config, st mediastore.Store)
	}{
		{"local", config.MediaStore{Kind: config.MediaLocal}, func(t *testing.T, cfg config.Config, st mediastore.Store) {
			l, ok := st.(*mediastore.Local)
			if !ok || l.Dir() != filepath.Join(cfg.DataDir, "media") {
				t.Fatalf("store %v, want the local one under %s/media", st, cfg.DataDir)
			}
		}},
		{"s3", config.MediaStore{Kind: config.MediaS3, Bucket: bucket, Prefix: "kept", Endpoint: endpoint, Region: s3test.Region},
			func(t *testing.T, _ config.Config, st mediastore.Store) {
				if _, ok := st.(*mediastore.S3); !ok || st.String() != "s3://"+bucket+"/kept at "+endpoint {
					t.Fatalf("store %v, want the bucket's", st)
				}
			}},
		{"none", config.MediaStore{Kind: config.MediaNone}, func(t *testing.T, _ config.Config, st mediastore.Store) {
			if st != nil {
				t.Fatalf("store %v, want none", st)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := apptest.Config(t)
			cfg.Media = tt.media
			a, err := app.New(context.Background(), cfg, app.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			var st mediastore.Store // what the keeper was given: --media-store's whole store
			if kept := a.MediaStore(); kept != nil {
				st = kept.(mediastore.Store)
			}
			tt.check(t, cfg, st)
			if st != nil {
				if err := st.Check(context.Background()); err != nil {
					t.Errorf("Check: %v", err)
				}
			}
		})
	}
	t.Run("s3 without credentials", func(t *testing.T) {
		t.Setenv("AWS_ACCESS_KEY_ID", "")
		cfg := apptest.Config(t)
		cfg.Media = config.MediaStore{Kind: config.MediaS3, Bucket: bucket, Endpoint: endpoint}
		a, err := app.New(context.Background(), cfg, app.Options{})
		if err == nil {
			a.Close()
			t.Fatal("the server started without S3 credentials")
		}
		if !strings.Contains(err.Error(), "AWS_ACCESS_KEY_ID") {
			t.Errorf("error %q does not name AWS_ACCESS_KEY_ID", err)
		}
	})
}

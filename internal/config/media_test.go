package config_test

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/config"
)

const pgURL = "postgres://u:p@db:5432/wg"

// TestMediaStoreByDatabase: the store's default follows the database
// (local on SQLite, none on PostgreSQL); the settings are checked
// together: local refused in a cluster, an endpoint without an S3 store,
// kept-media settings without a store; the region comes from AWS_REGION.
func TestMediaStoreByDatabase(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    config.MediaStore
		problem []string // the refusal's words; nil: accepted
		flag    string   // the setting the refusal names
	}{
		{name: "sqlite default", want: config.MediaStore{Kind: config.MediaLocal, MaxSize: 64 << 20}},
		{name: "postgres default", args: []string{"--database-url", pgURL},
			want: config.MediaStore{Kind: config.MediaNone, MaxSize: 64 << 20}},
		{name: "postgres with s3", args: []string{"--database-url", pgURL, "--media-store", "s3://wa-media/prod",
			"--media-s3-endpoint", "http://minio:9000", "--media-keep", "image,document", "--media-retention", "720h"},
			env: map[string]string{"AWS_REGION": "eu-west-3", "AWS_DEFAULT_REGION": "us-east-2"},
			want: config.MediaStore{Kind: config.MediaS3, Bucket: "wa-media", Prefix: "prod", Endpoint: "http://minio:9000",
				Region: "eu-west-3", Keep: []string{"image", "document"}, MaxSize: 64 << 20, Retention: 720 * 3600e9}},
		{name: "the default region", args: []string{"--media-store", "s3://wa-media"},
			env:  map[string]string{"AWS_DEFAULT_REGION": "us-east-2"},
			want: config.MediaStore{Kind: config.MediaS3, Bucket: "wa-media", Region: "us-east-2", MaxSize: 64 << 20}},
		{name: "no region read for a local store", env: map[string]string{"AWS_REGION": "eu-west-3"},
			want: config.MediaStore{Kind: config.MediaLocal, MaxSize: 64 << 20}},
		{name: "none kept on sqlite", args: []string{"--media-store", "none", "--media-keep", "none"},
			want: config.MediaStore{Kind: config.MediaNone, Keep: []string{}, MaxSize: 64 << 20}},
		{name: "local given with postgres", args: []string{"--database-url", pgURL, "--media-store", "local"}, flag: "media-store",
			problem: []string{`--media-store "local"`, "cluster need a store every one of them reaches", "s3://bucket/prefix", "none"}},
		{name: "local from the env with postgres", args: []string{"--database-url", pgURL},
			env: map[string]string{"WAGRAPH_MEDIA_STORE": "local"}, flag: "media-store",
			problem: []string{`WAGRAPH_MEDIA_STORE="local"`, "s3://bucket/prefix"}},
		{name: "an endpoint without s3", args: []string{"--media-s3-endpoint", "http://minio:9000"}, flag: "media-s3-endpoint",
			problem: []string{"an endpoint is for an S3 store", "--media-store s3://bucket/prefix"}},
		{name: "kinds kept without a store", args: []string{"--database-url", pgURL, "--media-keep", "image"}, flag: "media-keep",
			problem: []string{"--media-store is none", "s3://bucket/prefix"}},
		{name: "a retention without a store", args: []string{"--media-store", "none"},
			env: map[string]string{"WAGRAPH_MEDIA_RETENTION": "24h"}, flag: "media-retention",
			problem: []string{"WAGRAPH_MEDIA_RETENTION=", "--media-store is none"}},
		{name: "a size without a store", args: []string{"--media-store", "none", "--media-max-size", "1MiB"}, flag: "media-max-size",
			problem: []string{"--media-max-size", "--media-store is none"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.Load(tt.args, env(tt.env), io.Discard)
			if tt.problem == nil {
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(c.Media, tt.want) {
					t.Errorf("Media = %+v, want %+v", c.Media, tt.want)
				}
				return
			}
			var ce *config.Error
			if !errors.As(err, &ce) || ce.Flag != tt.flag {
				t.Fatalf("Load: %v, want a refusal of --%s", err, tt.flag)
			}
			for _, w := range tt.problem {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q does not say %q", err, w)
				}
			}
		})
	}
}

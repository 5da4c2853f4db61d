package mediastore_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/mediastore"
	"github.com/wagraph/wagraph/internal/mediastore/s3test"
)

// TestS3Credentials: the S3 store signs with the credentials of the
// standard AWS variables and keeps its objects as <prefix>/<sha256>; a
// wrong secret, an unknown key or a missing bucket is an error that says
// which, and never holds the secret; no credentials at all stop NewS3.
func TestS3Credentials(t *testing.T) {
	ctx := context.Background()
	srv := s3test.StartServer(t)
	open := func(t *testing.T, bucket string) *mediastore.S3 {
		st, err := mediastore.NewS3(mediastore.S3Config{Bucket: bucket, Prefix: "/wa/media/", Endpoint: srv.Endpoint,
			Region: s3test.Region, SpoolDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}

	if got, want := strings.Join(srv.Args("wa/media"), " "), "--media-store s3://wagraph-media/wa/media --media-s3-endpoint "+srv.Endpoint; got != want {
		t.Errorf("Args: %q, want %q", got, want)
	}
	t.Run("from the environment", func(t *testing.T) {
		info, err := open(t, srv.Bucket).Put(ctx, strings.NewReader("kept"))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := srv.Keys(t, ""), []string{"wa/media/" + info.SHA256}; !slices.Equal(got, want) {
			t.Errorf("the bucket holds %v, want %v", got, want)
		}
	})
	refusals := []struct {
		name, env, value string
		want             []string
	}{
		{"a wrong secret", "AWS_SECRET_ACCESS_KEY", "not-the-secret-0123456789", []string{"SignatureDoesNotMatch"}},
		{"an unknown key", "AWS_ACCESS_KEY_ID", "AKIAUNKNOWN", []string{"InvalidAccessKeyId"}},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(tt.env, tt.value)
			st := open(t, srv.Bucket)
			// A HEAD's refusal has no body to say why (S3 answers 403
			// alone): the error names the variables; a GET's names the
			// code too.
			_, putErr := st.Put(ctx, strings.NewReader("refused"))
			walkErr := st.Walk(ctx, func(mediastore.Info) error { return nil })
			for _, err := range []error{putErr, walkErr} {
				if err == nil {
					t.Fatal("a call with wrong credentials succeeded")
				}
				for _, w := range []string{"refused the credentials", "check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY", "s3://wagraph-media/wa/media"} {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
				for _, secret := range []string{srv.Secret, "not-the-secret-0123456789"} {
					if strings.Contains(err.Error(), secret) || strings.Contains(st.String(), secret) {
						t.Errorf("the secret is in %q / %q", err, st)
					}
				}
			}
			for _, w := range tt.want {
				if !strings.Contains(walkErr.Error(), w) {
					t.Errorf("error %q does not say %q", walkErr, w)
				}
			}
			if err := st.Check(ctx); err == nil || !strings.Contains(err.Error(), "refused the credentials") {
				t.Errorf("Check: %v, want the refusal", err)
			}
		})
	}
	t.Run("a missing bucket", func(t *testing.T) {
		err := open(t, "no-such-bucket").Check(ctx)
		if err == nil || !strings.Contains(err.Error(), `the bucket "no-such-bucket" does not exist`) {
			t.Errorf("Check: %v, want the bucket named", err)
		}
	})
	t.Run("no credentials", func(t *testing.T) {
		t.Setenv("AWS_ACCESS_KEY_ID", "")
		t.Setenv("AWS_ACCESS_KEY", "")
		_, err := mediastore.NewS3(mediastore.S3Config{Bucket: srv.Bucket, Endpoint: srv.Endpoint})
		if err == nil || !strings.Contains(err.Error(), "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY") {
			t.Errorf("NewS3 without credentials: %v", err)
		}
	})
}

// TestParseEndpoint: --media-s3-endpoint is a server's URL or host:port,
// never a path or credentials.
func TestParseEndpoint(t *testing.T) {
	for _, tt := range []struct {
		in     string
		host   string
		secure bool
		bad    bool
	}{
		{"", "s3.amazonaws.com", true, false},
		{"http://minio:9000", "minio:9000", false, false},
		{"https://s3.example.com/", "s3.example.com", true, false},
		{"minio.internal:9000", "minio.internal:9000", true, false},
		{"http://minio:9000/bucket", "", false, true},
		{"ftp://minio:9000", "", false, true},
		{"http://user:pw@minio:9000", "", false, true},
		{"http://", "", false, true},
	} {
		host, secure, err := mediastore.ParseEndpoint(tt.in)
		if (err != nil) != tt.bad || host != tt.host || secure != tt.secure {
			t.Errorf("ParseEndpoint(%q) = %q, %v, %v", tt.in, host, secure, err)
		}
	}
}

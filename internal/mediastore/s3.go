package mediastore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/wagraph/wagraph/internal/fault"
)

// S3Config says where an S3 store keeps its files. The credentials are not
// in it: they come from the standard AWS environment variables
// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN), read by
// the client, so that the secret is in no value a log line could print.
type S3Config struct {
	Bucket string
	// Prefix is put before every key ("media" keeps files as media/<sha256>);
	// "" keeps them at the bucket's top.
	Prefix string
	// Endpoint is an S3-compatible server's URL (http://minio:9000,
	// https://s3.example); a bare host:port means https; "" is AWS.
	Endpoint string
	// Region is the bucket's region (AWS_REGION); "" lets the client ask
	// the server.
	Region string
	// SpoolDir is where Put writes a file aside while hashing it, before
	// the upload; "" is the system's temporary directory.
	SpoolDir string
	// AccessKey and SecretKey, when given, are the credentials, for a
	// test's own server (s3test.Server.Store) in a test that runs beside
	// others; a server's settings never set them: its credentials are the
	// standard AWS environment variables.
	AccessKey, SecretKey string
}

// URL is the store as --media-store names it: s3://bucket/prefix.
func (c S3Config) URL() string {
	if c.Prefix == "" {
		return "s3://" + c.Bucket
	}
	return "s3://" + c.Bucket + "/" + c.Prefix
}

// S3 keeps files in an S3-compatible bucket, as objects named
// <prefix>/<sha256>: every process of a cluster reaches it.
type S3 struct {
	cfg    S3Config
	prefix string // cfg.Prefix with its trailing slash, or ""
	client *minio.Client
}

// ParseEndpoint reads an S3 endpoint as --media-s3-endpoint takes it: an
// http:// or https:// URL of a host (and port) without a path, or a bare
// host:port (https); "" is AWS. It returns the host and whether the
// connection is TLS.
func ParseEndpoint(endpoint string) (host string, secure bool, err error) {
	if endpoint == "" {
		return "s3.amazonaws.com", true, nil
	}
	raw := endpoint
	if !strings.Contains(raw, "://") {
		raw = "https://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return "", false, fmt.Errorf("want an endpoint such as http://minio:9000 or https://s3.example.com (a host and port, no path or credentials)")
	}
	return u.Host, u.Scheme == "https", nil
}

// NewS3 returns a store of objects in cfg.Bucket under cfg.Prefix. It
// reaches no server: a bucket missing or credentials refused are told by
// the first call (and by Check, which `wagraph doctor` runs). Credentials
// missing from the environment are an error here.
func NewS3(cfg S3Config) (*S3, error) {
	cfg.Prefix = strings.Trim(cfg.Prefix, "/")
	host, secure, err := ParseEndpoint(cfg.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("media store %s: --media-s3-endpoint %q: %w", cfg.URL(), cfg.Endpoint, err)
	}
	creds := credentials.NewEnvAWS()
	if cfg.AccessKey != "" {
		creds = credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, "")
	}
	v, err := creds.Get()
	if err != nil || v.AccessKeyID == "" || v.SecretAccessKey == "" {
		return nil, fmt.Errorf("media store %s: no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary ones)", cfg.URL())
	}
	client, err := minio.New(host, &minio.Options{
		Creds:  creds,
		Secure: secure,
		Region: cfg.Region,
	})
	if err != nil {
		return nil, fmt.Errorf("media store %s: %w", cfg.URL(), err)
	}
	s := &S3{cfg: cfg, client: client}
	if cfg.Prefix != "" {
		s.prefix = cfg.Prefix + "/"
	}
	return s, nil
}

// String names the store (never its credentials).
func (s *S3) String() string {
	if s.cfg.Endpoint == "" {
		return s.cfg.URL()
	}
	return s.cfg.URL() + " at " + s.cfg.Endpoint
}

func (s *S3) key(sum string) string { return s.prefix + sum }

// Put reads r to its end and keeps its bytes under their SHA-256. The
// bytes are written to a file aside while they are hashed, then uploaded
// from it with their size known: the object's name is the hash, known only
// at the end, and S3 has no rename; a file is never held in memory, and an
// upload of known size streams it part by part (an upload of unknown size
// buffers whole parts). Bytes already kept are not uploaded again: the
// object is copied onto itself, which renews its time, so that retention
// counts from the newest use as it does for a local file.
func (s *S3) Put(ctx context.Context, r io.Reader) (Info, error) {
	tmp, err := os.CreateTemp(s.cfg.SpoolDir, ".tmp-s3put-*")
	if err != nil {
		return Info{}, fmt.Errorf("media store %s: spool: %w", s, err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), readerCtx{ctx, r})
	if err != nil {
		return Info{}, fmt.Errorf("media store %s: spool: %w", s, err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	key := s.key(sum)
	if st, err := s.client.StatObject(ctx, s.cfg.Bucket, key, minio.StatObjectOptions{}); err == nil && st.Size == n {
		if _, err := s.client.CopyObject(ctx,
			minio.CopyDestOptions{Bucket: s.cfg.Bucket, Object: key, ReplaceMetadata: true,
				UserMetadata: map[string]string{"Kept": time.Now().UTC().Format(time.RFC3339)}},
			minio.CopySrcOptions{Bucket: s.cfg.Bucket, Object: key}); err != nil {
			return Info{}, s.fail("renew", err)
		}
		return s.stat(ctx, sum)
	} else if err != nil && !notFound(err) {
		return Info{}, s.fail("stat", err)
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return Info{}, fmt.Errorf("media store %s: spool: %w", s, err)
	}
	if _, err := s.client.PutObject(ctx, s.cfg.Bucket, key, tmp, n, minio.PutObjectOptions{
		ContentType: "application/octet-stream",
		// Over plain HTTP the client signs the body chunk by chunk; an
		// empty body so signed goes out without a Content-Length, which
		// S3 refuses (MissingContentLength): none to sign, sign none.
		DisableContentSha256: n == 0,
	}); err != nil {
		return Info{}, s.fail("upload", err)
	}
	return s.stat(ctx, sum)
}

func (s *S3) stat(ctx context.Context, sum string) (Info, error) {
	st, err := s.client.StatObject(ctx, s.cfg.Bucket, s.key(sum), minio.StatObjectOptions{})
	if err != nil {
		return Info{}, s.fail("stat", err)
	}
	return Info{SHA256: sum, Size: st.Size, ModTime: st.LastModified}, nil
}

// Open opens the object kept under sum; NOT_FOUND when there is none. The
// object reads lazily, a ranged request from where it was sought to: a
// Range answer never downloads the whole file.
func (s *S3) Open(ctx context.Context, sum string) (Object, Info, error) {
	if !validSum(sum) {
		return nil, Info{}, fault.New(fault.NotFound, "no kept media %q", sum)
	}
	obj, err := s.client.GetObject(ctx, s.cfg.Bucket, s.key(sum), minio.GetObjectOptions{})
	if err != nil {
		return nil, Info{}, s.fail("open", err)
	}
	st, err := obj.Stat()
	if err != nil {
		obj.Close()
		if notFound(err) {
			return nil, Info{}, fault.New(fault.NotFound, "no kept media %s", sum)
		}
		return nil, Info{}, s.fail("open", err)
	}
	return obj, Info{SHA256: sum, Size: st.Size, ModTime: st.LastModified}, nil
}

// Delete removes the object kept under sum; one already gone is no error
// (S3 answers a delete of no object with success).
func (s *S3) Delete(ctx context.Context, sum string) error {
	if !validSum(sum) {
		return nil
	}
	if err := s.client.RemoveObject(ctx, s.cfg.Bucket, s.key(sum), minio.RemoveObjectOptions{}); err != nil && !notFound(err) {
		return s.fail("delete", err)
	}
	return nil
}

// Walk calls fn for each kept object (those named by a SHA-256 right
// under the prefix), in no particular order, until fn returns an error
// (returned) or the listing ends.
func (s *S3) Walk(ctx context.Context, fn func(Info) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the listing when fn ends it early
	for o := range s.client.ListObjects(ctx, s.cfg.Bucket, minio.ListObjectsOptions{Prefix: s.prefix}) {
		if o.Err != nil {
			return s.fail("list", o.Err)
		}
		name := strings.TrimPrefix(o.Key, s.prefix)
		if !validSum(name) {
			continue
		}
		if err := fn(Info{SHA256: name, Size: o.Size, ModTime: o.LastModified}); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// Check writes a small probe, reads it back and deletes it: the store
// takes files and gives them back (`wagraph doctor`).
func (s *S3) Check(ctx context.Context) error { return check(ctx, s) }

// fail words an S3 error: a refusal of the credentials says which
// variables to look at (never their values), a missing bucket says so.
func (s *S3) fail(op string, err error) error {
	var resp minio.ErrorResponse
	if errors.As(err, &resp) {
		switch resp.Code {
		case "SignatureDoesNotMatch", "InvalidAccessKeyId", "InvalidToken", "ExpiredToken", "AccessDenied":
			return fmt.Errorf("media store %s: %s: the S3 server refused the credentials (%s): check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN: %w", s, op, resp.Code, err)
		case "NoSuchBucket":
			return fmt.Errorf("media store %s: %s: the bucket %q does not exist: create it (wagraph does not): %w", s, op, s.cfg.Bucket, err)
		}
	}
	return fmt.Errorf("media store %s: %s: %w", s, op, err)
}

func notFound(err error) bool {
	var resp minio.ErrorResponse
	return errors.As(err, &resp) && (resp.Code == "NoSuchKey" || resp.StatusCode == http.StatusNotFound && resp.Code != "NoSuchBucket")
}

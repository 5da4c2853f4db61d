// Package s3test serves a real S3-protocol server (gofakes3, in memory)
// over HTTP for tests, so that the S3 media store and the scenarios built
// on it (the keeper, the media route, doctor) run against the protocol
// itself rather than a stand-in of our own code. gofakes3 checks no
// signatures; the server here does (AWS Signature Version 4, the one the
// client uses), so that a wrong secret is refused as S3 refuses it.
//
// Only tests import this package: gofakes3 stays out of wagraph's binary.
package s3test

import (
	"bufio"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/minio/minio-go/v7/pkg/s3utils"

	"github.com/wagraph/wagraph/internal/mediastore"
)

// Region is the region the server signs in and Start sets in AWS_REGION.
const Region = "us-east-1"

// Server is a running S3-protocol server with one bucket.
type Server struct {
	// Endpoint is its URL (http://127.0.0.1:port), for --media-s3-endpoint.
	Endpoint string
	// Bucket exists, empty at the start.
	Bucket string
	// AccessKey and Secret are the only credentials it accepts.
	AccessKey, Secret string
	backend           *s3mem.Backend
}

// Start serves an S3 server for the test's length and sets the standard
// AWS environment variables (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_REGION; AWS_SESSION_TOKEN empty) to its credentials, as an operator
// would: the test cannot be parallel. It returns the endpoint and the
// bucket (s3://<bucket>/prefix for --media-store).
func Start(t testing.TB) (endpoint, bucket string) {
	s := StartServer(t)
	return s.Endpoint, s.Bucket
}

// StartServer is Start returning the whole Server.
func StartServer(t testing.TB) *Server {
	t.Helper()
	s := Serve(t)
	t.Setenv("AWS_ACCESS_KEY_ID", s.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s.Secret)
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_REGION", Region)
	return s
}

// Serve serves an S3 server for the test's length, leaving the
// environment alone (the test may be parallel): its Store is a store of
// it with the credentials given.
func Serve(t testing.TB) *Server {
	t.Helper()
	s := &Server{Bucket: "wagraph-media", AccessKey: "AKIAWAGRAPHTEST", Secret: randomSecret(), backend: s3mem.New()}
	if err := s.backend.CreateBucket(s.Bucket); err != nil {
		t.Fatal(err)
	}
	faker := gofakes3.New(s.backend, gofakes3.WithLogger(gofakes3.DiscardLog()))
	srv := httptest.NewServer(s.signed(faker.Server()))
	t.Cleanup(srv.Close)
	s.Endpoint = srv.URL
	return s
}

// Store is a store of the server's bucket under prefix, with its
// credentials given rather than read from the environment.
func (s *Server) Store(t testing.TB, prefix string) *mediastore.S3 {
	t.Helper()
	st, err := mediastore.NewS3(mediastore.S3Config{Bucket: s.Bucket, Prefix: prefix, Endpoint: s.Endpoint, Region: Region,
		AccessKey: s.AccessKey, SecretKey: s.Secret})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// Args are the settings of a server keeping its media in this bucket under
// prefix: --media-store s3://<bucket>/<prefix> --media-s3-endpoint <endpoint>.
func (s *Server) Args(prefix string) []string {
	store := "s3://" + s.Bucket
	if prefix != "" {
		store += "/" + prefix
	}
	return []string{"--media-store", store, "--media-s3-endpoint", s.Endpoint}
}

// Keys lists the keys in the bucket that start with prefix: what is there,
// seen from the server's side.
func (s *Server) Keys(t testing.TB, prefix string) []string {
	t.Helper()
	list, err := s.backend.ListBucket(s.Bucket, &gofakes3.Prefix{Prefix: prefix, HasPrefix: true}, gofakes3.ListBucketPage{})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, c := range list.Contents {
		keys = append(keys, c.Key)
	}
	sort.Strings(keys)
	return keys
}

func randomSecret() string {
	b := make([]byte, 20)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// signed lets through the requests signed with the server's credentials
// and answers the others as S3 does: 403 with InvalidAccessKeyId or
// SignatureDoesNotMatch.
func (s *Server) signed(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if code, msg := s.verify(r); code != "" {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>%s</Message><Resource>%s</Resource></Error>`,
				code, msg, r.URL.Path)
			return
		}
		if r.Header.Get("X-Amz-Content-Sha256") == streamingPayload {
			// gofakes3 decodes a signed stream's chunks in a single PUT
			// only: a multipart upload's parts (minio-go's for files past
			// 16 MiB over plain HTTP) it would keep framed, with the
			// framed length. Decoded here, as S3 and MinIO decode them.
			n, err := strconv.ParseInt(r.Header.Get("X-Amz-Decoded-Content-Length"), 10, 64)
			if err != nil {
				http.Error(w, "X-Amz-Decoded-Content-Length: "+err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(&unchunked{r: bufio.NewReader(r.Body)})
			r.ContentLength = n
			r.Header.Set("Content-Length", strconv.FormatInt(n, 10))
			r.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
		}
		next.ServeHTTP(w, r)
	})
}

// streamingPayload is the X-Amz-Content-Sha256 of a body sent as signed
// chunks (aws-chunked): "<hex size>;chunk-signature=<sig>\r\n<data>\r\n"
// each, a chunk of size 0 last.
const streamingPayload = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"

// unchunked reads the data of a signed stream's chunks (their signatures
// are not checked: the request's own was).
type unchunked struct {
	r    *bufio.Reader
	left int64 // of the current chunk
	done bool
}

func (u *unchunked) Read(p []byte) (int, error) {
	for u.left == 0 {
		if u.done {
			return 0, io.EOF
		}
		line, err := u.r.ReadString('\n')
		if err != nil {
			return 0, fmt.Errorf("aws-chunked: %w", err)
		}
		size, _, _ := strings.Cut(strings.TrimSpace(line), ";")
		if size == "" { // the CRLF after a chunk's data
			continue
		}
		n, err := strconv.ParseInt(size, 16, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("aws-chunked: chunk size %q", size)
		}
		u.left, u.done = n, n == 0
	}
	if int64(len(p)) > u.left {
		p = p[:u.left]
	}
	n, err := u.r.Read(p)
	u.left -= int64(n)
	if err == io.EOF && u.left > 0 {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// verify checks r's Signature Version 4 header against the secret; it
// returns an S3 error code and message, or "" when the signature holds.
func (s *Server) verify(r *http.Request) (code, msg string) {
	const alg = "AWS4-HMAC-SHA256 "
	auth := r.Header.Get("Authorization")
	if !strings.HasPrefix(auth, alg) {
		return "AccessDenied", "Access Denied (no AWS4-HMAC-SHA256 signature)"
	}
	fields := map[string]string{}
	for _, f := range strings.Split(strings.TrimPrefix(auth, alg), ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(f), "=")
		fields[k] = v
	}
	cred := strings.Split(fields["Credential"], "/") // key/date/region/service/aws4_request
	if len(cred) != 5 || cred[4] != "aws4_request" {
		return "AuthorizationHeaderMalformed", "the Credential is malformed"
	}
	if cred[0] != s.AccessKey {
		return "InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records."
	}
	signed := strings.Split(fields["SignedHeaders"], ";")
	var canonHeaders strings.Builder
	for _, h := range signed {
		var v string
		switch h {
		case "host":
			v = r.Host
		case "content-length":
			v = r.Header.Get("Content-Length")
			if v == "" {
				v = strconv.FormatInt(r.ContentLength, 10)
			}
		default:
			vals := r.Header.Values(h)
			for i := range vals {
				vals[i] = strings.Join(strings.Fields(vals[i]), " ")
			}
			v = strings.Join(vals, ",")
		}
		canonHeaders.WriteString(h + ":" + v + "\n")
	}
	payload := r.Header.Get("X-Amz-Content-Sha256")
	if payload == "" {
		payload = "UNSIGNED-PAYLOAD"
	}
	canonical := strings.Join([]string{
		r.Method,
		s3utils.EncodePath(r.URL.Path),
		strings.ReplaceAll(r.URL.Query().Encode(), "+", "%20"),
		canonHeaders.String(),
		fields["SignedHeaders"],
		payload,
	}, "\n")
	scope := strings.Join(cred[1:], "/")
	sum := sha256.Sum256([]byte(canonical))
	toSign := "AWS4-HMAC-SHA256\n" + r.Header.Get("X-Amz-Date") + "\n" + scope + "\n" + hex.EncodeToString(sum[:])
	key := []byte("AWS4" + s.Secret)
	for _, part := range cred[1:] {
		key = mac(key, part)
	}
	if want := hex.EncodeToString(mac(key, toSign)); !hmac.Equal([]byte(want), []byte(fields["Signature"])) {
		return "SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided. Check your key and signing method."
	}
	return "", ""
}

func mac(key []byte, data string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(data))
	return h.Sum(nil)
}

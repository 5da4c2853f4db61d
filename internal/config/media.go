package config

import (
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/wagraph/wagraph/internal/mediastore"
)

// The kinds of --media-store: local is SQLite's default, none
// PostgreSQL's.
const (
	MediaLocal = mediastore.KindLocal
	MediaS3    = mediastore.KindS3
	MediaNone  = mediastore.KindNone
)

// MediaKinds are the kinds of media --media-keep names (a voice note is
// audio), in the order the help lists them; internal/mediakeep tells a
// message's kind (its test holds the two together).
func MediaKinds() []string { return []string{"image", "audio", "document", "video", "sticker"} }

// MediaStore is what the --media-* settings say of kept media
// (integrations.md §3).
type MediaStore struct {
	Kind mediastore.Kind
	// Bucket and Prefix are the S3 store's (s3://bucket/prefix); Prefix
	// has no leading or trailing slash.
	Bucket, Prefix string
	// Endpoint is --media-s3-endpoint ("" is AWS); Region is AWS_REGION
	// (or AWS_DEFAULT_REGION). The credentials stay in the environment,
	// out of this struct: nothing here is a secret.
	Endpoint, Region string
	// Keep are the kinds kept when they arrive (MediaKinds): nil keeps all
	// of them, empty and not nil none.
	Keep []string
	// MaxSize skips media larger than this many bytes.
	MaxSize int64
	// Retention removes kept files older than this; 0 keeps them forever.
	Retention time.Duration
}

// String names the store as --media-store does (never a secret).
func (m MediaStore) String() string {
	if m.Kind != MediaS3 {
		return string(m.Kind)
	}
	return mediastore.S3Config{Bucket: m.Bucket, Prefix: m.Prefix}.URL()
}

// Choice is the store to open: a local one in dataDir.
func (m MediaStore) Choice(dataDir string) mediastore.Choice {
	return mediastore.Choice{Kind: m.Kind, Dir: filepath.Join(dataDir, mediastore.DirName), S3: mediastore.S3Config{
		Bucket: m.Bucket, Prefix: m.Prefix, Endpoint: m.Endpoint, Region: m.Region,
	}}
}

// Bounds of --media-max-size and --media-retention.
const (
	MaxMediaSize         = 4 << 30
	MinMediaRetention    = time.Hour
	DefaultMediaMaxSize  = 64 << 20
	mediaStoreShownValue = "local; none with --database-url"
)

// bucketName is S3's rule for a bucket's name (the DNS-compatible one).
var bucketName = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)

func parseMediaStore(c *Config, v string) string {
	v = strings.TrimSpace(v)
	c.Media.Kind, c.Media.Bucket, c.Media.Prefix = "", "", ""
	switch v {
	case "": // decided by checkMedia, once the database is known
		return ""
	case string(MediaLocal), string(MediaNone):
		c.Media.Kind = mediastore.Kind(v)
		return ""
	}
	u, err := url.Parse(v)
	if err != nil || u.Scheme != "s3" {
		return "want local, none, or s3://bucket/prefix"
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Port() != "" {
		return "want s3://bucket/prefix, without credentials, port or query (the endpoint is --media-s3-endpoint, the credentials AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)"
	}
	if !bucketName.MatchString(u.Host) || strings.Contains(u.Host, "..") {
		return fmt.Sprintf("the bucket %q is not an S3 bucket name (3 to 63 lower-case letters, digits, dots and hyphens)", u.Host)
	}
	prefix := strings.Trim(u.Path, "/")
	if prefix != "" {
		for _, seg := range strings.Split(prefix, "/") {
			if seg == "" || seg == "." || seg == ".." {
				return fmt.Sprintf("the prefix %q has an empty, . or .. part", prefix)
			}
		}
	}
	c.Media.Kind, c.Media.Bucket, c.Media.Prefix = MediaS3, u.Host, prefix
	return ""
}

func parseMediaS3Endpoint(c *Config, v string) string {
	v = strings.TrimSpace(v)
	if _, _, err := mediastore.ParseEndpoint(v); err != nil {
		return err.Error()
	}
	c.Media.Endpoint = v
	return ""
}

func parseMediaKeep(c *Config, v string) string {
	switch v = strings.ToLower(strings.TrimSpace(v)); v {
	case "all":
		c.Media.Keep = nil
		return ""
	case "none":
		c.Media.Keep = []string{}
		return ""
	}
	keep := []string{}
	for _, k := range strings.Split(v, ",") {
		k = strings.TrimSpace(k)
		if !slices.Contains(MediaKinds(), k) {
			return fmt.Sprintf("%q is not a kind of media: want all, none, or a comma-separated list of %s", k, strings.Join(MediaKinds(), ","))
		}
		if !slices.Contains(keep, k) {
			keep = append(keep, k)
		}
	}
	c.Media.Keep = keep
	return ""
}

func parseMediaMaxSize(c *Config, v string) string {
	n, err := ParseSize(v)
	if err != nil {
		return err.Error() + "; must be between 1KiB and 4GiB"
	}
	if n < 1<<10 || n > MaxMediaSize {
		return "must be between 1KiB and 4GiB"
	}
	c.Media.MaxSize = n
	return ""
}

func parseMediaRetention(c *Config, v string) string {
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil {
		return "want a duration such as 2160h (90 days), or 0 to keep the files forever"
	}
	if d != 0 && (d < MinMediaRetention || d > MaxEventRetention) {
		return "must be 0 (forever) or between 1h and 87600h"
	}
	c.Media.Retention = d
	return ""
}

// checkMedia decides the store's default by the database, refuses a
// local store in a cluster (each process would keep, and serve, its own
// files), and an endpoint without an S3 store; it reads the region.
func (c *Config) checkMedia(from map[string]Source, lookup func(string) (string, bool)) *Error {
	if c.Media.Kind == "" {
		c.Media.Kind = MediaLocal
		if c.Clustered() {
			c.Media.Kind = MediaNone
		}
	}
	if c.Media.Kind == MediaLocal && c.Clustered() {
		return &Error{Flag: "media-store", Env: "WAGRAPH_MEDIA_STORE", Value: string(c.Media.Kind), From: from["media-store"],
			Problem: "with --database-url the processes of a cluster need a store every one of them reaches: use --media-store s3://bucket/prefix (with --media-s3-endpoint for MinIO and the like), or none to download media on demand"}
	}
	if c.Media.Endpoint != "" && c.Media.Kind != MediaS3 {
		return &Error{Flag: "media-s3-endpoint", Env: "WAGRAPH_MEDIA_S3_ENDPOINT", Value: c.Media.Endpoint, From: from["media-s3-endpoint"],
			Problem: "an endpoint is for an S3 store: set --media-store s3://bucket/prefix too, or leave this unset"}
	}
	if c.Media.Kind == MediaNone {
		for _, f := range []struct{ flag, env, value string }{
			{"media-keep", "WAGRAPH_MEDIA_KEEP", strings.Join(c.Media.Keep, ",")},
			{"media-max-size", "WAGRAPH_MEDIA_MAX_SIZE", FormatSize(c.Media.MaxSize)},
			{"media-retention", "WAGRAPH_MEDIA_RETENTION", c.Media.Retention.String()},
		} {
			if from[f.flag] != FromDefault && !(f.flag == "media-keep" && c.Media.Keep != nil && len(c.Media.Keep) == 0) {
				return &Error{Flag: f.flag, Env: f.env, Value: f.value, From: from[f.flag],
					Problem: "media is kept only in a store, and --media-store is none: set --media-store s3://bucket/prefix (or local, on SQLite), or leave this unset"}
			}
		}
	}
	if c.Media.Kind == MediaS3 {
		for _, name := range []string{"AWS_REGION", "AWS_DEFAULT_REGION"} {
			if v, ok := lookup(name); ok && strings.TrimSpace(v) != "" {
				c.Media.Region = strings.TrimSpace(v)
				break
			}
		}
	}
	return nil
}

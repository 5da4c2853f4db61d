// Package config holds wagraph's one typed configuration: every setting of
// `wagraph serve`, its default, how it is read from flags and the environment
// (the flag wins) and how it is validated before anything starts. A bad value
// stops the start with one line naming the setting and what is wrong with it.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/wagraph/wagraph/whatsapp"
)

// Config is everything `wagraph serve` can be told.
type Config struct {
	Addr string
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names
	// the client: requests from them are limited by that address.
	TrustedProxies []netip.Prefix
	DataDir        string
	DatabaseURL    string
	AdminToken     string
	Sandbox        bool
	// SandboxNetwork is the control address of a separately running
	// `wagraph sandbox-network`; setting it implies Sandbox.
	SandboxNetwork   string
	AllowPrivateURLs bool
	WebhookRetry     []time.Duration
	WebhookTimeout   time.Duration
	MaxBody          int64
	// BodyTimeout is how long a request's whole body may take to arrive.
	BodyTimeout time.Duration
	// GraphQLMaxAnswer caps the bytes of one GraphQL answer.
	GraphQLMaxAnswer int64
	// GraphQLComplexity and GraphQLDepth cap one GraphQL operation.
	GraphQLComplexity int
	GraphQLDepth      int
	Rate              Rate
	GeocoderURL       string
	FFmpeg            string // resolved path; empty when no converter is available
	// Quotas bound what one user or session may keep.
	Quotas Quotas
	// MediaConcurrency bounds the media work that runs at once.
	MediaConcurrency MediaConcurrency
	LogLevel         slog.Level
	LogFormat        string // "text" or "json"
	// WAVersion is where the WhatsApp Web version the sessions announce
	// comes from: auto, builtin or pinned to a 2.3000.N (the zero value is
	// auto); read and checked here, once.
	WAVersion whatsapp.VersionSetting
	// DebugAddr is the loopback address serving /debug/pprof; "" serves
	// none.
	DebugAddr string
	// EventRetention is how long stored events are kept (those with a
	// delivery still pending are kept longer).
	EventRetention time.Duration
	// NodeID is this process's name in a cluster (and in Session.owner).
	NodeID string
	// AdvertiseAddr is the host:port the other processes of a cluster
	// reach this one at (PostgreSQL only); "" is the listening address.
	AdvertiseAddr string
	// LeaseTTL is how long a session's lease holds without renewal: the
	// longest a dead process keeps its sessions from the others.
	LeaseTTL time.Duration
	// ClusterAddr is where the calls between the processes of a cluster
	// are served, on a listener of their own; "" serves them on Addr.
	ClusterAddr string
	// ClusterTLSCert, ClusterTLSKey and ClusterTLSCA are the files of the
	// cluster's TLS, all set or none; ClusterTLS is what they hold, loaded
	// and checked at start (nil: the calls are plain HTTP).
	ClusterTLSCert, ClusterTLSKey, ClusterTLSCA string
	ClusterTLS                                  *ClusterTLS
	// MCP is the MCP server for AI agents at /mcp (integrations.md §1).
	MCP MCP
	// NATS is the event stream on NATS JetStream (nats.go).
	NATS NATS
	// Media is where received media is kept (media.go).
	Media MediaStore
}

// MCP is what --mcp and --mcp-read-only say of the MCP server.
type MCP struct {
	// Enabled serves /mcp; off, /mcp is not found.
	Enabled bool
	// ReadOnly offers only the read-only tools.
	ReadOnly bool
}

// Rate is a token bucket: Per requests each second, bursting to Burst.
type Rate struct {
	Per   float64
	Burst int
}

func (r Rate) String() string {
	return strconv.FormatFloat(r.Per, 'f', -1, 64) + "/s," + strconv.Itoa(r.Burst)
}

// MediaConcurrency is how many image decodes, ffmpeg runs and downloads of
// received media run at once; more wait for a slot, then are refused with
// RATE_LIMITED.
type MediaConcurrency struct {
	Images, FFmpeg, Downloads int
}

func (m MediaConcurrency) String() string {
	return fmt.Sprintf("%d,%d,%d", m.Images, m.FFmpeg, m.Downloads)
}

// MaxMediaConcurrency bounds each number of --media-concurrency.
const MaxMediaConcurrency = 256

// MinAdminTokenLen is the shortest bootstrap admin token accepted (auth.md).
const MinAdminTokenLen = 32

// Error is a setting that cannot be used. Its text is the one line printed at
// start: it names what the user wrote, the flag, or the environment
// variable when the value came from there.
type Error struct {
	Flag, Env, Value, Problem string
	From                      Source
}

// Source is where a setting's value came from.
type Source int

const (
	// FromDefault: neither the flag nor the variable was given.
	FromDefault Source = iota
	FromFlag
	FromEnv
)

func (e *Error) Error() string {
	switch e.From {
	case FromFlag:
		return fmt.Sprintf("invalid setting --%s %q: %s", e.Flag, e.Value, e.Problem)
	case FromEnv:
		return fmt.Sprintf("invalid setting %s=%q (the environment variable of --%s): %s", e.Env, e.Value, e.Flag, e.Problem)
	}
	return fmt.Sprintf("invalid setting --%s (or %s): %s", e.Flag, e.Env, e.Problem)
}

// setting describes one flag and its environment variable.
type setting struct {
	flag, env, def, usage string
	group                 string // where the help lists it
	kind                  string // the type the help shows
	shown                 string // the default as the help shows it, when def does not read well
	secret                bool
	parse                 func(c *Config, v string) string // returns a problem, or ""
}

// The groups of `wagraph serve --help`, in the order listed.
const (
	groupServer   = "Server"
	groupStorage  = "Storage"
	groupWhatsApp = "WhatsApp"
	groupMedia    = "Media"
	groupWebhooks = "Webhooks"
	groupLimits   = "Limits"
	groupMCP      = "MCP server"
	groupCluster  = "Cluster (PostgreSQL)"
	groupStream   = "Event stream (NATS JetStream)"
	groupLogging  = "Logging & debugging"
)

func settings() []setting {
	return []setting{
		{flag: "addr", env: "WAGRAPH_ADDR", def: "127.0.0.1:8080", group: groupServer, kind: "host:port",
			usage: "listen address", parse: parseAddr},
		{flag: "trusted-proxy", env: "WAGRAPH_TRUSTED_PROXY", group: groupServer, kind: "addresses",
			usage: "reverse proxies (IP addresses or CIDR prefixes, comma-separated) whose X-Forwarded-For names the client, for the rate limit of requests without a token",
			parse: parseTrustedProxies},
		{flag: "admin-token", env: "WAGRAPH_ADMIN_TOKEN", group: groupServer, kind: "string", secret: true,
			usage: "bootstrap admin token, at least 32 characters; a changed value revokes the previous one's token",
			parse: parseAdminToken},
		{flag: "data-dir", env: "WAGRAPH_DATA_DIR", def: "./data", group: groupStorage, kind: "path",
			usage: "where the SQLite databases (and the sandbox's state) live; one wagraph at a time uses it",
			parse: parseDataDir},
		{flag: "database-url", env: "WAGRAPH_DATABASE_URL", group: groupStorage, kind: "url", secret: true,
			shown: "none: SQLite in --data-dir", usage: "a postgres:// URL moves all storage to PostgreSQL",
			parse: parseDatabaseURL},
		{flag: "event-retention", env: "WAGRAPH_EVENT_RETENTION", def: "720h", group: groupStorage, kind: "duration",
			usage: "how long stored events are kept for replay and redelivery", parse: parseEventRetention},
		{flag: "sandbox", env: "WAGRAPH_SANDBOX", def: "false", group: groupWhatsApp, kind: "bool",
			usage: "use the simulated WhatsApp network (no session reaches real WhatsApp)",
			parse: boolInto(func(c *Config) *bool { return &c.Sandbox })},
		{flag: "sandbox-network", env: "WAGRAPH_SANDBOX_NETWORK", group: groupWhatsApp, kind: "host:port",
			usage: "use the simulated network of a separate `wagraph sandbox-network` at this loopback control address (implies --sandbox)",
			parse: parseSandboxNetwork},
		{flag: "wa-version", env: "WAGRAPH_WA_VERSION", def: "auto", group: groupWhatsApp, kind: "version",
			usage: "WhatsApp Web version to announce: auto (read from WhatsApp Web at start, daily and after a refusal), builtin, or 2.3000.N",
			parse: parseWAVersion},
		{flag: "ffmpeg", env: "WAGRAPH_FFMPEG", group: groupMedia, kind: "path", shown: "ffmpeg on PATH",
			usage: "converter for voice notes and video thumbnails; none turns conversion off", parse: parseFFmpeg},
		{flag: "media-concurrency", env: "WAGRAPH_MEDIA_CONCURRENCY", def: "2,2,4", group: groupMedia, kind: "n,n,n",
			usage: "image decodes, ffmpeg runs and media downloads at once, shared fairly between users: IMAGES,FFMPEG,DOWNLOADS; more wait up to 20s, then are refused with RATE_LIMITED",
			parse: parseMediaConcurrency},
		{flag: "media-store", env: "WAGRAPH_MEDIA_STORE", group: groupMedia, kind: "store", shown: mediaStoreShownValue,
			usage: "where received media is kept, downloaded once as it arrives: local (files under --data-dir/media), s3://bucket/prefix (credentials and region from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION), or none (downloaded on demand while WhatsApp has it); a cluster cannot use local",
			parse: parseMediaStore},
		{flag: "media-s3-endpoint", env: "WAGRAPH_MEDIA_S3_ENDPOINT", group: groupMedia, kind: "url", shown: "none: AWS",
			usage: "with an s3:// store: the S3-compatible server, such as http://minio:9000", parse: parseMediaS3Endpoint},
		{flag: "media-keep", env: "WAGRAPH_MEDIA_KEEP", def: "all", group: groupMedia, kind: "kinds",
			usage: "which media is kept as it arrives: all, none, or some of image,audio,document,video,sticker (a voice note is audio)", parse: parseMediaKeep},
		{flag: "media-max-size", env: "WAGRAPH_MEDIA_MAX_SIZE", def: "64MiB", group: groupMedia, kind: "size",
			usage: "larger media is not kept (it is downloaded on demand)", parse: parseMediaMaxSize},
		{flag: "media-retention", env: "WAGRAPH_MEDIA_RETENTION", def: "0", group: groupMedia, kind: "duration", shown: "0: forever",
			usage: "kept files older than this are removed (their messages fall back to the download on demand)", parse: parseMediaRetention},
		{flag: "geocoder-url", env: "WAGRAPH_GEOCODER_URL", group: groupMedia, kind: "url",
			usage: "Nominatim-compatible search endpoint for address-only locations", parse: parseGeocoder},
		{flag: "webhook-retry", env: "WAGRAPH_WEBHOOK_RETRY", def: "0s,5s,5m,30m,2h,5h,10h,10h", group: groupWebhooks, kind: "durations",
			usage: "delays before each webhook delivery attempt", parse: parseRetry},
		{flag: "webhook-timeout", env: "WAGRAPH_WEBHOOK_TIMEOUT", def: "15s", group: groupWebhooks, kind: "duration",
			usage: "one webhook delivery attempt's limit", parse: parseWebhookTimeout},
		{flag: "allow-private-urls", env: "WAGRAPH_ALLOW_PRIVATE_URLS", def: "false", group: groupWebhooks, kind: "bool",
			shown: "false; true with --sandbox", usage: "let webhook and media URLs reach loopback and private addresses",
			parse: boolInto(func(c *Config) *bool { return &c.AllowPrivateURLs })},
		{flag: "max-body", env: "WAGRAPH_MAX_BODY", def: "64MiB", group: groupLimits, kind: "size",
			usage: "largest REST request body (the media sends'; other routes have smaller limits of their own) and largest fetched media (GraphQL bodies: 1 MiB)", parse: parseMaxBody},
		{flag: "body-timeout", env: "WAGRAPH_BODY_TIMEOUT", def: "60s", group: groupLimits, kind: "duration",
			usage: "longest time a request's whole body may take to arrive; slower bodies are cut", parse: parseBodyTimeout},
		{flag: "rate", env: "WAGRAPH_RATE", def: "20/s,100", group: groupLimits, kind: "rate",
			usage: "per-user rate limit (all of a user's tokens together): RATE/s,BURST", parse: parseRate},
		{flag: "graphql-complexity", env: "WAGRAPH_GRAPHQL_COMPLEXITY", def: "10000", group: groupLimits, kind: "int",
			usage: "largest cost of one GraphQL operation, counted before it runs: each field 1, a paged field (first, pageSize) its page size times its fields, each alias on its own",
			parse: intInto(func(c *Config) *int { return &c.GraphQLComplexity }, 10, 100_000)},
		{flag: "graphql-max-answer", env: "WAGRAPH_GRAPHQL_MAX_ANSWER", def: "16MiB", group: groupLimits, kind: "size",
			usage: "largest GraphQL answer (query or mutation); a larger one is replaced by a PAYLOAD_TOO_LARGE error",
			parse: parseMaxAnswer},
		{flag: "graphql-depth", env: "WAGRAPH_GRAPHQL_DEPTH", def: "15", group: groupLimits, kind: "int",
			usage: "deepest nesting of fields in one GraphQL operation",
			parse: intInto(func(c *Config) *int { return &c.GraphQLDepth }, 3, 100)},
		{flag: "max-sessions-per-user", env: "WAGRAPH_MAX_SESSIONS_PER_USER", def: "100", group: groupLimits, kind: "int",
			usage: "sessions a user who is not an admin may have",
			parse: intInto(func(c *Config) *int { return &c.Quotas.SessionsPerUser }, 1, 100_000)},
		{flag: "max-webhooks-per-session", env: "WAGRAPH_MAX_WEBHOOKS_PER_SESSION", def: "25", group: groupLimits, kind: "int",
			usage: "webhooks of one session (each event is delivered to each)",
			parse: intInto(func(c *Config) *int { return &c.Quotas.WebhooksPerSession }, 1, 1000)},
		{flag: "max-tokens-per-session", env: "WAGRAPH_MAX_TOKENS_PER_SESSION", def: "50", group: groupLimits, kind: "int",
			usage: "live (unrevoked) session tokens of one session",
			parse: intInto(func(c *Config) *int { return &c.Quotas.TokensPerSession }, 1, 10_000)},
		{flag: "max-scheduled-per-session", env: "WAGRAPH_MAX_SCHEDULED_PER_SESSION", def: "1000", group: groupLimits, kind: "int",
			usage: "pending scheduled sends of one session",
			parse: intInto(func(c *Config) *int { return &c.Quotas.ScheduledPerSession }, 1, 1_000_000)},
		{flag: "max-scheduled-bytes-per-session", env: "WAGRAPH_MAX_SCHEDULED_BYTES_PER_SESSION", def: "256MiB", group: groupLimits, kind: "size",
			usage: "bytes the pending scheduled sends of one session keep (their media included)",
			parse: parseScheduledBytes},
		{flag: "mcp", env: "WAGRAPH_MCP", def: "true", group: groupMCP, kind: "bool",
			usage: "serve the MCP server for AI agents at /mcp (Streamable HTTP, the API's tokens); false: /mcp is not found",
			parse: boolInto(func(c *Config) *bool { return &c.MCP.Enabled })},
		{flag: "mcp-read-only", env: "WAGRAPH_MCP_READ_ONLY", def: "false", group: groupMCP, kind: "bool",
			usage: "offer AI agents only the MCP server's read-only tools (no sends, no receipts)",
			parse: boolInto(func(c *Config) *bool { return &c.MCP.ReadOnly })},
		{flag: "node-id", env: "WAGRAPH_NODE_ID", group: groupCluster, kind: "string", shown: "hostname-pid",
			usage: "this process's name in a cluster (several processes on one PostgreSQL)", parse: parseNodeID},
		{flag: "advertise-addr", env: "WAGRAPH_ADVERTISE_ADDR", group: groupCluster, kind: "host:port", shown: "the listen address",
			usage: "with --database-url: the host:port the other processes of the cluster reach this one at",
			parse: parseAdvertiseAddr},
		{flag: "lease-ttl", env: "WAGRAPH_LEASE_TTL", def: "15s", group: groupCluster, kind: "duration",
			usage: "with --database-url: how long a session's lease holds unrenewed (renewed every third of it); a dead process's sessions move after at most this",
			parse: parseLeaseTTL},
		{flag: "cluster-addr", env: "WAGRAPH_CLUSTER_ADDR", group: groupCluster, kind: "host:port", shown: "none: on --addr",
			usage: "with --database-url: a listener of its own for the calls between the processes (needed with --cluster-tls-*); --advertise-addr is then its address",
			parse: parseClusterAddr},
		{flag: "cluster-tls-cert", env: "WAGRAPH_CLUSTER_TLS_CERT", group: groupCluster, kind: "path",
			usage: "this process's PEM certificate for the calls between processes (server and client authentication, naming its --advertise-addr host); with --cluster-tls-key and --cluster-tls-ca",
			parse: pathInto(func(c *Config) *string { return &c.ClusterTLSCert })},
		{flag: "cluster-tls-key", env: "WAGRAPH_CLUSTER_TLS_KEY", group: groupCluster, kind: "path",
			usage: "the PEM private key of --cluster-tls-cert",
			parse: pathInto(func(c *Config) *string { return &c.ClusterTLSKey })},
		{flag: "cluster-tls-ca", env: "WAGRAPH_CLUSTER_TLS_CA", group: groupCluster, kind: "path",
			usage: "the PEM certificates of the CA that signed every process's --cluster-tls-cert: peers are accepted only with a certificate it signed",
			parse: pathInto(func(c *Config) *string { return &c.ClusterTLSCA })},
		{flag: "nats-url", env: "WAGRAPH_NATS_URL", group: groupStream, kind: "urls", secret: true, shown: "none: off",
			usage: "NATS broker(s), nats://host:4222[,…]: every stored event is published to a JetStream stream (user:password in the URL are the credentials, never logged)",
			parse: parseNATSURL},
		{flag: "nats-creds", env: "WAGRAPH_NATS_CREDS", group: groupStream, kind: "path",
			usage: "with --nats-url: a NATS credentials file (user JWT and NKey seed)", parse: parseNATSCreds},
		{flag: "nats-stream", env: "WAGRAPH_NATS_STREAM", def: "WAGRAPH", group: groupStream, kind: "name",
			usage: "the JetStream stream: created with subjects wagraph.> when missing; an existing one is used as it is, and must capture wagraph.>",
			parse: parseNATSStream},
		{flag: "log-level", env: "WAGRAPH_LOG_LEVEL", def: "info", group: groupLogging, kind: "level",
			usage: "debug, info, warn or error", parse: parseLogLevel},
		{flag: "log-format", env: "WAGRAPH_LOG_FORMAT", def: "text", group: groupLogging, kind: "format",
			usage: "text or json", parse: parseLogFormat},
		{flag: "debug-addr", env: "WAGRAPH_DEBUG_ADDR", group: groupLogging, kind: "host:port",
			usage: "loopback address serving /debug/pprof, such as 127.0.0.1:6060", parse: parseDebugAddr},
	}
}

// Clustered reports whether the server runs as a member of a cluster: on
// PostgreSQL every process is one (maybe the only one), leasing the
// sessions it runs and following the events the others commit.
func (c Config) Clustered() bool { return c.DatabaseURL != "" }

// UsesDataDir reports whether the server keeps anything in the data
// directory, and so must hold it alone: on SQLite it holds the databases,
// and in sandbox mode (in-process network) the simulated network's state.
// A PostgreSQL process outside the sandbox keeps nothing there, so the
// processes of a cluster on one machine do not contend for ./data.
func (c Config) UsesDataDir() bool {
	return !c.Clustered() || (c.Sandbox && c.SandboxNetwork == "")
}

func redact(v string) string {
	if v == "" {
		return ""
	}
	return "<redacted>"
}

func parseAddr(c *Config, v string) string {
	host, port, err := net.SplitHostPort(v)
	if err != nil {
		return "want host:port such as 127.0.0.1:8080"
	}
	if strings.ContainsAny(host, " /") {
		return "host is not a name or an IP address"
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p > 65535 {
		return "port must be a number from 0 to 65535"
	}
	c.Addr = v
	return ""
}

// MaxTrustedProxies bounds --trusted-proxy: every request without a token
// is checked against the list.
const MaxTrustedProxies = 64

func parseTrustedProxies(c *Config, v string) string {
	c.TrustedProxies = nil
	if strings.TrimSpace(v) == "" {
		return ""
	}
	parts := strings.Split(v, ",")
	if len(parts) > MaxTrustedProxies {
		return fmt.Sprintf("at most %d entries", MaxTrustedProxies)
	}
	for i, part := range parts {
		part = strings.TrimSpace(part)
		pfx, err := netip.ParsePrefix(part)
		if err != nil {
			addr, aerr := netip.ParseAddr(part)
			if aerr != nil {
				return fmt.Sprintf("entry %d %q is not an IP address or a CIDR prefix such as 10.0.0.0/8", i+1, part)
			}
			pfx = netip.PrefixFrom(addr.Unmap(), addr.Unmap().BitLen())
		}
		c.TrustedProxies = append(c.TrustedProxies, pfx.Masked())
	}
	return ""
}

func parseDataDir(c *Config, v string) string {
	if strings.TrimSpace(v) == "" {
		return "must not be empty"
	}
	c.DataDir = v
	return ""
}

func parseDatabaseURL(c *Config, v string) string {
	if v == "" {
		return ""
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
		return "want a postgres://user:password@host:5432/dbname URL, or leave it unset for SQLite"
	}
	c.DatabaseURL = v
	return ""
}

func parseAdminToken(c *Config, v string) string {
	if v == "" {
		return ""
	}
	if len(v) < MinAdminTokenLen {
		return fmt.Sprintf("must be at least %d characters (it has %d)", MinAdminTokenLen, len(v))
	}
	if strings.ContainsFunc(v, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return "must not contain spaces or control characters"
	}
	c.AdminToken = v
	return ""
}

func boolInto(field func(*Config) *bool) func(*Config, string) string {
	return func(c *Config, v string) string {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return "want true or false"
		}
		*field(c) = b
		return ""
	}
}

func intInto(field func(*Config) *int, lo, hi int) func(*Config, string) string {
	return func(c *Config, v string) string {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < lo || n > hi {
			return fmt.Sprintf("want a whole number from %d to %d", lo, hi)
		}
		*field(c) = n
		return ""
	}
}

func parseBodyTimeout(c *Config, v string) string {
	d, err := time.ParseDuration(v)
	if err != nil {
		return "want a duration such as 60s"
	}
	if d < time.Second || d > time.Hour {
		return "must be between 1s and 1h"
	}
	c.BodyTimeout = d
	return ""
}

// MaxRetryAttempts bounds the retry schedule.
const MaxRetryAttempts = 30

func parseRetry(c *Config, v string) string {
	parts := strings.Split(v, ",")
	if len(parts) > MaxRetryAttempts {
		return fmt.Sprintf("at most %d attempts", MaxRetryAttempts)
	}
	c.WebhookRetry = c.WebhookRetry[:0]
	for i, p := range parts {
		d, err := time.ParseDuration(strings.TrimSpace(p))
		if err != nil {
			return fmt.Sprintf("delay %d %q is not a duration; want a list such as 0s,5s,5m,30m", i+1, p)
		}
		if d < 0 || d > 7*24*time.Hour {
			return fmt.Sprintf("delay %d (%s) must be between 0s and 168h", i+1, d)
		}
		c.WebhookRetry = append(c.WebhookRetry, d)
	}
	return ""
}

func parseWebhookTimeout(c *Config, v string) string {
	d, err := time.ParseDuration(v)
	if err != nil {
		return "want a duration such as 15s"
	}
	if d < time.Second || d > 5*time.Minute {
		return "must be between 1s and 5m"
	}
	c.WebhookTimeout = d
	return ""
}

// MaxEventRetention bounds --event-retention: ten years.
const MaxEventRetention = 10 * 365 * 24 * time.Hour

func parseEventRetention(c *Config, v string) string {
	d, err := time.ParseDuration(v)
	if err != nil {
		return "want a duration such as 720h"
	}
	if d < time.Hour || d > MaxEventRetention {
		return "must be between 1h and 87600h"
	}
	c.EventRetention = d
	return ""
}

// ParseSize reads a byte size: a plain number of bytes, or a number with one of
// the units B, KB, MB, GB (powers of 1000) or KiB, MiB, GiB (powers of 1024).
func ParseSize(v string) (int64, error) {
	s := strings.TrimSpace(v)
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := s, ""
	if i >= 0 {
		num, unit = s[:i], strings.TrimSpace(s[i:])
	}
	mult := map[string]float64{"": 1, "B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[unit]
	if mult == 0 {
		return 0, errors.New("unknown unit " + strconv.Quote(unit) + "; use B, KiB, MiB, GiB, KB, MB or GB")
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || num == "" {
		return 0, errors.New("want a size such as 64MiB")
	}
	if n := f * mult; n != n || n >= math.MaxInt64 {
		return 0, errors.New("size is too large")
	}
	return int64(f * mult), nil
}

// FormatSize writes n bytes the way sizes are set and limits are named:
// "64 MiB", "1.5 KiB", "100 bytes".
func FormatSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

func parseMaxBody(c *Config, v string) string {
	n, err := ParseSize(v)
	if err != nil {
		return err.Error() + "; must be between 1KiB and 4GiB"
	}
	if n < 1<<10 || n > 4<<30 {
		return "must be between 1KiB and 4GiB"
	}
	c.MaxBody = n
	return ""
}

func parseMaxAnswer(c *Config, v string) string {
	n, err := ParseSize(v)
	if err != nil {
		return err.Error() + "; must be between 64KiB and 1GiB"
	}
	if n < 64<<10 || n > 1<<30 {
		return "must be between 64KiB and 1GiB"
	}
	c.GraphQLMaxAnswer = n
	return ""
}

func parseRate(c *Config, v string) string {
	const want = "want RATE/s,BURST such as 20/s,100"
	per, burst, ok := strings.Cut(v, ",")
	per, found := strings.CutSuffix(strings.TrimSpace(per), "/s")
	if !ok || !found {
		return want
	}
	r, err := strconv.ParseFloat(per, 64)
	if err != nil || r <= 0 || r > 1e6 {
		return want + "; the rate must be a number above 0"
	}
	b, err := strconv.Atoi(strings.TrimSpace(burst))
	if err != nil || b < 1 || b > 1e6 {
		return want + "; the burst must be a whole number of at least 1"
	}
	c.Rate = Rate{Per: r, Burst: b}
	return ""
}

func parseGeocoder(c *Config, v string) string {
	if v == "" {
		return ""
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "want an absolute http(s) URL such as https://nominatim.openstreetmap.org/search"
	}
	c.GeocoderURL = v
	return ""
}

func parseFFmpeg(c *Config, v string) string {
	if v == "none" {
		return "" // conversion turned off on purpose
	}
	if v == "" {
		// The default: use ffmpeg when it is installed, convert nothing otherwise.
		if p, err := exec.LookPath("ffmpeg"); err == nil {
			c.FFmpeg = p
		}
		return ""
	}
	p, err := exec.LookPath(v)
	if err != nil {
		return "no executable there; install ffmpeg (make deps), leave the setting unset, or say none"
	}
	c.FFmpeg = p
	return ""
}

func parseMediaConcurrency(c *Config, v string) string {
	want := fmt.Sprintf("want IMAGES,FFMPEG,DOWNLOADS such as 2,2,4, each a whole number from 1 to %d", MaxMediaConcurrency)
	parts := strings.Split(v, ",")
	if len(parts) != 3 {
		return want
	}
	var n [3]int
	for i, p := range parts {
		var err error
		if n[i], err = strconv.Atoi(strings.TrimSpace(p)); err != nil || n[i] < 1 || n[i] > MaxMediaConcurrency {
			return fmt.Sprintf("%s (%s is %q)", want, [3]string{"IMAGES", "FFMPEG", "DOWNLOADS"}[i], strings.TrimSpace(p))
		}
	}
	c.MediaConcurrency = MediaConcurrency{Images: n[0], FFmpeg: n[1], Downloads: n[2]}
	return ""
}

func parseLogLevel(c *Config, v string) string {
	if err := c.LogLevel.UnmarshalText([]byte(v)); err != nil {
		return "want debug, info, warn or error"
	}
	return ""
}

func parseLogFormat(c *Config, v string) string {
	if v != "text" && v != "json" {
		return "want text or json"
	}
	c.LogFormat = v
	return ""
}

func parseWAVersion(c *Config, v string) string {
	setting, err := whatsapp.ParseVersionSetting(v)
	if err != nil {
		return err.Error()
	}
	c.WAVersion = setting
	return ""
}

func parseSandboxNetwork(c *Config, v string) string {
	if v == "" {
		return ""
	}
	host, port, err := net.SplitHostPort(v)
	ip := net.ParseIP(host)
	if err != nil || port == "" || (host != "localhost" && (ip == nil || !ip.IsLoopback())) {
		return "want the loopback address of a `wagraph sandbox-network` control port (its --control-addr), such as 127.0.0.1:7781"
	}
	c.SandboxNetwork, c.Sandbox = v, true
	return ""
}

// parseDebugAddr takes a loopback address only: pprof shows the process's
// memory, goroutines and command line to whoever reaches it, with no token.
// MaxNodeIDLen bounds --node-id.
const MaxNodeIDLen = 64

func parseNodeID(c *Config, v string) string {
	if v == "" {
		host, err := os.Hostname()
		if err != nil || host == "" {
			host = "wagraph"
		}
		v = fmt.Sprintf("%s-%d", host, os.Getpid())
		if len(v) > MaxNodeIDLen {
			v = v[len(v)-MaxNodeIDLen:]
		}
	}
	if len(v) > MaxNodeIDLen || strings.ContainsFunc(v, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
	}) {
		return fmt.Sprintf("want 1 to %d letters, digits, '-', '_' or '.', such as wagraph-1", MaxNodeIDLen)
	}
	c.NodeID = v
	return ""
}

func parseAdvertiseAddr(c *Config, v string) string {
	if v == "" {
		return ""
	}
	host, port, err := net.SplitHostPort(v)
	if err != nil || host == "" {
		return "want the host:port the other processes reach this one at, such as 10.0.0.5:8080"
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return "the host must be one the others can reach, not " + host
	}
	if p, err := strconv.Atoi(port); err != nil || p <= 0 || p > 65535 {
		return "port must be a number from 1 to 65535"
	}
	c.AdvertiseAddr = v
	return ""
}

// The bounds of --lease-ttl: renewing every third of it must not load the
// database, and a dead process must not hold its sessions for long.
const (
	MinLeaseTTL = 3 * time.Second
	MaxLeaseTTL = 5 * time.Minute
)

func parseLeaseTTL(c *Config, v string) string {
	d, err := time.ParseDuration(v)
	if err != nil || d < MinLeaseTTL || d > MaxLeaseTTL {
		return fmt.Sprintf("want a duration from %s to %s such as 15s", MinLeaseTTL, MaxLeaseTTL)
	}
	c.LeaseTTL = d
	return ""
}

func parseDebugAddr(c *Config, v string) string {
	if v == "" {
		return ""
	}
	const want = "want a loopback host:port such as 127.0.0.1:6060 (pprof has no authentication and must not be reachable from the network), or leave it unset"
	host, port, err := net.SplitHostPort(v)
	if err != nil {
		return want
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return want
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return "port must be a number from 0 to 65535"
	}
	c.DebugAddr = v
	return ""
}

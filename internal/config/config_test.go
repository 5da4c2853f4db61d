package config_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/natsstream"
	"github.com/wagraph/wagraph/whatsapp"
)

// env returns a lookup function over a fixed environment.
func env(kv map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := kv[k]
		return v, ok
	}
}

var noEnv = env(nil)

// fakeExecutable writes an executable file and returns its path, so the
// --ffmpeg setting can be tested without ffmpeg installed.
func fakeExecutable(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ffmpeg")
	if err := os.WriteFile(p, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadDefaults(t *testing.T) {
	var usage bytes.Buffer
	c, err := config.Load(nil, noEnv, &usage)
	if err != nil {
		t.Fatalf("Load with no settings: %v", err)
	}
	wantFFmpeg := ""
	if p, err := exec.LookPath("ffmpeg"); err == nil {
		wantFFmpeg = p
	}
	want := config.Config{
		Addr:             "127.0.0.1:8080",
		DataDir:          "./data",
		DatabaseURL:      "",
		AdminToken:       "",
		Sandbox:          false,
		AllowPrivateURLs: false,
		WebhookRetry: []time.Duration{
			0, 5 * time.Second, 5 * time.Minute, 30 * time.Minute,
			2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour,
		},
		WebhookTimeout:    15 * time.Second,
		EventRetention:    720 * time.Hour,
		LeaseTTL:          15 * time.Second,
		NodeID:            c.NodeID, // hostname-pid: checked below
		MaxBody:           67108864,
		BodyTimeout:       time.Minute,
		GraphQLComplexity: 10000,
		GraphQLMaxAnswer:  16 << 20,
		GraphQLDepth:      15,
		Rate:              config.Rate{Per: 20, Burst: 100},
		GeocoderURL:       "",
		FFmpeg:            wantFFmpeg,
		MediaConcurrency:  config.MediaConcurrency{Images: 2, FFmpeg: 2, Downloads: 4},
		Quotas: config.Quotas{SessionsPerUser: 100, WebhooksPerSession: 25, TokensPerSession: 50,
			ScheduledPerSession: 1000, ScheduledBytesPerSession: 256 << 20},
		LogLevel:  slog.LevelInfo,
		LogFormat: "text",
		WAVersion: whatsapp.VersionSetting{Mode: whatsapp.VersionAuto},
		MCP:       config.MCP{Enabled: true},
		NATS:      config.NATS{Stream: "WAGRAPH"},
		Media:     config.MediaStore{Kind: config.MediaLocal, MaxSize: 64 << 20},
	}
	if host, _ := os.Hostname(); c.NodeID != fmt.Sprintf("%s-%d", host, os.Getpid()) {
		t.Errorf("default NodeID %q, want hostname-pid", c.NodeID)
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("defaults:\n got %+v\nwant %+v", c, want)
	}
	if usage.Len() != 0 {
		t.Errorf("Load wrote to usage without an error: %q", usage.String())
	}
}

// TestLoadSources checks every setting read from the environment alone, from
// a flag alone, and from both (the flag wins).
func TestLoadSources(t *testing.T) {
	exe := fakeExecutable(t)
	exe2 := fakeExecutable(t)
	const token = "wgu_0123456789abcdefghijklmnopqrstuvwxyzAB"
	const token2 = "wgu_ZYXWVUTSRQPONMLKJIHGFEDCBA9876543210zy"
	tests := []struct {
		flag, env string
		envVal    string // used alone, and losing to flagVal
		flagVal   string
		fromEnv   func(config.Config) any
		wantEnv   any
		wantFlag  any
	}{
		{"addr", "WAGRAPH_ADDR", "0.0.0.0:9000", "[::1]:9001",
			func(c config.Config) any { return c.Addr }, "0.0.0.0:9000", "[::1]:9001"},
		{"data-dir", "WAGRAPH_DATA_DIR", "/var/lib/wagraph", "/srv/wg",
			func(c config.Config) any { return c.DataDir }, "/var/lib/wagraph", "/srv/wg"},
		{"database-url", "WAGRAPH_DATABASE_URL", "postgres://u:p@db:5432/wg", "postgresql://u:p@other/wg",
			func(c config.Config) any { return c.DatabaseURL }, "postgres://u:p@db:5432/wg", "postgresql://u:p@other/wg"},
		{"admin-token", "WAGRAPH_ADMIN_TOKEN", token, token2,
			func(c config.Config) any { return c.AdminToken }, token, token2},
		{"sandbox", "WAGRAPH_SANDBOX", "true", "false",
			func(c config.Config) any { return c.Sandbox }, true, false},
		{"mcp", "WAGRAPH_MCP", "false", "true",
			func(c config.Config) any { return c.MCP.Enabled }, false, true},
		{"mcp-read-only", "WAGRAPH_MCP_READ_ONLY", "true", "false",
			func(c config.Config) any { return c.MCP.ReadOnly }, true, false},
		{"sandbox-network", "WAGRAPH_SANDBOX_NETWORK", "127.0.0.1:7780", "[::1]:7781",
			func(c config.Config) any { return c.SandboxNetwork + fmt.Sprint(c.Sandbox) }, "127.0.0.1:7780true", "[::1]:7781true"},
		{"allow-private-urls", "WAGRAPH_ALLOW_PRIVATE_URLS", "1", "false",
			func(c config.Config) any { return c.AllowPrivateURLs }, true, false},
		{"webhook-retry", "WAGRAPH_WEBHOOK_RETRY", "1s, 2m ,3h", "0s",
			func(c config.Config) any { return c.WebhookRetry },
			[]time.Duration{time.Second, 2 * time.Minute, 3 * time.Hour}, []time.Duration{0}},
		{"webhook-timeout", "WAGRAPH_WEBHOOK_TIMEOUT", "30s", "1s",
			func(c config.Config) any { return c.WebhookTimeout }, 30 * time.Second, time.Second},
		{"event-retention", "WAGRAPH_EVENT_RETENTION", "24h", "1h",
			func(c config.Config) any { return c.EventRetention }, 24 * time.Hour, time.Hour},
		{"max-body", "WAGRAPH_MAX_BODY", "1MB", "1KiB",
			func(c config.Config) any { return c.MaxBody }, int64(1_000_000), int64(1024)},
		{"body-timeout", "WAGRAPH_BODY_TIMEOUT", "5s", "2m",
			func(c config.Config) any { return c.BodyTimeout }, 5 * time.Second, 2 * time.Minute},
		{"media-concurrency", "WAGRAPH_MEDIA_CONCURRENCY", "1, 3 ,8", "256,1,1",
			func(c config.Config) any { return c.MediaConcurrency },
			config.MediaConcurrency{Images: 1, FFmpeg: 3, Downloads: 8}, config.MediaConcurrency{Images: 256, FFmpeg: 1, Downloads: 1}},
		{"graphql-complexity", "WAGRAPH_GRAPHQL_COMPLEXITY", "50", "5000",
			func(c config.Config) any { return c.GraphQLComplexity }, 50, 5000},
		{"graphql-max-answer", "WAGRAPH_GRAPHQL_MAX_ANSWER", "64KiB", "1GiB",
			func(c config.Config) any { return c.GraphQLMaxAnswer }, int64(64 << 10), int64(1 << 30)},
		{"graphql-depth", "WAGRAPH_GRAPHQL_DEPTH", "4", "30",
			func(c config.Config) any { return c.GraphQLDepth }, 4, 30},
		{"max-sessions-per-user", "WAGRAPH_MAX_SESSIONS_PER_USER", "3", "500",
			func(c config.Config) any { return c.Quotas.SessionsPerUser }, 3, 500},
		{"max-webhooks-per-session", "WAGRAPH_MAX_WEBHOOKS_PER_SESSION", "2", "100",
			func(c config.Config) any { return c.Quotas.WebhooksPerSession }, 2, 100},
		{"max-tokens-per-session", "WAGRAPH_MAX_TOKENS_PER_SESSION", "1", "200",
			func(c config.Config) any { return c.Quotas.TokensPerSession }, 1, 200},
		{"max-scheduled-per-session", "WAGRAPH_MAX_SCHEDULED_PER_SESSION", "10", "5000",
			func(c config.Config) any { return c.Quotas.ScheduledPerSession }, 10, 5000},
		{"max-scheduled-bytes-per-session", "WAGRAPH_MAX_SCHEDULED_BYTES_PER_SESSION", "1MiB", "2GB",
			func(c config.Config) any { return c.Quotas.ScheduledBytesPerSession }, int64(1 << 20), int64(2_000_000_000)},
		{"rate", "WAGRAPH_RATE", "0.5/s,1", "1000/s, 2000",
			func(c config.Config) any { return c.Rate }, config.Rate{Per: 0.5, Burst: 1}, config.Rate{Per: 1000, Burst: 2000}},
		{"geocoder-url", "WAGRAPH_GEOCODER_URL", "https://nominatim.example/search", "http://localhost:7070/search",
			func(c config.Config) any { return c.GeocoderURL }, "https://nominatim.example/search", "http://localhost:7070/search"},
		{"ffmpeg", "WAGRAPH_FFMPEG", exe, exe2,
			func(c config.Config) any { return c.FFmpeg }, exe, exe2},
		{"log-level", "WAGRAPH_LOG_LEVEL", "debug", "WARN",
			func(c config.Config) any { return c.LogLevel }, slog.LevelDebug, slog.LevelWarn},
		{"log-format", "WAGRAPH_LOG_FORMAT", "json", "text",
			func(c config.Config) any { return c.LogFormat }, "json", "text"},
		{"wa-version", "WAGRAPH_WA_VERSION", "builtin", "2.3000.1045649367",
			func(c config.Config) any { return c.WAVersion.String() }, "builtin", "2.3000.1045649367"},
		{"debug-addr", "WAGRAPH_DEBUG_ADDR", "127.0.0.1:6060", "[::1]:0",
			func(c config.Config) any { return c.DebugAddr }, "127.0.0.1:6060", "[::1]:0"},
		{"nats-url", "WAGRAPH_NATS_URL", "nats://u:pw@broker:4222,nats://u:pw@broker2:4222", "tls://broker.example:4222",
			func(c config.Config) any { return c.NATS.URL }, "nats://u:pw@broker:4222,nats://u:pw@broker2:4222", "tls://broker.example:4222"},
		{"nats-stream", "WAGRAPH_NATS_STREAM", "EVENTS", "wagraph_prod",
			func(c config.Config) any { return c.NATS.Stream }, "EVENTS", "wagraph_prod"},
		{"media-store", "WAGRAPH_MEDIA_STORE", "s3://wa-media/kept/media/", "none",
			func(c config.Config) any { return c.Media.String() }, "s3://wa-media/kept/media", "none"},
		{"media-keep", "WAGRAPH_MEDIA_KEEP", " image, audio,image ", "none",
			func(c config.Config) any { return c.Media.Keep }, []string{"image", "audio"}, []string{}},
		{"media-max-size", "WAGRAPH_MEDIA_MAX_SIZE", "1GiB", "16MB",
			func(c config.Config) any { return c.Media.MaxSize }, int64(1 << 30), int64(16_000_000)},
		{"media-retention", "WAGRAPH_MEDIA_RETENTION", "2160h", "0",
			func(c config.Config) any { return c.Media.Retention }, 2160 * time.Hour, time.Duration(0)},
	}
	for _, tt := range tests {
		t.Run(tt.flag, func(t *testing.T) {
			e := env(map[string]string{tt.env: tt.envVal})

			c, err := config.Load(nil, e, io.Discard)
			if err != nil {
				t.Fatalf("env %s=%q: %v", tt.env, tt.envVal, err)
			}
			if got := tt.fromEnv(c); !reflect.DeepEqual(got, tt.wantEnv) {
				t.Errorf("env only: got %#v, want %#v", got, tt.wantEnv)
			}

			// "--flag value"; booleans take "--flag=value" (a bare --sandbox
			// means true, so "--sandbox false" would leave "false" over).
			args := []string{"--" + tt.flag, tt.flagVal}
			if tt.flag == "sandbox" || tt.flag == "allow-private-urls" {
				args = []string{"--" + tt.flag + "=" + tt.flagVal}
			}
			c, err = config.Load(args, noEnv, io.Discard)
			if err != nil {
				t.Fatalf("flag --%s %q: %v", tt.flag, tt.flagVal, err)
			}
			if got := tt.fromEnv(c); !reflect.DeepEqual(got, tt.wantFlag) {
				t.Errorf("flag only: got %#v, want %#v", got, tt.wantFlag)
			}

			c, err = config.Load([]string{"--" + tt.flag + "=" + tt.flagVal}, e, io.Discard)
			if err != nil {
				t.Fatalf("flag and env: %v", err)
			}
			if got := tt.fromEnv(c); !reflect.DeepEqual(got, tt.wantFlag) {
				t.Errorf("flag and env: got %#v, want the flag's %#v", got, tt.wantFlag)
			}
		})
	}
}

// A flag given explicitly wins even when it is empty or equal to the default.
func TestLoadFlagWinsEvenWhenEmptyOrDefault(t *testing.T) {
	e := env(map[string]string{
		"WAGRAPH_GEOCODER_URL": "https://geo.example/search",
		"WAGRAPH_ADDR":         "0.0.0.0:1",
		"WAGRAPH_LOG_FORMAT":   "not-a-format", // must not be looked at
	})
	c, err := config.Load([]string{"--geocoder-url=", "--addr", "127.0.0.1:8080", "--log-format", "json"}, e, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.GeocoderURL != "" {
		t.Errorf("GeocoderURL = %q, want the empty flag to win", c.GeocoderURL)
	}
	if c.Addr != "127.0.0.1:8080" {
		t.Errorf("Addr = %q, want the flag's default-valued 127.0.0.1:8080", c.Addr)
	}
}

// Booleans may be given bare (--sandbox), with one dash as Go's flag
// package allowed (-sandbox), or with a separate true or false. The sandbox
// lets webhooks and media reach private addresses unless told otherwise.
func TestLoadBareBoolFlags(t *testing.T) {
	tests := []struct {
		name           string
		args           []string
		env            map[string]string
		sandbox, allow bool
	}{
		{"bare double dash", []string{"--sandbox"}, nil, true, true},
		{"bare single dash", []string{"-sandbox"}, nil, true, true},
		{"bare beats env false", []string{"--sandbox"}, map[string]string{"WAGRAPH_SANDBOX": "false"}, true, true},
		{"explicit false beats env true", []string{"--sandbox=false"}, map[string]string{"WAGRAPH_SANDBOX": "true"}, false, false},
		{"separate false", []string{"--sandbox", "false", "--addr", "127.0.0.1:0"}, nil, false, false},
		{"separate true, single dash", []string{"-allow-private-urls", "true"}, nil, false, true},
		{"both bare, among other flags", []string{"--allow-private-urls", "--addr", "127.0.0.1:0", "--sandbox"}, nil, true, true},
		{"bare before a flag with a value", []string{"--sandbox", "--data-dir", "/tmp/x"}, nil, true, true},
		{"sandbox, private URLs refused by flag", []string{"--sandbox", "--allow-private-urls=false"}, nil, true, false},
		{"sandbox, private URLs refused by env", []string{"--sandbox"}, map[string]string{"WAGRAPH_ALLOW_PRIVATE_URLS": "false"}, true, false},
		{"sandbox network implies the sandbox", []string{"--sandbox-network", "127.0.0.1:7781"}, nil, true, true},
		{"not the sandbox", []string{"--addr", "127.0.0.1:0"}, nil, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.Load(tt.args, env(tt.env), io.Discard)
			if err != nil {
				t.Fatalf("Load(%q): %v", tt.args, err)
			}
			if c.Sandbox != tt.sandbox || c.AllowPrivateURLs != tt.allow {
				t.Errorf("Load(%q): Sandbox=%v AllowPrivateURLs=%v, want %v %v", tt.args, c.Sandbox, c.AllowPrivateURLs, tt.sandbox, tt.allow)
			}
		})
	}
}

// A flag's value is never rewritten, even when it looks like a flag.
func TestLoadValueLikeAFlag(t *testing.T) {
	c, err := config.Load([]string{"-node-id", "-x", "--data-dir", "-sandbox"}, noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.NodeID != "-x" || c.DataDir != "-sandbox" || c.Sandbox {
		t.Errorf("NodeID %q DataDir %q Sandbox %v; want -x, -sandbox, false", c.NodeID, c.DataDir, c.Sandbox)
	}
}

func TestLoadBadValues(t *testing.T) {
	const adminSecret = "s3cr3t-tok" // 10 characters
	const spacedSecret = "this secret admin token has spaces in it!"
	const dbSecret = "mysql://root:hunter2pass@db.internal:3306/wagraph"
	tests := []struct {
		name, flag, env, value string
		problem                string   // part of the message
		secrets                []string // must never appear in the message
	}{
		{"addr without port", "addr", "WAGRAPH_ADDR", "localhost", "host:port", nil},
		{"addr port out of range", "addr", "WAGRAPH_ADDR", "127.0.0.1:70000", "port must be a number from 0 to 65535", nil},
		{"addr port not a number", "addr", "WAGRAPH_ADDR", "127.0.0.1:http", "port must be a number", nil},
		{"addr with newline", "addr", "WAGRAPH_ADDR", "127.0.0.1:80\n80", "port must be a number", nil},
		{"addr host with slash", "addr", "WAGRAPH_ADDR", "a/b:80", "host", nil},
		{"empty data-dir", "data-dir", "WAGRAPH_DATA_DIR", "", "must not be empty", nil},
		{"blank data-dir", "data-dir", "WAGRAPH_DATA_DIR", "   ", "must not be empty", nil},
		{"mysql database url", "database-url", "WAGRAPH_DATABASE_URL", dbSecret, "postgres://", []string{dbSecret, "hunter2pass", "root:"}},
		{"postgres url without host", "database-url", "WAGRAPH_DATABASE_URL", "postgres:///nohost", "postgres://", []string{"nohost"}},
		{"short admin token", "admin-token", "WAGRAPH_ADMIN_TOKEN", adminSecret, "at least 32 characters", []string{adminSecret}},
		{"admin token with spaces", "admin-token", "WAGRAPH_ADMIN_TOKEN", spacedSecret, "spaces", []string{spacedSecret, "secret admin"}},
		{"sandbox maybe", "sandbox", "WAGRAPH_SANDBOX", "maybe", "true or false", nil},
		{"sandbox network not loopback", "sandbox-network", "WAGRAPH_SANDBOX_NETWORK", "10.0.0.1:7780", "loopback address", nil},
		{"sandbox network without port", "sandbox-network", "WAGRAPH_SANDBOX_NETWORK", "127.0.0.1", "loopback address", nil},
		{"allow-private-urls yes", "allow-private-urls", "WAGRAPH_ALLOW_PRIVATE_URLS", "yes", "true or false", nil},
		{"bad retry entry", "webhook-retry", "WAGRAPH_WEBHOOK_RETRY", "0s,5x,5m", "delay 2", nil},
		{"negative retry", "webhook-retry", "WAGRAPH_WEBHOOK_RETRY", "0s,-5s", "between 0s and 168h", nil},
		{"retry over a week", "webhook-retry", "WAGRAPH_WEBHOOK_RETRY", "169h", "between 0s and 168h", nil},
		{"empty retry", "webhook-retry", "WAGRAPH_WEBHOOK_RETRY", "", "not a duration", nil},
		{"retention not a duration", "event-retention", "WAGRAPH_EVENT_RETENTION", "30d", "want a duration such as 720h", nil},
		{"retention under an hour", "event-retention", "WAGRAPH_EVENT_RETENTION", "59m", "between 1h and 87600h", nil},
		{"retention over ten years", "event-retention", "WAGRAPH_EVENT_RETENTION", "87601h", "between 1h and 87600h", nil},
		{"too many retries", "webhook-retry", "WAGRAPH_WEBHOOK_RETRY", strings.Repeat("1s,", 30) + "1s", "at most 30", nil},
		{"advertise addr without port", "advertise-addr", "WAGRAPH_ADVERTISE_ADDR", "10.0.0.5", "host:port", nil},
		{"advertise addr without host", "advertise-addr", "WAGRAPH_ADVERTISE_ADDR", ":8080", "host:port", nil},
		{"advertise addr unspecified", "advertise-addr", "WAGRAPH_ADVERTISE_ADDR", "0.0.0.0:8080", "not 0.0.0.0", nil},
		{"advertise addr port 0", "advertise-addr", "WAGRAPH_ADVERTISE_ADDR", "10.0.0.5:0", "from 1 to 65535", nil},
		{"node id with a space", "node-id", "WAGRAPH_NODE_ID", "node one", "letters, digits", nil},
		{"node id too long", "node-id", "WAGRAPH_NODE_ID", strings.Repeat("n", 65), "1 to 64", nil},
		{"lease ttl too short", "lease-ttl", "WAGRAPH_LEASE_TTL", "2s", "from 3s to 5m0s", nil},
		{"lease ttl too long", "lease-ttl", "WAGRAPH_LEASE_TTL", "6m", "from 3s to 5m0s", nil},
		{"lease ttl not a duration", "lease-ttl", "WAGRAPH_LEASE_TTL", "15", "duration", nil},
		{"cluster addr without port", "cluster-addr", "WAGRAPH_CLUSTER_ADDR", "10.0.0.5", "host:port", nil},
		{"cluster addr port out of range", "cluster-addr", "WAGRAPH_CLUSTER_ADDR", "10.0.0.5:70000", "from 0 to 65535", nil},
		{"timeout 0s", "webhook-timeout", "WAGRAPH_WEBHOOK_TIMEOUT", "0s", "between 1s and 5m", nil},
		{"timeout over 5m", "webhook-timeout", "WAGRAPH_WEBHOOK_TIMEOUT", "6m", "between 1s and 5m", nil},
		{"timeout not a duration", "webhook-timeout", "WAGRAPH_WEBHOOK_TIMEOUT", "15", "duration", nil},
		{"max-body unknown unit", "max-body", "WAGRAPH_MAX_BODY", "12XB", "unknown unit", nil},
		{"max-body too small", "max-body", "WAGRAPH_MAX_BODY", "10", "between 1KiB and 4GiB", nil},
		{"max-body just under 1KiB", "max-body", "WAGRAPH_MAX_BODY", "1023B", "between 1KiB and 4GiB", nil},
		{"max-body too large", "max-body", "WAGRAPH_MAX_BODY", "5GiB", "between 1KiB and 4GiB", nil},
		{"media concurrency of two numbers", "media-concurrency", "WAGRAPH_MEDIA_CONCURRENCY", "2,2", "want IMAGES,FFMPEG,DOWNLOADS", nil},
		{"sessions per user zero", "max-sessions-per-user", "WAGRAPH_MAX_SESSIONS_PER_USER", "0", "from 1 to 100000", nil},
		{"webhooks per session over the bound", "max-webhooks-per-session", "WAGRAPH_MAX_WEBHOOKS_PER_SESSION", "1001", "from 1 to 1000", nil},
		{"tokens per session not a number", "max-tokens-per-session", "WAGRAPH_MAX_TOKENS_PER_SESSION", "many", "whole number", nil},
		{"scheduled bytes too small", "max-scheduled-bytes-per-session", "WAGRAPH_MAX_SCHEDULED_BYTES_PER_SESSION", "100KiB", "between 1MiB and 64GiB", nil},
		{"media concurrency zero", "media-concurrency", "WAGRAPH_MEDIA_CONCURRENCY", "0,2,4", `IMAGES is "0"`, nil},
		{"media concurrency over the bound", "media-concurrency", "WAGRAPH_MEDIA_CONCURRENCY", "2,2,257", `from 1 to 256 (DOWNLOADS is "257")`, nil},
		{"media concurrency not a number", "media-concurrency", "WAGRAPH_MEDIA_CONCURRENCY", "2,x,4", `FFMPEG is "x"`, nil},
		{"max-body huge", "max-body", "WAGRAPH_MAX_BODY", "99999999999999999999GiB", "between 1KiB and 4GiB", nil},
		{"body-timeout not a duration", "body-timeout", "WAGRAPH_BODY_TIMEOUT", "soon", "want a duration", nil},
		{"body-timeout too short", "body-timeout", "WAGRAPH_BODY_TIMEOUT", "10ms", "between 1s and 1h", nil},
		{"graphql-complexity zero", "graphql-complexity", "WAGRAPH_GRAPHQL_COMPLEXITY", "0", "from 10 to 100000", nil},
		{"graphql-max-answer too small", "graphql-max-answer", "WAGRAPH_GRAPHQL_MAX_ANSWER", "65535", "between 64KiB and 1GiB", nil},
		{"graphql-max-answer too large", "graphql-max-answer", "WAGRAPH_GRAPHQL_MAX_ANSWER", "2GiB", "between 64KiB and 1GiB", nil},
		{"graphql-max-answer unknown unit", "graphql-max-answer", "WAGRAPH_GRAPHQL_MAX_ANSWER", "16M", "unknown unit", nil},
		{"graphql-depth not a number", "graphql-depth", "WAGRAPH_GRAPHQL_DEPTH", "deep", "from 3 to 100", nil},
		{"wa-version unknown word", "wa-version", "WAGRAPH_WA_VERSION", "latest", "want auto, builtin or a version", nil},
		{"wa-version two parts", "wa-version", "WAGRAPH_WA_VERSION", "2.3000", "want auto, builtin or a version", nil},
		{"wa-version not a number", "wa-version", "WAGRAPH_WA_VERSION", "2.3000.x", "want auto, builtin or a version", nil},
		{"rate abc", "rate", "WAGRAPH_RATE", "abc", "RATE/s,BURST", nil},
		{"rate zero", "rate", "WAGRAPH_RATE", "0/s,1", "above 0", nil},
		{"rate negative", "rate", "WAGRAPH_RATE", "-1/s,1", "above 0", nil},
		{"burst zero", "rate", "WAGRAPH_RATE", "5/s,0", "at least 1", nil},
		{"rate without /s", "rate", "WAGRAPH_RATE", "5,10", "RATE/s,BURST", nil},
		{"geocoder ftp", "geocoder-url", "WAGRAPH_GEOCODER_URL", "ftp://x", "http(s) URL", nil},
		{"geocoder relative", "geocoder-url", "WAGRAPH_GEOCODER_URL", "/search", "http(s) URL", nil},
		{"ffmpeg missing", "ffmpeg", "WAGRAPH_FFMPEG", "/nonexistent/ffmpeg", "no executable", nil},
		{"log-level loud", "log-level", "WAGRAPH_LOG_LEVEL", "loud", "debug, info, warn or error", nil},
		{"log-format xml", "log-format", "WAGRAPH_LOG_FORMAT", "xml", "text or json", nil},
		{"nats url of another scheme", "nats-url", "WAGRAPH_NATS_URL", "http://u:natspw@broker:4222", "nats://host:4222", []string{"natspw", "u:"}},
		{"nats url without host", "nats-url", "WAGRAPH_NATS_URL", "nats://a:4222,nats://", "URL 2", nil},
		{"nats creds missing", "nats-creds", "WAGRAPH_NATS_CREDS", "/nonexistent/wagraph.creds", "cannot read the credentials file", nil},
		{"nats stream with a dot", "nats-stream", "WAGRAPH_NATS_STREAM", "wagraph.events", "stream name", nil},
		{"nats stream empty", "nats-stream", "WAGRAPH_NATS_STREAM", " ", "must not be empty", nil},
		{"debug-addr on every address", "debug-addr", "WAGRAPH_DEBUG_ADDR", "0.0.0.0:6060", "want a loopback host:port", nil},
		{"debug-addr without host", "debug-addr", "WAGRAPH_DEBUG_ADDR", ":6060", "want a loopback host:port", nil},
		{"debug-addr private address", "debug-addr", "WAGRAPH_DEBUG_ADDR", "10.0.0.5:6060", "must not be reachable from the network", nil},
		{"debug-addr host name", "debug-addr", "WAGRAPH_DEBUG_ADDR", "debug.example:6060", "want a loopback host:port", nil},
		{"debug-addr without port", "debug-addr", "WAGRAPH_DEBUG_ADDR", "127.0.0.1", "want a loopback host:port", nil},
		{"debug-addr port out of range", "debug-addr", "WAGRAPH_DEBUG_ADDR", "127.0.0.1:70000", "port must be a number from 0 to 65535", nil},
		{"media store of another scheme", "media-store", "WAGRAPH_MEDIA_STORE", "gs://bucket/media", "want local, none, or s3://bucket/prefix", nil},
		{"media store word", "media-store", "WAGRAPH_MEDIA_STORE", "disk", "want local, none, or s3://bucket/prefix", nil},
		{"media store bucket with capitals", "media-store", "WAGRAPH_MEDIA_STORE", "s3://Media/x", `the bucket "Media" is not an S3 bucket name`, nil},
		{"media store bucket too short", "media-store", "WAGRAPH_MEDIA_STORE", "s3://ab", `the bucket "ab" is not an S3 bucket name`, nil},
		{"media store with credentials", "media-store", "WAGRAPH_MEDIA_STORE", "s3://AKIA:s3secretvalue@bucket/x", "without credentials", []string{"s3secretvalue"}},
		{"media store prefix with ..", "media-store", "WAGRAPH_MEDIA_STORE", "s3://bucket/a/../b", `the prefix "a/../b" has an empty, . or .. part`, nil},
		{"media s3 endpoint with a path", "media-s3-endpoint", "WAGRAPH_MEDIA_S3_ENDPOINT", "http://minio:9000/bucket", "no path", nil},
		{"media s3 endpoint of another scheme", "media-s3-endpoint", "WAGRAPH_MEDIA_S3_ENDPOINT", "ftp://minio", "http://minio:9000", nil},
		{"media keep an unknown kind", "media-keep", "WAGRAPH_MEDIA_KEEP", "image,gif", `"gif" is not a kind of media: want all, none, or a comma-separated list of image,audio,document,video,sticker`, nil},
		{"media keep empty", "media-keep", "WAGRAPH_MEDIA_KEEP", " ", `"" is not a kind of media`, nil},
		{"media max size too small", "media-max-size", "WAGRAPH_MEDIA_MAX_SIZE", "100", "between 1KiB and 4GiB", nil},
		{"media max size too large", "media-max-size", "WAGRAPH_MEDIA_MAX_SIZE", "5GiB", "between 1KiB and 4GiB", nil},
		{"media retention negative", "media-retention", "WAGRAPH_MEDIA_RETENTION", "-1h", "must be 0 (forever) or between 1h and 87600h", nil},
		{"media retention too short", "media-retention", "WAGRAPH_MEDIA_RETENTION", "30m", "must be 0 (forever) or between 1h and 87600h", nil},
		{"media retention in days", "media-retention", "WAGRAPH_MEDIA_RETENTION", "90d", "want a duration such as 2160h", nil},
	}
	for _, tt := range tests {
		for _, via := range []string{"flag", "env"} {
			t.Run(tt.name+"/"+via, func(t *testing.T) {
				var args []string
				e := noEnv
				if via == "flag" {
					args = []string{"--" + tt.flag + "=" + tt.value}
				} else {
					e = env(map[string]string{tt.env: tt.value})
				}
				var usage bytes.Buffer
				c, err := config.Load(args, e, &usage)
				if err == nil {
					t.Fatalf("Load accepted %s=%q: %+v", tt.flag, tt.value, c)
				}
				var ce *config.Error
				if !errors.As(err, &ce) {
					t.Fatalf("error %v (%T) is not a *config.Error", err, err)
				}
				if ce.Flag != tt.flag || ce.Env != tt.env {
					t.Errorf("Error names Flag=%q Env=%q, want %q %q", ce.Flag, ce.Env, tt.flag, tt.env)
				}
				msg := err.Error()
				if strings.ContainsAny(msg, "\n\r") {
					t.Errorf("message is not one line: %q", msg)
				}
				// The message names what the user wrote: the flag, or
				// the variable when the value came from the environment.
				wants := []string{"--" + tt.flag + " ", tt.problem}
				if via == "env" {
					wants = []string{tt.env + "=", "--" + tt.flag + ")", tt.problem}
				} else if strings.Contains(msg, tt.env) {
					t.Errorf("message %q names %s, which was not set", msg, tt.env)
				}
				for _, want := range wants {
					if !strings.Contains(msg, want) {
						t.Errorf("message %q does not contain %q", msg, want)
					}
				}
				for _, s := range tt.secrets {
					if strings.Contains(msg, s) {
						t.Errorf("message %q reveals the secret %q", msg, s)
					}
				}
				if !reflect.DeepEqual(c, config.Config{}) {
					t.Errorf("a failed Load returned a partial Config: %+v", c)
				}
				if usage.Len() != 0 {
					t.Errorf("a bad value wrote usage: %q", usage.String())
				}
			})
		}
	}
}

// The first bad setting is reported even when later ones are fine, and a
// secret setting that is fine is never shown by another setting's error.
func TestLoadSecretsNotInOtherErrors(t *testing.T) {
	const token = "wgu_0123456789abcdefghijklmnopqrstuvwxyzAB"
	_, err := config.Load([]string{"--admin-token", token, "--database-url", "postgres://u:pw@db/x", "--rate", "nope"}, noEnv, io.Discard)
	var ce *config.Error
	if !errors.As(err, &ce) || ce.Flag != "rate" {
		t.Fatalf("err = %v, want a *config.Error for --rate", err)
	}
	for _, s := range []string{token, "pw@db"} {
		if strings.Contains(err.Error(), s) {
			t.Errorf("message %q reveals %q", err.Error(), s)
		}
	}
}

func TestLoadSyntaxErrors(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		isHelp  bool
		inUsage string // written to the usage writer
		inErr   string
	}{
		{"unknown flag", []string{"--nope"}, false, "WAGRAPH_ADDR", "nope"},
		{"missing value", []string{"--addr"}, false, "WAGRAPH_ADDR", "addr"},
		{"positional argument", []string{"--addr", "127.0.0.1:1", "extra"}, false, "", `"extra"`},
		{"help", []string{"-h"}, true, "WAGRAPH_ADDR", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var usage bytes.Buffer
			_, err := config.Load(tt.args, noEnv, &usage)
			if err == nil {
				t.Fatalf("Load(%q) succeeded", tt.args)
			}
			if got := config.IsHelp(err); got != tt.isHelp {
				t.Errorf("config.IsHelp(err) = %v, want %v (err %v)", got, tt.isHelp, err)
			}
			var ce *config.Error
			if errors.As(err, &ce) {
				t.Errorf("a syntax error is reported as a bad setting: %v", err)
			}
			if !strings.Contains(err.Error(), tt.inErr) {
				t.Errorf("error %q does not contain %q", err, tt.inErr)
			}
			if tt.inUsage != "" && !strings.Contains(usage.String(), tt.inUsage) {
				t.Errorf("usage output %q does not contain %q", usage.String(), tt.inUsage)
			}
		})
	}
}

// The help lists every setting under its group, one entry each, with its
// type, environment variable and default on the flag's line.
func TestUsageListsEverySetting(t *testing.T) {
	var b bytes.Buffer
	config.Usage(&b)
	out := b.String()
	for _, want := range []string{
		"--addr", "WAGRAPH_ADDR", "127.0.0.1:8080",
		"--data-dir", "WAGRAPH_DATA_DIR", "--database-url", "WAGRAPH_DATABASE_URL",
		"--admin-token", "WAGRAPH_ADMIN_TOKEN", "--sandbox", "WAGRAPH_SANDBOX", "--sandbox-network",
		"--allow-private-urls", "WAGRAPH_ALLOW_PRIVATE_URLS",
		"--webhook-retry", "0s,5s,5m,30m,2h,5h,10h,10h", "--webhook-timeout",
		"--event-retention", "WAGRAPH_EVENT_RETENTION", "720h",
		"--max-body", "64MiB", "--body-timeout", "WAGRAPH_BODY_TIMEOUT", "60s",
		"--graphql-complexity", "10000", "--graphql-max-answer", "WAGRAPH_GRAPHQL_MAX_ANSWER", "16MiB", "--graphql-depth", "--rate", "20/s,100", "--geocoder-url", "--ffmpeg",
		"--log-level", "--log-format", "WAGRAPH_LOG_FORMAT", "--wa-version", "WAGRAPH_WA_VERSION",
		"--debug-addr", "WAGRAPH_DEBUG_ADDR", "--advertise-addr", "WAGRAPH_ADVERTISE_ADDR",
		"--lease-ttl", "WAGRAPH_LEASE_TTL", "15s", "--node-id", "WAGRAPH_NODE_ID",
		"--trusted-proxy", "WAGRAPH_TRUSTED_PROXY", "--media-concurrency", "WAGRAPH_MEDIA_CONCURRENCY", "2,2,4",
		"--cluster-addr", "WAGRAPH_CLUSTER_ADDR", "--cluster-tls-cert", "WAGRAPH_CLUSTER_TLS_CERT",
		"--cluster-tls-key", "WAGRAPH_CLUSTER_TLS_KEY", "--cluster-tls-ca", "WAGRAPH_CLUSTER_TLS_CA",
		"--mcp", "WAGRAPH_MCP", "--mcp-read-only", "WAGRAPH_MCP_READ_ONLY", "MCP server:",
		"--nats-url", "WAGRAPH_NATS_URL", "--nats-creds", "WAGRAPH_NATS_CREDS", "--nats-stream", "WAGRAPH_NATS_STREAM",
		"--media-store", "WAGRAPH_MEDIA_STORE", "--media-s3-endpoint", "WAGRAPH_MEDIA_S3_ENDPOINT", "--media-keep", "WAGRAPH_MEDIA_KEEP",
		"--media-max-size", "WAGRAPH_MEDIA_MAX_SIZE", "--media-retention", "WAGRAPH_MEDIA_RETENTION",
		"Server:", "Storage:", "WhatsApp:", "Media:", "Webhooks:", "Limits:", "Cluster (PostgreSQL):", "Event stream (NATS JetStream):", "Logging & debugging:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("Usage does not mention %q:\n%s", want, out)
		}
	}
	entries := regexp.MustCompile(`(?m)^  --[a-z-]+`).FindAllString(out, -1)
	if len(entries) != 46 {
		t.Errorf("Usage has %d flag entries, want one per setting (46):\n%s", len(entries), out)
	}
	// Each entry read whole, its wrapped lines joined.
	entry := map[string]string{}
	var last string
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "  --"):
			last = strings.Fields(line)[0]
			entry[last] = strings.Join(strings.Fields(line), " ")
		case strings.HasPrefix(line, "     ") && last != "":
			entry[last] += " " + strings.Join(strings.Fields(line), " ")
		default:
			last = ""
		}
	}
	for flag, want := range map[string]string{
		"--addr":               `^--addr host:port listen address \(env WAGRAPH_ADDR, default 127\.0\.0\.1:8080\)$`,
		"--sandbox":            `^--sandbox bool use the simulated WhatsApp network .*\(env WAGRAPH_SANDBOX, default false\)$`,
		"--allow-private-urls": `^--allow-private-urls bool .*\(env WAGRAPH_ALLOW_PRIVATE_URLS, default false; true with --sandbox\)$`,
		"--ffmpeg":             `^--ffmpeg path converter for voice notes .*\(env WAGRAPH_FFMPEG, default ffmpeg on PATH\)$`,
		"--max-body":           `^--max-body size .*\(env WAGRAPH_MAX_BODY, default 64MiB\)$`,
		"--webhook-timeout":    `^--webhook-timeout duration .*\(env WAGRAPH_WEBHOOK_TIMEOUT, default 15s\)$`,
		"--graphql-depth":      `^--graphql-depth int .*\(env WAGRAPH_GRAPHQL_DEPTH, default 15\)$`,
		"--mcp":                `^--mcp bool serve the MCP server .*\(env WAGRAPH_MCP, default true\)$`,
		"--media-store":        `^--media-store store where received media is kept.*\(env WAGRAPH_MEDIA_STORE, default local; none with --database-url\)$`,
		"--media-retention":    `^--media-retention duration .*\(env WAGRAPH_MEDIA_RETENTION, default 0: forever\)$`,
	} {
		if !regexp.MustCompile(want).MatchString(entry[flag]) {
			t.Errorf("the entry of %s is %q; want it to match %s", flag, entry[flag], want)
		}
	}
	if len(entry) != 46 {
		t.Errorf("%d entries, want 46", len(entry))
	}
	// The --addr line itself has its variable beside it.
	if !regexp.MustCompile(`(?m)^  --addr host:port +listen address \(env WAGRAPH_ADDR, default 127\.0\.0\.1:8080\)$`).MatchString(out) {
		t.Errorf("--addr and WAGRAPH_ADDR are not on one line:\n%s", out)
	}
	if strings.Contains(out, "default none (") || strings.Contains(out, "ffmpeg on PATH; none means") {
		t.Errorf("Usage contradicts a default:\n%s", out)
	}
}

func TestRateString(t *testing.T) {
	tests := []struct {
		r    config.Rate
		want string
	}{
		{config.Rate{Per: 20, Burst: 100}, "20/s,100"},
		{config.Rate{Per: 0.5, Burst: 1}, "0.5/s,1"},
	}
	for _, tt := range tests {
		if got := tt.r.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.r, got, tt.want)
		}
	}
	// String is the flag syntax: it reads back.
	c, err := config.Load([]string{"--rate", (config.Rate{Per: 2.5, Burst: 7}).String()}, noEnv, io.Discard)
	if err != nil || c.Rate != (config.Rate{Per: 2.5, Burst: 7}) {
		t.Errorf("Rate.String does not read back: %+v, %v", c.Rate, err)
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr string
	}{
		{"0", 0, ""},
		{"10", 10, ""},
		{"10B", 10, ""},
		{"1KB", 1000, ""},
		{"1KiB", 1024, ""},
		{"1MB", 1_000_000, ""},
		{"64MiB", 67108864, ""},
		{"1GB", 1_000_000_000, ""},
		{"4GiB", 4 << 30, ""},
		{"1.5KiB", 1536, ""},
		{" 2 GiB ", 2 << 30, ""},
		{"12XB", 0, "unknown unit"},
		{"64mib", 0, "unknown unit"},
		{"MiB", 0, "want a size"},
		{"", 0, "want a size"},
		{"1.2.3MB", 0, "want a size"},
		{"-5", 0, "unknown unit"},
		{"1e3", 0, "unknown unit"},
		{"99999999999999999999GiB", 0, "too large"},
		{"9223372036854775807", 0, "too large"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := config.ParseSize(tt.in)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("ParseSize(%q) = %d, want an error", tt.in, got)
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("ParseSize(%q) error %q does not contain %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseSize(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("ParseSize(%q) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

func TestFFmpegNone(t *testing.T) {
	c, err := config.Load([]string{"--ffmpeg", "none"}, noEnv, io.Discard)
	if err != nil || c.FFmpeg != "" {
		t.Fatalf("--ffmpeg none: FFmpeg=%q err=%v, want no converter", c.FFmpeg, err)
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{
		64 << 20: "64 MiB", 1 << 10: "1 KiB", 1536: "1.5 KiB", 100: "100 bytes", 3 << 19: "1.5 MiB", 4 << 30: "4 GiB",
	} {
		if got := config.FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

// Every loopback spelling is a debug address; anything else is refused
// (TestLoadBadValues).
func TestDebugAddrLoopback(t *testing.T) {
	for _, v := range []string{"127.0.0.1:6060", "127.0.0.2:6060", "localhost:6060", "[::1]:6060", "127.0.0.1:0"} {
		c, err := config.Load([]string{"--debug-addr", v}, noEnv, io.Discard)
		if err != nil {
			t.Errorf("--debug-addr %s refused: %v", v, err)
			continue
		}
		if c.DebugAddr != v {
			t.Errorf("--debug-addr %s: DebugAddr = %q", v, c.DebugAddr)
		}
	}
}

// An advertised address only means something to the other processes of a
// cluster, and a cluster is only on PostgreSQL: the setting alone is a
// mistake worth stopping the start for.
func TestLoadAdvertiseAddrNeedsDatabaseURL(t *testing.T) {
	_, err := config.Load([]string{"--advertise-addr", "10.0.0.5:8080"}, noEnv, io.Discard)
	var cerr *config.Error
	if !errors.As(err, &cerr) || cerr.Flag != "advertise-addr" || !strings.Contains(cerr.Problem, "--database-url") {
		t.Fatalf("Load(--advertise-addr alone) = %v, want an advertise-addr error naming --database-url", err)
	}
	c, err := config.Load([]string{"--advertise-addr", "10.0.0.5:8080", "--database-url", "postgres://u@db:5432/w", "--lease-ttl", "9s"}, noEnv, io.Discard)
	if err != nil {
		t.Fatalf("Load(cluster settings): %v", err)
	}
	if c.AdvertiseAddr != "10.0.0.5:8080" || c.LeaseTTL != 9*time.Second {
		t.Errorf("AdvertiseAddr, LeaseTTL = %q, %s; want 10.0.0.5:8080, 9s", c.AdvertiseAddr, c.LeaseTTL)
	}
}

// The data directory is held by whoever keeps something in it: SQLite's
// files, or the in-process sandbox's state. PostgreSQL processes outside
// the sandbox (a cluster on one machine) leave it alone.
func TestUsesDataDir(t *testing.T) {
	const pg = "postgres://u@db:5432/w"
	for _, tt := range []struct {
		args []string
		want bool
	}{
		{nil, true},
		{[]string{"--sandbox"}, true},
		{[]string{"--database-url", pg}, false},
		{[]string{"--database-url", pg, "--sandbox"}, true},
		{[]string{"--database-url", pg, "--sandbox-network", "127.0.0.1:7781"}, false},
		{[]string{"--sandbox-network", "127.0.0.1:7781"}, true},
	} {
		c, err := config.Load(tt.args, noEnv, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.UsesDataDir(); got != tt.want {
			t.Errorf("%q: UsesDataDir = %v, want %v", tt.args, got, tt.want)
		}
	}
}

// Register with names defines only those flags; FromFlags still reads the
// others from the environment.
func TestRegisterSome(t *testing.T) {
	fs := pflag.NewFlagSet("wagraph backup", pflag.ContinueOnError)
	config.Register(fs, "data-dir", "database-url")
	if err := fs.Parse([]string{"--data-dir", "/srv/wg"}); err != nil {
		t.Fatal(err)
	}
	if fs.Lookup("addr") != nil {
		t.Error("--addr defined although not asked for")
	}
	c, err := config.FromFlags(fs, env(map[string]string{"WAGRAPH_LOG_FORMAT": "json", "WAGRAPH_DATA_DIR": "/other"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.DataDir != "/srv/wg" || c.LogFormat != "json" {
		t.Errorf("DataDir %q LogFormat %q, want the flag's /srv/wg and the environment's json", c.DataDir, c.LogFormat)
	}
	if err := fs.Parse([]string{"--addr", "x"}); err == nil || !strings.Contains(err.Error(), "unknown flag: --addr") {
		t.Errorf("--addr on a set without it: %v", err)
	}
}

// TestTrustedProxies: addresses and prefixes, written as they come, each
// read as the prefix it names; anything else is refused naming the entry.
func TestTrustedProxies(t *testing.T) {
	tests := []struct {
		value   string
		want    string // the prefixes, comma-separated
		problem string
	}{
		{"", "", ""},
		{"127.0.0.1", "127.0.0.1/32", ""},
		{"10.0.0.0/8, ::1 ,192.168.1.7/24", "10.0.0.0/8,::1/128,192.168.1.0/24", ""},
		{"::ffff:10.1.2.3", "10.1.2.3/32", ""},
		{"10.0.0.0/8,proxy.internal", "", `entry 2 "proxy.internal" is not an IP address or a CIDR prefix`},
		{"10.0.0.0/33", "", "entry 1"},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			c, err := config.Load([]string{"--trusted-proxy", tt.value}, func(string) (string, bool) { return "", false }, io.Discard)
			if tt.problem != "" {
				if err == nil || !strings.Contains(err.Error(), tt.problem) || !strings.Contains(err.Error(), "--trusted-proxy") {
					t.Fatalf("error %v; want one naming --trusted-proxy and %q", err, tt.problem)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range c.TrustedProxies {
				got = append(got, p.String())
			}
			if strings.Join(got, ",") != tt.want {
				t.Errorf("read as %v; want %s", got, tt.want)
			}
		})
	}
}

// pemFile writes PEM blocks to a file of dir and returns its path.
func pemFile(t *testing.T, dir, name, typ string, ders ...[]byte) string {
	t.Helper()
	var b bytes.Buffer
	for _, der := range ders {
		if err := pem.Encode(&b, &pem.Block{Type: typ, Bytes: der}); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// clusterPKI writes a throwaway CA and certificates it signed (with their
// keys) to files, returning their paths.
type clusterPKI struct {
	ca, cert, key       string // a process's certificate for both ends of a connection
	serverOnly, soKey   string // one for server authentication only
	strangerCert, stKey string // one of another CA
}

func newClusterPKI(t *testing.T) clusterPKI {
	t.Helper()
	dir := t.TempDir()
	newCA := func(name string) (*x509.Certificate, *ecdsa.PrivateKey, []byte) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		if err != nil {
			t.Fatal(err)
		}
		cert, _ := x509.ParseCertificate(der)
		return cert, key, der
	}
	issue := func(ca *x509.Certificate, caKey *ecdsa.PrivateKey, name string, uses ...x509.ExtKeyUsage) (certPath, keyPath string) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: uses, IPAddresses: []net.IP{net.IPv4(10, 0, 0, 5)}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		return pemFile(t, dir, name+".crt", "CERTIFICATE", der), pemFile(t, dir, name+".key", "PRIVATE KEY", kder)
	}
	ca, caKey, caDER := newCA("wagraph cluster")
	other, otherKey, _ := newCA("somebody else")
	var p clusterPKI
	p.ca = pemFile(t, dir, "ca.crt", "CERTIFICATE", caDER)
	p.cert, p.key = issue(ca, caKey, "node1", x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth)
	p.serverOnly, p.soKey = issue(ca, caKey, "server-only", x509.ExtKeyUsageServerAuth)
	p.strangerCert, p.stKey = issue(other, otherKey, "stranger", x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth)
	return p
}

// TestLoadClusterTLS: the cluster's TLS is all three files or none, on
// PostgreSQL with a cluster listener of its own; each file is read and
// checked at start (the key the certificate's, the certificate signed by
// the CA for server and client authentication), a problem naming its
// setting and what to do.
func TestLoadClusterTLS(t *testing.T) {
	p := newClusterPKI(t)
	const pg = "postgres://u@db:5432/w"
	notPEM := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"--database-url", pg, "--cluster-addr", "10.0.0.5:8443"}
	tlsArgs := func(cert, key, ca string) []string {
		return append(append([]string{}, base...), "--cluster-tls-cert", cert, "--cluster-tls-key", key, "--cluster-tls-ca", ca)
	}
	tests := []struct {
		name          string
		args          []string
		flag, problem string // the error expected; none when flag is ""
	}{
		{"all three", tlsArgs(p.cert, p.key, p.ca), "", ""},
		{"a cluster listener without TLS", base, "", ""},
		{"cluster listener without PostgreSQL", []string{"--cluster-addr", "10.0.0.5:8443"}, "cluster-addr", "--database-url"},
		{"certificate only", append(append([]string{}, base...), "--cluster-tls-cert", p.cert), "cluster-tls-key", "together"},
		{"no certificate", append(append([]string{}, base...), "--cluster-tls-key", p.key, "--cluster-tls-ca", p.ca), "cluster-tls-cert", "together"},
		{"no CA", append(append([]string{}, base...), "--cluster-tls-cert", p.cert, "--cluster-tls-key", p.key), "cluster-tls-ca", "together"},
		{"without PostgreSQL", []string{"--cluster-tls-cert", p.cert, "--cluster-tls-key", p.key, "--cluster-tls-ca", p.ca}, "cluster-tls-cert", "--database-url"},
		{"without a cluster listener", []string{"--database-url", pg, "--cluster-tls-cert", p.cert, "--cluster-tls-key", p.key, "--cluster-tls-ca", p.ca}, "cluster-addr", "--advertise-addr"},
		{"certificate missing", tlsArgs(p.cert+".gone", p.key, p.ca), "cluster-tls-cert", "cannot read"},
		{"key of another certificate", tlsArgs(p.cert, p.stKey, p.ca), "cluster-tls-key", "private key"},
		{"key not PEM", tlsArgs(p.cert, notPEM, p.ca), "cluster-tls-key", "private key"},
		{"CA not PEM", tlsArgs(p.cert, p.key, notPEM), "cluster-tls-ca", "no PEM certificate"},
		{"certificate of another CA", tlsArgs(p.strangerCert, p.stKey, p.ca), "cluster-tls-cert", "signed by --cluster-tls-ca"},
		{"certificate for servers only", tlsArgs(p.serverOnly, p.soKey, p.ca), "cluster-tls-cert", "client authentication"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.Load(tt.args, noEnv, io.Discard)
			if tt.flag == "" {
				if err != nil {
					t.Fatal(err)
				}
				if c.ClusterAddr != "10.0.0.5:8443" || (c.ClusterTLS != nil) != (c.ClusterTLSCert != "") {
					t.Errorf("ClusterAddr %q, ClusterTLS %v for cert %q", c.ClusterAddr, c.ClusterTLS, c.ClusterTLSCert)
				}
				if c.ClusterTLS != nil && (len(c.ClusterTLS.Cert.Certificate) != 1 || c.ClusterTLS.CAs == nil) {
					t.Errorf("ClusterTLS %+v; want the certificate and the CA loaded", c.ClusterTLS)
				}
				return
			}
			var ce *config.Error
			if !errors.As(err, &ce) || ce.Flag != tt.flag || !strings.Contains(ce.Problem, tt.problem) {
				t.Fatalf("Load: %v; want an error of --%s saying %q", err, tt.flag, tt.problem)
			}
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Errorf("message is not one line: %q", err)
			}
		})
	}
	// The environment sets them as well.
	c, err := config.Load(base, env(map[string]string{
		"WAGRAPH_CLUSTER_TLS_CERT": p.cert, "WAGRAPH_CLUSTER_TLS_KEY": p.key, "WAGRAPH_CLUSTER_TLS_CA": p.ca,
	}), io.Discard)
	if err != nil || c.ClusterTLS == nil {
		t.Errorf("from the environment: %v, %v", c.ClusterTLS, err)
	}
}

// TestLoadNATS: the credentials file needs a broker; with one it is taken.
func TestLoadNATS(t *testing.T) {
	creds := filepath.Join(t.TempDir(), "wagraph.creds")
	if err := os.WriteFile(creds, []byte("-----BEGIN NATS USER JWT-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := config.Load([]string{"--nats-creds", creds}, noEnv, io.Discard)
	var cerr *config.Error
	if !errors.As(err, &cerr) || cerr.Flag != "nats-creds" || !strings.Contains(cerr.Problem, "--nats-url") {
		t.Fatalf("Load(--nats-creds alone) = %v, want a nats-creds error naming --nats-url", err)
	}
	c, err := config.Load([]string{"--nats-url", "nats://127.0.0.1:4222", "--nats-creds", creds}, noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if want := (config.NATS{URL: "nats://127.0.0.1:4222", Creds: creds, Stream: "WAGRAPH"}); c.NATS != want {
		t.Errorf("NATS = %+v, want %+v", c.NATS, want)
	}
	// The default stream is the publisher's, declared there.
	if c.NATS.Stream != natsstream.DefaultStream {
		t.Errorf("--nats-stream defaults to %q, the publisher's default is %q", c.NATS.Stream, natsstream.DefaultStream)
	}
}

package logtest_test

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/wagraph/wagraph/internal/logtest"
)

// Loggers on many goroutines write into one Buffer while it is read; under
// -race a Buffer without its lock fails here, and every line arrives whole.
func TestBufferConcurrentWrites(t *testing.T) {
	const writers, each = 8, 50
	log, buf := logtest.New(slog.LevelDebug)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				log.Debug("written", "writer", w, "i", i)
				_ = buf.String()
			}
		}()
	}
	wg.Wait()

	recs := buf.Records()
	if len(recs) != writers*each {
		t.Fatalf("%d records, want %d:\n%s", len(recs), writers*each, buf.String())
	}
	seen := map[string]bool{}
	for _, r := range recs {
		if r["msg"] != "written" || r["level"] != "DEBUG" {
			t.Errorf("record %v, want msg written at DEBUG", r)
		}
		seen[fmt.Sprint(r["writer"], "/", r["i"])] = true
	}
	if len(seen) != writers*each {
		t.Errorf("%d distinct records, want %d", len(seen), writers*each)
	}
}

// New's level filters; nil is slog's default, info.
func TestNewLevel(t *testing.T) {
	tests := []struct {
		name  string
		level slog.Leveler
		want  []string
	}{
		{"nil is info", nil, []string{"info", "warn"}},
		{"debug", slog.LevelDebug, []string{"debug", "info", "warn"}},
		{"warn", slog.LevelWarn, []string{"warn"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log, buf := logtest.New(tt.level)
			log.Debug("debug")
			log.Info("info")
			log.Warn("warn")
			var got []string
			for _, r := range buf.Records() {
				got = append(got, fmt.Sprint(r["msg"]))
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("logged %q, want %q", got, tt.want)
			}
		})
	}
}

// Records decodes the JSON lines and skips a line that is not JSON; Lines
// keeps every non-empty line and filters by substrings.
func TestBufferReadBack(t *testing.T) {
	var buf logtest.Buffer
	for _, s := range []string{
		`{"msg":"one","n":1}` + "\n",
		"panic: not JSON\n",
		"\n",
		`{"msg":"two","n":2}` + "\n",
	} {
		if _, err := buf.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}

	recs := buf.Records()
	if len(recs) != 2 || recs[0]["msg"] != "one" || recs[1]["msg"] != "two" || recs[1]["n"] != 2.0 {
		t.Errorf("Records = %v, want the records one and two", recs)
	}

	tests := []struct {
		name     string
		contains []string
		want     []string
	}{
		{"all", nil, []string{`{"msg":"one","n":1}`, "panic: not JSON", `{"msg":"two","n":2}`}},
		{"one part", []string{"msg"}, []string{`{"msg":"one","n":1}`, `{"msg":"two","n":2}`}},
		{"every part", []string{"msg", `"n":2`}, []string{`{"msg":"two","n":2}`}},
		{"none match", []string{"absent"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := buf.Lines(tt.contains...)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") || len(got) != len(tt.want) {
				t.Errorf("Lines(%q) = %q, want %q", tt.contains, got, tt.want)
			}
		})
	}
	if !strings.HasPrefix(buf.String(), `{"msg":"one"`) || strings.Count(buf.String(), "\n") != 4 {
		t.Errorf("String = %q, want all four writes", buf.String())
	}
}

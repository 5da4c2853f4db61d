// Package logtest keeps a log in memory for tests that assert what was
// logged: the code under test writes from its own goroutines while the test
// reads, so the buffer takes turns. It is imported by tests only.
package logtest

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
)

// Buffer is a goroutine-safe, in-memory io.Writer, read back whole, by line
// or as JSON records.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// New returns a JSON logger at level writing into a new Buffer; a nil level
// is slog's default, info.
func New(level slog.Leveler) (*slog.Logger, *Buffer) {
	b := &Buffer{}
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: level})), b
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Lines returns the non-empty lines written so far that contain every one of
// contains; with none, all of them.
func (b *Buffer) Lines(contains ...string) []string {
	var out []string
	for _, l := range strings.Split(b.String(), "\n") {
		match := l != ""
		for _, c := range contains {
			match = match && strings.Contains(l, c)
		}
		if match {
			out = append(out, l)
		}
	}
	return out
}

// Records returns the lines written so far decoded as JSON objects. A line
// that is not one (a text handler's, a panic's) is skipped: callers filter
// records by their fields, and such a line has none.
func (b *Buffer) Records() []map[string]any {
	var out []map[string]any
	for _, l := range b.Lines() {
		var rec map[string]any
		if json.Unmarshal([]byte(l), &rec) == nil {
			out = append(out, rec)
		}
	}
	return out
}

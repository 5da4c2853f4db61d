// Package receiver is a webhook receiver for trying wagraph out: `wagraph
// receive` serves it on a local port, a webhook points at it, and each
// delivery is checked (Standard Webhooks signature and timestamp, when the
// webhook's secret is given) and printed as one line. It is what a newcomer
// needs between "I created a webhook" and "I wrote a receiver", and a model
// of what a receiver must do: verify before trusting, answer 2xx quickly,
// de-duplicate on webhook-id.
package receiver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/wagraph/wagraph/internal/webhook"
)

// MaxBody bounds one delivery's body: an event envelope is a few KiB (media
// travel by reference), so anything larger is not wagraph's.
const MaxBody = 1 << 20

// Options configure a Handler.
type Options struct {
	// Secret is the webhook's whsec_ secret; empty prints deliveries
	// unverified, and says so on each line.
	Secret string
	// Now is the receiver's clock (time.Now when nil).
	Now func() time.Time
	// Seen bounds how many webhook-ids are remembered to spot a re-sent
	// delivery (1,000 when 0).
	Seen int
}

// Handler serves deliveries and writes one line per delivery to out.
type Handler struct {
	out    io.Writer
	secret string
	now    func() time.Time

	mu    sync.Mutex // out, and the ids seen
	seen  map[string]struct{}
	order []string
	limit int
}

// New returns a Handler writing to out.
func New(out io.Writer, opts Options) *Handler {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Seen <= 0 {
		opts.Seen = 1000
	}
	return &Handler{out: out, secret: opts.Secret, now: opts.Now, seen: map[string]struct{}{}, limit: opts.Seen}
}

// envelope is what a delivery body holds (docs/events.md).
type envelope struct {
	ID        string          `json:"id"`
	Seq       int64           `json:"seq"`
	Event     string          `json:"event"`
	SessionID string          `json:"sessionId"`
	Timestamp string          `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "webhook deliveries are POSTed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if err != nil {
		http.Error(w, "body unreadable or over 1 MiB", http.StatusRequestEntityTooLarge)
		return
	}
	verified := "unverified (no --secret)"
	if h.secret != "" {
		if err := webhook.Verify(h.secret, r.Header, body, h.now(), webhook.DefaultTolerance); err != nil {
			h.printf("REFUSED %s: %v\n", printable(r.Header.Get(webhook.HeaderID)), err)
			http.Error(w, "signature refused: "+err.Error(), http.StatusUnauthorized)
			return
		}
		verified = "signature ok"
	}
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil || env.Event == "" {
		h.printf("REFUSED %s: the body is not an event envelope\n", printable(r.Header.Get(webhook.HeaderID)))
		http.Error(w, "not an event envelope", http.StatusBadRequest)
		return
	}
	again := ""
	if h.remember(r.Header.Get(webhook.HeaderID)) {
		again = " (again: same webhook-id, drop it)"
	}
	h.printf("%s seq=%d session=%s id=%s %s%s\n  %s\n", printable(env.Event), env.Seq, printable(env.SessionID), printable(env.ID), verified, again, compact(env.Data))
	w.WriteHeader(http.StatusNoContent)
}

// remember records id and reports whether it was seen before.
func (h *Handler) remember(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.seen[id]; ok {
		return true
	}
	h.seen[id] = struct{}{}
	h.order = append(h.order, id)
	if len(h.order) > h.limit {
		delete(h.seen, h.order[0])
		h.order = h.order[1:]
	}
	return false
}

func (h *Handler) printf(format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fmt.Fprintf(h.out, format, args...)
}

// compact writes data on one line, re-encoded, with every character a
// terminal would act on rather than show escaped (escapeControls), so a
// text a contact wrote cannot drive the terminal. The top-level keys whose
// value is null are left out: every kind documents all its keys, most of
// them null for any one message, and the line is for reading.
func compact(data json.RawMessage) string {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return "null"
	}
	if m, ok := v.(map[string]any); ok {
		for k, x := range m {
			if x == nil {
				delete(m, k)
			}
		}
	}
	b, _ := json.Marshal(v)
	return escapeControls(b)
}

// escapeControls is JSON b with the characters encoding/json leaves raw
// that a terminal acts on written as \uXXXX escapes, which read back as
// the same text: DEL and the C1 controls (U+009B is CSI in one character:
// an 8-bit terminal runs what follows as an escape sequence; U+0085 is a
// line break) and the bidirectional controls (U+202E, the embeddings and
// the isolates turn what follows around, so that a line reads as another;
// the marks are invisible). encoding/json escapes the C0 controls itself.
// Outside its strings JSON is ASCII punctuation, so only text is changed.
func escapeControls(b []byte) string {
	var out strings.Builder
	out.Grow(len(b))
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if terminalControl(r) {
			fmt.Fprintf(&out, `\u%04x`, r)
		} else {
			out.Write(b[:n])
		}
		b = b[n:]
	}
	return out.String()
}

// terminalControl reports whether a terminal acts on r rather than shows
// it: a C0 or C1 control, DEL, or a bidirectional control. All are in the
// Basic Multilingual Plane, so one \uXXXX escape writes each.
func terminalControl(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}

// printable quotes a value that holds anything but printable characters
// (the controls of terminalControl among them, escaped by strconv.Quote),
// for the same reason: an unverified sender chooses every byte.
func printable(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

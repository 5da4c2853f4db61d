// Package mediakeep keeps the media of the sessions' messages in a media
// store (internal/mediastore; integrations.md §3): each received media is
// downloaded once, after its message is stored, by a Keeper of its own
// (never on the path that acknowledges the stanza to WhatsApp), retried with
// backoff, asked again from the phone when WhatsApp's media host no longer
// has it; media the sessions send is kept from the bytes they uploaded. A
// pending download is a message's media_due (set in the statement that
// records the message, by the message store), so a restart loses none.
// The media route serves the kept file; a message whose file is not kept
// (yet, skipped, pruned) falls back to the download on demand.
package mediakeep

import (
	"slices"
	"time"
)

// The kinds of media --media-keep names: WhatsApp's, a voice note being
// audio.
const (
	Image    = "image"
	Audio    = "audio"
	Document = "document"
	Video    = "video"
	Sticker  = "sticker"
)

// Defaults of Options, in code.
const (
	DefaultMaxSize     = 64 << 20
	DefaultConcurrency = 4
	DefaultMaxTries    = 30
	firstRetry         = 2 * time.Second
	maxRetry           = time.Hour
	// sentGrace is how long a message the session sent waits before the
	// keeper looks at it: its media is kept from the bytes it uploaded
	// (KeepSent) as the send returns; the keeper downloads only what a
	// send from the phone, or a failed keep, left.
	sentGrace = 30 * time.Second
)

// Options say what is kept and how the keeping runs; the zero value is
// the defaults.
type Options struct {
	// Kinds are the kinds kept (config.MediaKinds, --media-keep's); nil:
	// all of them, empty and not nil: none.
	Kinds []string
	// MaxSize skips media larger than this many bytes (0: DefaultMaxSize).
	MaxSize int64
	// Retention removes kept files older than this (the prune loop); the
	// messages fall back to the download on demand. 0: kept forever.
	Retention time.Duration
	// Concurrency bounds the downloads running at once, shared fairly
	// between the sessions (0: DefaultConcurrency).
	Concurrency int
	// MaxTries is how many failed downloads of a media the keeper makes
	// before it leaves it to the download on demand (0: DefaultMaxTries;
	// with the backoff up to an hour, most of a day).
	MaxTries int
	// Poll is how often the keeper looks for due downloads (0: 1 s).
	Poll time.Duration
	// AskWait is how long the keeper waits for the phone's answer to a
	// media retry (its messages.media-update makes the download due at
	// once) before it tries, and asks, again (0: 2 min).
	AskWait time.Duration
	// PruneEvery is how often the retention is applied (0: 1 h).
	PruneEvery time.Duration
}

func (o Options) withDefaults() Options {
	if o.MaxSize <= 0 {
		o.MaxSize = DefaultMaxSize
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.MaxTries <= 0 {
		o.MaxTries = DefaultMaxTries
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.AskWait <= 0 {
		o.AskWait = 2 * time.Minute
	}
	if o.PruneEvery <= 0 {
		o.PruneEvery = time.Hour
	}
	return o
}

// KindOf is the kind of media of a message of type typ (the message
// store's types: image, video, audio, voice, document, sticker); "" for a
// message without media.
func KindOf(typ string) string {
	switch typ {
	case "voice", Audio:
		return Audio
	case Image, Video, Document, Sticker:
		return typ
	}
	return ""
}

// Wants reports whether the media of a message of type typ, size bytes
// long (0: not declared), is kept. View-once media never is: it is served
// once, and a copy kept would outlive that view.
func (o Options) Wants(typ string, size int64, viewOnce bool) bool {
	kind := KindOf(typ)
	if kind == "" || viewOnce {
		return false
	}
	if o.Kinds != nil && !slices.Contains(o.Kinds, kind) {
		return false
	}
	return size <= o.withDefaults().MaxSize
}

// DueAt is when the keeper first looks at the media of a message recorded
// at now: at once for a received one, after sentGrace for one the account
// sent (its upload is kept as the send returns).
func DueAt(now time.Time, fromMe bool) time.Time {
	if fromMe {
		return now.Add(sentGrace)
	}
	return now
}

// Backoff is the wait after the tries-th failed download: 2 s (a session
// still connecting after a start), doubling, at most an hour.
func Backoff(tries int) time.Duration {
	if tries < 1 {
		tries = 1
	}
	if tries > 20 {
		return maxRetry
	}
	return min(firstRetry<<(tries-1), maxRetry)
}

package mediakeep_test

import (
	"slices"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/mediakeep"
)

// TestWants: the kinds and the size bound choose what is kept; a voice
// note is audio, view-once media and messages without media never are,
// and an undeclared size (0) is bounded by the download instead.
func TestWants(t *testing.T) {
	onlyImages := mediakeep.Options{Kinds: []string{mediakeep.Image}}
	none := mediakeep.Options{Kinds: []string{}}
	small := mediakeep.Options{MaxSize: 100}
	for _, tt := range []struct {
		name     string
		opts     mediakeep.Options
		typ      string
		size     int64
		viewOnce bool
		want     bool
	}{
		{"image by default", mediakeep.Options{}, "image", 1 << 20, false, true},
		{"video", mediakeep.Options{}, "video", 1 << 20, false, true},
		{"voice note is audio", mediakeep.Options{Kinds: []string{mediakeep.Audio}}, "voice", 10, false, true},
		{"document", mediakeep.Options{}, "document", 10, false, true},
		{"sticker", mediakeep.Options{}, "sticker", 10, false, true},
		{"text has none", mediakeep.Options{}, "text", 0, false, false},
		{"location has none", mediakeep.Options{}, "location", 0, false, false},
		{"kind not listed", onlyImages, "video", 10, false, false},
		{"kind listed", onlyImages, "image", 10, false, true},
		{"keep none", none, "image", 10, false, false},
		{"view-once", mediakeep.Options{}, "image", 10, true, false},
		{"at the default bound", mediakeep.Options{}, "document", mediakeep.DefaultMaxSize, false, true},
		{"past the default bound", mediakeep.Options{}, "document", mediakeep.DefaultMaxSize + 1, false, false},
		{"past a bound", small, "image", 101, false, false},
		{"size not declared", small, "image", 0, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.opts.Wants(tt.typ, tt.size, tt.viewOnce); got != tt.want {
				t.Errorf("Wants(%q, %d, %v) = %v, want %v", tt.typ, tt.size, tt.viewOnce, got, tt.want)
			}
		})
	}
}

// TestKindsAsTheFlagNamesThem: the kinds --media-keep names
// (config.MediaKinds) are the kinds KindOf tells messages apart by, no
// more, no fewer.
func TestKindsAsTheFlagNamesThem(t *testing.T) {
	var told []string
	for _, typ := range []string{"text", "image", "video", "audio", "voice", "document", "sticker", "location", "contact", "poll"} {
		if k := mediakeep.KindOf(typ); k != "" && !slices.Contains(told, k) {
			told = append(told, k)
		}
	}
	slices.Sort(told)
	flag := slices.Sorted(slices.Values(config.MediaKinds()))
	if !slices.Equal(told, flag) {
		t.Errorf("KindOf tells %v, --media-keep names %v", told, flag)
	}
}

// TestBackoff: 2 s, doubling, at most an hour; a message the account
// sent waits for its upload to be kept first.
func TestBackoff(t *testing.T) {
	for tries, want := range map[int]time.Duration{0: 2 * time.Second, 1: 2 * time.Second, 2: 4 * time.Second, 5: 32 * time.Second,
		11: 2048 * time.Second, 12: time.Hour, 40: time.Hour} {
		if got := mediakeep.Backoff(tries); got != want {
			t.Errorf("Backoff(%d) = %v, want %v", tries, got, want)
		}
	}
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	if got := mediakeep.DueAt(now, false); !got.Equal(now) {
		t.Errorf("received: due %v, want at once", got)
	}
	if got := mediakeep.DueAt(now, true); !got.After(now) {
		t.Errorf("sent: due %v, want later than %v", got, now)
	}
}

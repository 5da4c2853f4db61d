package media

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/wagraph/wagraph/internal/fault"
)

// mean of w[from:to].
func mean(w []byte, from, to int) float64 {
	sum := 0
	for _, v := range w[from:to] {
		sum += int(v)
	}
	return float64(sum) / float64(to-from)
}

// checkVoiceNote asserts what every voice note must be: OGG/Opus that
// parses, the duration, and a 64-value waveform in 0..100 that rises from
// the first quarter to the last (every sample here gets louder).
func checkVoiceNote(t *testing.T, f File, seconds uint32) {
	t.Helper()
	if !f.VoiceNote || f.Mimetype != "audio/ogg; codecs=opus" || detect(f.Data) != "audio/ogg; codecs=opus" {
		t.Fatalf("voice note %v, mimetype %q, data is %s", f.VoiceNote, f.Mimetype, detect(f.Data))
	}
	if f.Seconds != seconds {
		t.Errorf("seconds %d, want %d", f.Seconds, seconds)
	}
	t.Logf("waveform %v", f.Waveform)
	if len(f.Waveform) != 64 {
		t.Fatalf("waveform has %d values, want 64", len(f.Waveform))
	}
	peak := byte(0)
	for _, v := range f.Waveform {
		if v > 100 {
			t.Fatalf("waveform value %d over 100: %v", v, f.Waveform)
		}
		peak = max(peak, v)
	}
	if peak != 100 {
		t.Errorf("waveform peak %d, want 100: %v", peak, f.Waveform)
	}
	if first, last := mean(f.Waveform, 0, 16), mean(f.Waveform, 48, 64); first+20 > last {
		t.Errorf("waveform does not rise (first quarter %.0f, last %.0f): %v", first, last, f.Waveform)
	}
}

func TestVoiceNote(t *testing.T) {
	ff := needFFmpeg(t)
	ramp := oggOpusOf(t, rampTone)
	silenceNoise := oggOpusOf(t, silenceThenNoise)
	mp3 := ffmpegMake(t, ".mp3", "-f", "lavfi", "-i", rampTone, "-c:a", "libmp3lame", "-b:a", "64k", "-f", "mp3")
	m4a := ffmpegMake(t, ".m4a", "-f", "lavfi", "-i", rampTone, "-c:a", "aac", "-f", "ipod")
	wav := makeWAV(2, 16000)
	cases := []struct {
		name      string
		ffmpeg    string
		data      []byte
		unchanged bool // OGG/Opus is sent as it came
	}{
		{"ogg/opus, waveform from PCM", ff, ramp, true},
		// Without ffmpeg the waveform is the packet-size proxy: it sees the
		// silence, not the ramp of a steady tone, hence silence then noise.
		{"ogg/opus without ffmpeg, waveform from packet sizes", "", silenceNoise, true},
		{"ogg/opus with ffmpeg, silence then noise", ff, silenceNoise, true},
		{"mp3 converted", ff, mp3, false},
		{"m4a converted", ff, m4a, false},
		{"wav converted", ff, wav, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := NewPreparer(c.ffmpeg, nil).Audio(t.Context(), c.data, true)
			if err != nil {
				t.Fatal(err)
			}
			checkVoiceNote(t, f, 2)
			if c.unchanged != bytes.Equal(f.Data, c.data) {
				t.Fatalf("data unchanged: %v, want %v", !c.unchanged, c.unchanged)
			}
		})
	}
	t.Run("waveform is not flat for a steady tone of rising amplitude", func(t *testing.T) {
		f, err := NewPreparer(ff, nil).Audio(t.Context(), ramp, true)
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := byte(100), byte(0)
		for _, v := range f.Waveform[2:62] { // the codec's ramp-in and tail aside
			lo, hi = min(lo, v), max(hi, v)
		}
		if hi-lo < 50 {
			t.Fatalf("waveform spans %d..%d: %v", lo, hi, f.Waveform)
		}
	})
}

func TestVoiceNoteRefusals(t *testing.T) {
	ff := needFFmpeg(t)
	wav := makeWAV(1, 8000)
	over := make([]byte, MaxAudio+1)
	copy(over, wav)
	junkMP3 := append([]byte("ID3\x04\x00\x00\x00\x00\x00\x00"), bytes.Repeat([]byte{0x55, 0xAA, 0x13}, 1000)...)
	videoOnly := ffmpegMake(t, ".mp4", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=5:duration=1", "-c:v", "mpeg4", "-f", "mp4")
	cases := []struct {
		name   string
		ffmpeg string
		data   []byte
		code   fault.Code
		parts  []string
	}{
		{"wav without ffmpeg", "", wav, fault.Unsupported, []string{"voice notes must be OGG/Opus; converting audio/wav needs ffmpeg, which is not installed (install it with make deps or set --ffmpeg)"}},
		{"text", ff, []byte("hello there"), fault.Unsupported, []string{"source is text/plain, not audio"}},
		{"png", ff, makePNG(t, pictureOf(4, 4, gradient)), fault.Unsupported, []string{"source is image/png, not audio"}},
		{"junk mp3", ff, junkMP3, fault.Unsupported, []string{"source (audio/mpeg) could not be converted to OGG/Opus"}},
		{"video without sound", ff, videoOnly, fault.Unsupported, []string{"source (video/mp4) could not be converted to OGG/Opus"}},
		{"over the limit", ff, over, fault.TooLarge, []string{"WhatsApp takes audio up to 16 MiB"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewPreparer(c.ffmpeg, nil).Audio(t.Context(), c.data, true)
			wantFault(t, err, c.code, "", c.parts...)
		})
	}
	t.Run("a cancelled request stops the conversion", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := NewPreparer(ff, nil).Audio(ctx, wav, true)
		if !errors.Is(err, context.Canceled) || fault.From(err) != nil {
			t.Fatalf("got %v; want the context's cancellation, unclassified", err)
		}
	})
	t.Run("a missing ffmpeg binary is an internal error", func(t *testing.T) {
		_, err := NewPreparer(t.TempDir()+"/no-ffmpeg", nil).Audio(t.Context(), wav, true)
		if err == nil || fault.From(err) != nil {
			t.Fatalf("got %v; want an unclassified error", err)
		}
	})
}

func TestPlainAudio(t *testing.T) {
	ff := needFFmpeg(t)
	ogg := oggOpusOf(t, rampTone)
	mp3 := ffmpegMake(t, ".mp3", "-f", "lavfi", "-i", rampTone, "-c:a", "libmp3lame", "-f", "mp3")
	m4a := ffmpegMake(t, ".m4a", "-f", "lavfi", "-i", rampTone, "-c:a", "aac", "-f", "ipod")
	aac := ffmpegMake(t, ".aac", "-f", "lavfi", "-i", rampTone, "-c:a", "aac", "-f", "adts")
	amr := []byte("#!AMR\n\x3c\x48\xf5\x1f\x96\x66\x79\xe1\xe0\x01\xe7\x8a\xf0\x00\x00\x00\xc0\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")
	cases := []struct {
		name     string
		data     []byte
		mimetype string
		seconds  uint32
	}{
		{"ogg/opus", ogg, "audio/ogg; codecs=opus", 2},
		{"mp3", mp3, "audio/mpeg", 0},
		{"m4a", m4a, "audio/mp4", 2},
		{"adts aac", aac, "audio/aac", 0},
		{"amr", amr, "audio/amr", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := NewPreparer(ff, nil).Audio(t.Context(), c.data, false)
			if err != nil {
				t.Fatal(err)
			}
			if f.Mimetype != c.mimetype || f.Seconds != c.seconds || f.VoiceNote || f.Waveform != nil || !bytes.Equal(f.Data, c.data) {
				t.Fatalf("got %s %ds voice %v waveform %d; want %s %ds, sent as it came", f.Mimetype, f.Seconds, f.VoiceNote, len(f.Waveform), c.mimetype, c.seconds)
			}
		})
	}
	_, err := NewPreparer(ff, nil).Audio(t.Context(), makeWAV(1, 8000), false)
	wantFault(t, err, fault.Unsupported, "", "source is audio/wav", "OGG/Opus (audio/ogg), MP3 (audio/mpeg)", "sent as a voice note it would be converted")
	_, err = NewPreparer("", nil).Audio(t.Context(), makeWAV(1, 8000), false)
	f := fault.From(err)
	if f == nil || f.Code != fault.Unsupported || bytes.Contains([]byte(f.Message), []byte("converted")) {
		t.Fatalf("without ffmpeg: %v; want 415 without a conversion hint", err)
	}
}

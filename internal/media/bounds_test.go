package media

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/fairpool"
	"github.com/wagraph/wagraph/internal/fault"
)

// pngChunk is one PNG chunk with its CRC.
func pngChunk(typ string, data []byte) []byte {
	out := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
	out = append(append(out, typ...), data...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out[4:]))
}

// pngHeader is a PNG's signature and IHDR: all image.DecodeConfig reads.
// colorType 6 is RGBA; depth 8 or 16.
func pngHeader(w, h uint32, depth, colorType byte) []byte {
	ihdr := binary.BigEndian.AppendUint32(nil, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, depth, colorType, 0, 0, 0)
	return append([]byte("\x89PNG\r\n\x1a\n"), pngChunk("IHDR", ihdr)...)
}

// blackPNG is a whole, decodable side x side RGBA PNG of the given depth,
// all black and transparent: an 8192² 16-bit one is 512 MiB decoded. Its
// pixel data is all zero bytes (filter bytes included), written as one
// fixed-Huffman deflate block of a zero and then copies of 258 bytes at
// distance 1: 13 bits per 258 bytes, made in a moment where compressing
// 512 MiB takes a minute under the race detector.
func blackPNG(t testing.TB, side int, depth byte) []byte {
	t.Helper()
	n := side * (1 + side*4*int(depth/8)) // each row: filter byte 0, pixels
	var w bitWriter
	w.buf = []byte{0x78, 0x01} // zlib: deflate, 32 KiB window, no dictionary
	w.bits(1, 1)               // the final block
	w.bits(1, 2)               // fixed Huffman codes
	literal0 := func() { w.bits(reverse(0x30, 8), 8) }
	literal0()
	left := n - 1
	for ; left >= 258; left -= 258 {
		w.bits(reverse(0xC5, 8), 8) // length 258 (code 285)
		w.bits(0, 5)                // distance 1 (code 0)
	}
	for ; left > 0; left-- {
		literal0()
	}
	w.bits(0, 7) // end of block (256)
	w.flush()
	// Adler-32 of n zeros: a stays 1, b adds it n times.
	idat := binary.BigEndian.AppendUint32(w.buf, uint32(n%65521)<<16|1)
	out := pngHeader(uint32(side), uint32(side), depth, 6)
	out = append(out, pngChunk("IDAT", idat)...)
	return append(out, pngChunk("IEND", nil)...)
}

// bitWriter writes deflate's bit stream: least significant bit first.
type bitWriter struct {
	buf []byte
	acc uint64
	n   uint
}

func (w *bitWriter) bits(v uint64, n uint) {
	w.acc |= v << w.n
	for w.n += n; w.n >= 8; w.n -= 8 {
		w.buf = append(w.buf, byte(w.acc))
		w.acc >>= 8
	}
}

func (w *bitWriter) flush() {
	if w.n > 0 {
		w.buf = append(w.buf, byte(w.acc))
		w.acc, w.n = 0, 0
	}
}

// reverse is a Huffman code of n bits as deflate packs it: most
// significant bit first.
func reverse(code uint64, n uint) uint64 {
	var r uint64
	for range n {
		r = r<<1 | code&1
		code >>= 1
	}
	return r
}

// jpegHeader is a JPEG's start, frame header (SOF0 baseline, SOF2
// progressive) with three components sampled as given (0x22 then 0x11,
// 0x11 is 4:2:0) and the start of a scan: all image.DecodeConfig reads.
func jpegHeader(w, h uint16, sof byte, sampling ...byte) []byte {
	seg := []byte{8}
	seg = binary.BigEndian.AppendUint16(seg, h)
	seg = binary.BigEndian.AppendUint16(seg, w)
	seg = append(seg, byte(len(sampling)))
	for i, s := range sampling {
		seg = append(seg, byte(i+1), s, 0)
	}
	out := []byte{0xFF, 0xD8, 0xFF, sof}
	out = binary.BigEndian.AppendUint16(out, uint16(2+len(seg)))
	return append(append(out, seg...), 0xFF, 0xDA, 0, 2)
}

// TestImageDecodedBytes: the pixel bound is judged in decoded bytes, so a
// 16-bit picture of as many pixels as an admitted 8-bit one is refused.
func TestImageDecodedBytes(t *testing.T) {
	cases := []struct {
		name  string
		data  []byte
		parts []string // refused when set
	}{
		{"8-bit RGBA 8192x8192 (256 MiB)", pngHeader(8192, 8192, 8, 6), nil},
		{"16-bit RGBA 8192x4096 (256 MiB)", pngHeader(8192, 4096, 16, 6), nil},
		{"16-bit RGBA 8192x8192 (512 MiB)", pngHeader(8192, 8192, 16, 6),
			[]string{"source decodes to 512.0 MiB (8192x8192 pixels, 16-bit color PNG: 8 bytes each); images may take at most 256 MiB once decoded"}},
		{"16-bit RGBA 8193x4096", pngHeader(8193, 4096, 16, 6), []string{"source decodes to 256.1 MiB"}},
		{"baseline 4:2:0 JPEG 8192x8192 (96 MiB)", jpegHeader(8192, 8192, 0xC0, 0x22, 0x11, 0x11), nil},
		{"progressive 4:2:0 JPEG 6000x4000 (172 MiB)", jpegHeader(6000, 4000, 0xC2, 0x22, 0x11, 0x11), nil},
		{"progressive 4:2:0 JPEG 8192x8192 (480 MiB)", jpegHeader(8192, 8192, 0xC2, 0x22, 0x11, 0x11),
			[]string{"source decodes to 480.0 MiB (8192x8192 pixels, progressive YCbCr JPEG: 7.5 bytes each)"}},
		{"progressive 4:4:4 JPEG 5000x5000 (358 MiB)", jpegHeader(5000, 5000, 0xC2, 0x11, 0x11, 0x11),
			[]string{"progressive YCbCr JPEG: 15 bytes each"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := checkImageHeader(c.data, maxDecodedBytes)
			if c.parts == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			wantFault(t, err, fault.TooLarge, "source", c.parts...)
		})
	}
}

// TestImage16BitPNGRefused sends the finding's picture: an 8192² 16-bit
// PNG of about 520 KB, at the pixel limit, that decodes to 512 MiB. It is
// refused from its header, before anything is decoded.
func TestImage16BitPNGRefused(t *testing.T) {
	data := blackPNG(t, 8192, 16)
	t.Logf("%d bytes", len(data))
	if img, err := png.Decode(bytes.NewReader(blackPNG(t, 64, 16))); err != nil || img.Bounds().Dx() != 64 {
		t.Fatalf("the fixture's PNG does not decode: %v", err)
	}
	_, err := NewPreparer("", nil).Image(t.Context(), data, "")
	wantFault(t, err, fault.TooLarge, "source", "source decodes to 512.0 MiB", "at most 256 MiB once decoded")
}

// holdAll takes every slot of pool and gives them back at the test's end.
func holdAll(t *testing.T, pool *Pool) {
	t.Helper()
	for range pool.Size() {
		release, err := pool.Acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(release)
	}
}

// TestPoolsBoundMediaWork: with every slot of a pool taken, one more run
// waits; a slot given back meanwhile lets it through, otherwise it is
// refused with RATE_LIMITED when the queue wait or its deadline passes.
func TestPoolsBoundMediaWork(t *testing.T) {
	small := makePNG(t, pictureOf(30, 20, gradient))
	const wait = 300 * time.Millisecond
	newPreparer := func(ffmpeg string) *Preparer {
		return NewPreparerWith(PreparerOptions{FFmpeg: ffmpeg, ImageDecodes: 2, FFmpegRuns: 1, Downloads: 3, QueueWait: wait})
	}

	t.Run("image decodes: N+1st refused after the wait", func(t *testing.T) {
		p := newPreparer("")
		if p.decodes.Size() != 2 {
			t.Fatalf("decode pool of %d, want 2", p.decodes.Size())
		}
		holdAll(t, p.decodes)
		start := time.Now()
		_, err := p.Image(t.Context(), small, "")
		wantFault(t, err, fault.RateLimited, "", "too many images being prepared at once; try again")
		if waited := time.Since(start); waited < wait {
			t.Errorf("refused after %s, before the queue wait of %s", waited, wait)
		}
		_, err = p.SquareJPEG(t.Context(), small)
		wantFault(t, err, fault.RateLimited, "", "too many images being prepared")
	})

	t.Run("image decodes: a slot given back is taken", func(t *testing.T) {
		p := NewPreparerWith(PreparerOptions{ImageDecodes: 1, QueueWait: time.Minute})
		release, err := p.decodes.Acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := p.Image(t.Context(), small, "")
			done <- err
		}()
		select {
		case err := <-done:
			t.Fatalf("decoded while the only slot was taken (err %v)", err)
		case <-time.After(100 * time.Millisecond):
		}
		release()
		if err := <-done; err != nil {
			t.Fatalf("after the slot was given back: %v", err)
		}
	})

	t.Run("deadline before the queue wait", func(t *testing.T) {
		p := NewPreparerWith(PreparerOptions{ImageDecodes: 1, QueueWait: time.Minute})
		holdAll(t, p.decodes)
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		_, err := p.Image(ctx, small, "")
		wantFault(t, err, fault.RateLimited, "", "too many images being prepared")
	})

	t.Run("caller gone", func(t *testing.T) {
		p := NewPreparerWith(PreparerOptions{ImageDecodes: 1, QueueWait: time.Minute})
		holdAll(t, p.decodes)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := p.Image(ctx, small, "")
		if !errors.Is(err, context.Canceled) || fault.From(err) != nil {
			t.Fatalf("got %v, want the context's cancellation, unclassified", err)
		}
	})

	t.Run("ffmpeg runs", func(t *testing.T) {
		p := newPreparer(needFFmpeg(t))
		holdAll(t, p.ffmpegs)
		_, err := p.Audio(t.Context(), makeWAV(1, 8000), true)
		wantFault(t, err, fault.RateLimited, "", "too many audio and video conversions running at once; try again")
	})

	t.Run("downloads", func(t *testing.T) {
		p := newPreparer("")
		var releases []func()
		for range 3 {
			release, err := p.DownloadSlot(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			releases = append(releases, release)
		}
		_, err := p.DownloadSlot(t.Context())
		wantFault(t, err, fault.RateLimited, "", "too many media downloads running at once; try again")
		releases[0]()
		releases[0]() // a second call gives nothing more back
		release, err := p.DownloadSlot(t.Context())
		if err != nil {
			t.Fatalf("after one was given back: %v", err)
		}
		release()
		if _, err := p.DownloadSlot(t.Context()); err != nil {
			t.Fatalf("after one was given back: %v", err)
		}
		_, err = p.DownloadSlot(t.Context())
		wantFault(t, err, fault.RateLimited, "")
	})

	t.Run("nil preparer bounds nothing", func(t *testing.T) {
		var p *Preparer
		release, err := p.DownloadSlot(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		release()
	})
}

// TestPoolsShareFairly: while one user's images wait for the decode
// slot, another user's image waits for the run in progress only, not for
// the first user's queue.
func TestPoolsShareFairly(t *testing.T) {
	small := makePNG(t, pictureOf(1, 1, gradient))
	p := NewPreparerWith(PreparerOptions{ImageDecodes: 1, QueueWait: time.Minute})
	flooder := fairpool.WithTenant(t.Context(), "flooder")
	other := fairpool.WithTenant(t.Context(), "other")
	release, err := p.decodes.Acquire(flooder)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 4)
	for range 3 {
		go func() {
			if _, err := p.Image(flooder, small, ""); err != nil {
				t.Error(err)
			}
			done <- "flooder"
		}()
	}
	waitQueued(t, p.decodes, 3)
	go func() {
		if _, err := p.Image(other, small, ""); err != nil {
			t.Error(err)
		}
		done <- "other"
	}()
	waitQueued(t, p.decodes, 4)
	release()
	if first := <-done; first != "other" {
		t.Fatalf("the %s's image went first; want the other user's, whose only one it is", first)
	}
	for range 3 {
		<-done
	}
}

// waitQueued waits until n runs wait for a slot of pool.
func waitQueued(t *testing.T, pool *Pool, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); pool.slots.Waiting() < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d runs wait for a slot, want %d", pool.slots.Waiting(), n)
		}
	}
}

// longVoiceNote is an OGG/Opus voice note of 11 minutes of silence: one
// minute encoded, then copied eleven times (encoding 11 minutes takes
// seconds).
func longVoiceNote(t *testing.T) []byte {
	t.Helper()
	minute := filepath.Join(t.TempDir(), "minute.ogg")
	if err := os.WriteFile(minute, ffmpegMake(t, ".ogg", "-f", "lavfi", "-i", "anullsrc=r=48000:cl=mono", "-t", "60",
		"-c:a", "libopus", "-b:a", "6k", "-compression_level", "0", "-frame_duration", "60", "-ac", "1", "-f", "ogg"), 0o600); err != nil {
		t.Fatal(err)
	}
	return ffmpegMake(t, ".ogg", "-stream_loop", "10", "-i", minute, "-c", "copy", "-f", "ogg")
}

// recordingFFmpeg is ffmpeg behind a script that appends each run's
// arguments to a log, one line each.
func recordingFFmpeg(t *testing.T) (path, log string) {
	t.Helper()
	dir := t.TempDir()
	path, log = filepath.Join(dir, "ffmpeg"), filepath.Join(dir, "runs.log")
	script := "#!/bin/sh\necho \"$*\" >> " + log + "\nexec " + needFFmpeg(t) + " \"$@\"\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, log
}

// TestWaveformCappedDuration: a waveform never decodes more than
// maxWaveformSeconds of audio. A longer note's is estimated from its
// packets without running ffmpeg; decoding stops at the cap whatever the
// container claims.
func TestWaveformCappedDuration(t *testing.T) {
	long := longVoiceNote(t)
	stream, ok := parseOggOpus(long)
	if !ok || stream.seconds() != 660 {
		t.Fatalf("fixture: parsed %v, %d s; want an 11-minute note", ok, stream.seconds())
	}

	t.Run("decoding stops at the cap", func(t *testing.T) {
		samples, err := NewPreparer(needFFmpeg(t), nil).decodePCM(t.Context(), long, mimeOggOpus)
		if err != nil {
			t.Fatal(err)
		}
		if got, limit := len(samples), maxWaveformSeconds*8000; got > limit {
			t.Fatalf("decoded %d samples (%d s) for a waveform; want at most %d (%d s)", got, got/8000, limit, maxWaveformSeconds)
		}
	})

	t.Run("a longer note is not decoded", func(t *testing.T) {
		ff, log := recordingFFmpeg(t)
		f, err := NewPreparer(ff, nil).Audio(t.Context(), long, true)
		if err != nil {
			t.Fatal(err)
		}
		if f.Seconds != 660 || len(f.Waveform) != 64 {
			t.Fatalf("%d s, waveform of %d values; want 660 s and 64", f.Seconds, len(f.Waveform))
		}
		runs, _ := os.ReadFile(log)
		if strings.Contains(string(runs), "s16le") {
			t.Fatalf("ffmpeg decoded an 11-minute note for its waveform:\n%s", runs)
		}
	})

	t.Run("a shorter note is measured", func(t *testing.T) {
		ff, log := recordingFFmpeg(t)
		f, err := NewPreparer(ff, nil).Audio(t.Context(), oggOpusOf(t, rampTone), true)
		if err != nil {
			t.Fatal(err)
		}
		checkVoiceNote(t, f, 2)
		runs, _ := os.ReadFile(log)
		if !strings.Contains(string(runs), "-t 600") {
			t.Fatalf("no decode capped at 600 s:\n%s", runs)
		}
	})
}

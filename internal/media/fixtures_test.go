package media

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// needFFmpeg returns ffmpeg's path. Tests that need it fail without it: CI
// runs `make deps`, which installs it, before the tests.
func needFFmpeg(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Fatalf("ffmpeg is not on PATH: run make deps (%v)", err)
	}
	return p
}

// ffmpegMake runs ffmpeg with args and an output file name ending in ext
// appended, and returns the file.
func ffmpegMake(t *testing.T, ext string, args ...string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out"+ext)
	full := append([]string{"-hide_banner", "-nostdin", "-loglevel", "error", "-y"}, args...)
	cmd := exec.Command(needFFmpeg(t), append(full, out)...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg %v: %v\n%s", args, err, msg)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// rampTone is 2 s of a 440 Hz tone whose amplitude grows from 5 % to 100 %.
const rampTone = "aevalsrc=exprs='(0.05+0.95*t/2)*sin(2*PI*440*t)':d=2:s=48000"

// silenceThenNoise is 1 s of silence then 1 s of loud noise.
const silenceThenNoise = "aevalsrc=exprs='gte(t,1)*(random(0)*2-1)':d=2:s=48000"

func oggOpusOf(t *testing.T, source string) []byte {
	return ffmpegMake(t, ".ogg", "-f", "lavfi", "-i", source,
		"-c:a", "libopus", "-b:a", "32k", "-ac", "1", "-ar", "48000", "-f", "ogg")
}

func pictureOf(w, h int, fill func(x, y int) color.Color) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, fill(x, y))
		}
	}
	return img
}

func gradient(x, y int) color.Color {
	return color.NRGBA{uint8(x), uint8(y), uint8(x + y), 255}
}

func makePNG(t *testing.T, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func makeJPEG(t *testing.T, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func makeGIF(t *testing.T, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := gif.Encode(&buf, img, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// decodeJPEG fails the test unless b is a JPEG; it returns its size.
func decodeJPEG(t *testing.T, b []byte) image.Image {
	t.Helper()
	img, err := jpeg.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not a JPEG (%d bytes): %v", len(b), err)
	}
	return img
}

// makeWAV writes 16-bit mono PCM as a WAV file: amplitude ramps up over the
// samples so a waveform of it rises.
func makeWAV(seconds, rate int) []byte {
	n := seconds * rate
	pcm := make([]byte, 2*n)
	for i := range n {
		amp := 0.05 + 0.95*float64(i)/float64(n)
		v := int16(amp * 30000 * math.Sin(2*math.Pi*440*float64(i)/float64(rate)))
		binary.LittleEndian.PutUint16(pcm[2*i:], uint16(v))
	}
	var b bytes.Buffer
	le := func(v any) { binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	le(uint32(36 + len(pcm)))
	b.WriteString("WAVEfmt ")
	le(uint32(16))
	le(uint16(1)) // PCM
	le(uint16(1)) // mono
	le(uint32(rate))
	le(uint32(rate * 2))
	le(uint16(2))
	le(uint16(16))
	b.WriteString("data")
	le(uint32(len(pcm)))
	b.Write(pcm)
	return b.Bytes()
}

// box builds an ISO BMFF box.
func box(typ string, body ...[]byte) []byte {
	content := bytes.Join(body, nil)
	out := binary.BigEndian.AppendUint32(nil, uint32(8+len(content)))
	return append(append(out, typ...), content...)
}

// oggPageOf builds one Ogg page holding whole packets (no CRC: the parser
// does not check it).
func oggPageOf(serial uint32, granule int64, packets ...[]byte) []byte {
	var lacing, body []byte
	for _, p := range packets {
		n := len(p)
		for ; n >= 255; n -= 255 {
			lacing = append(lacing, 255)
		}
		lacing = append(lacing, byte(n))
		body = append(body, p...)
	}
	h := []byte("OggS\x00\x00")
	h = binary.LittleEndian.AppendUint64(h, uint64(granule))
	h = binary.LittleEndian.AppendUint32(h, serial)
	h = binary.LittleEndian.AppendUint32(h, 0) // sequence
	h = binary.LittleEndian.AppendUint32(h, 0) // CRC
	h = append(h, byte(len(lacing)))
	return append(append(h, lacing...), body...)
}

// opusHead is an OpusHead packet with the given pre-skip.
func opusHead(preSkip uint16) []byte {
	h := []byte("OpusHead\x01\x01")
	h = binary.LittleEndian.AppendUint16(h, preSkip)
	h = binary.LittleEndian.AppendUint32(h, 48000)
	return append(h, 0, 0, 0)
}

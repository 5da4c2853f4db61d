package media

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"image"
	"image/color"
	"image/jpeg"
	"runtime"
	"testing"

	"github.com/gen2brain/webp"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/media/mediatest"
)

// withChunk is a PNG with a chunk inserted after its header (IHDR).
func withChunk(data []byte, typ string, body []byte) []byte {
	out := append([]byte(nil), data[:33]...)
	out = append(out, pngChunk(typ, body)...)
	return append(out, data[33:]...)
}

// interlacedPNG is a w x h 8-bit RGBA PNG in Adam7's seven passes, all
// transparent black.
func interlacedPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	var raw bytes.Buffer
	passes := [][4]int{{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4}, {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}}
	for _, p := range passes { // x0, y0, dx, dy
		pw, ph := (w-p[0]+p[2]-1)/p[2], (h-p[1]+p[3]-1)/p[3]
		if pw <= 0 || ph <= 0 {
			continue
		}
		raw.Write(make([]byte, ph*(1+4*pw)))
	}
	var idat bytes.Buffer
	z := zlib.NewWriter(&idat)
	_, _ = z.Write(raw.Bytes())
	_ = z.Close()
	ihdr := binary.BigEndian.AppendUint32(nil, uint32(w))
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(h))
	ihdr = append(ihdr, 8, 6, 0, 0, 1)
	out := append([]byte("\x89PNG\r\n\x1a\n"), pngChunk("IHDR", ihdr)...)
	out = append(out, pngChunk("IDAT", idat.Bytes())...)
	return append(out, pngChunk("IEND", nil)...)
}

func webpOf(t *testing.T, img image.Image, lossless bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := webp.Encode(&buf, img, webp.Options{Quality: 80, Lossless: lossless}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestDecodeCostCountsWhatDecodersAllocate: for each layout, what the
// cost model counts from the header is at least everything the decoder
// allocates, and not more than twice that: a progressive CMYK JPEG's
// coefficients, an interlaced PNG's passes, a gray PNG with a transparent
// color decoded as 8-bit color, a WebP's compressed alpha decoded as a
// lossless picture of its own.
func TestDecodeCostCountsWhatDecodersAllocate(t *testing.T) {
	const side = 800
	gray := image.NewGray(image.Rect(0, 0, side, side))
	gray16 := image.NewGray16(image.Rect(0, 0, side, side))
	translucent := pictureOf(side, side, func(x, y int) color.Color { return color.NRGBA{uint8(x), uint8(y), 90, uint8(x ^ y)} })
	var baseline bytes.Buffer
	if err := jpeg.Encode(&baseline, pictureOf(side+3, side-5, gradient), nil); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, layout string
		data         []byte
	}{
		{"progressive CMYK JPEG", "progressive CMYK JPEG", mediatest.ProgressiveJPEG(side, side, 4)},
		{"progressive YCbCr JPEG", "progressive YCbCr JPEG", mediatest.ProgressiveJPEG(side, side, 3)},
		{"progressive gray JPEG", "progressive gray JPEG", mediatest.ProgressiveJPEG(side, side, 1)},
		{"baseline JPEG of whole MCUs and a part", "YCbCr JPEG", baseline.Bytes()},
		{"8-bit gray PNG", "8-bit gray PNG", makePNG(t, gray)},
		{"8-bit gray PNG with a transparent color", "8-bit color PNG", withChunk(makePNG(t, gray), "tRNS", []byte{0, 7})},
		{"16-bit gray PNG with a transparent color", "16-bit color PNG", withChunk(makePNG(t, gray16), "tRNS", []byte{0, 7})},
		{"interlaced PNG", "interlaced 8-bit color PNG", interlacedPNG(t, side, side)},
		{"lossless WebP", "lossless WebP", webpOf(t, translucent, true)},
		{"lossless WebP of a palette", "lossless WebP", webpOf(t, pictureOf(side, side, func(x, y int) color.Color {
			return color.NRGBA{uint8(255 * ((x / 3) % 2)), 0, uint8(255 * ((y / 5) % 2)), 255} // four colors: packed pixels
		}), true)},
		{"lossy WebP", "lossy WebP", webpOf(t, pictureOf(side, side, gradient), false)},
		{"lossy WebP with alpha", "lossy WebP with compressed alpha", webpOf(t, translucent, false)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			counted, err := checkImageHeader(c.data, maxDecodedBytes)
			if err != nil {
				t.Fatal(err)
			}
			if counted.layout != c.layout {
				t.Errorf("counted as %s, want %s", counted.layout, c.layout)
			}
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			img, err := decodeImage(c.data, maxDecodedBytes)
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			allocated := after.TotalAlloc - before.TotalAlloc
			t.Logf("%T: counted %.2f bytes a pixel (%d KiB), allocated %d KiB", img, counted.perPixel(), counted.bytes>>10, allocated>>10)
			// A little for what is not pixels: readers, tables, the image's header.
			if float64(allocated) > float64(counted.bytes)*1.02+256<<10 {
				t.Errorf("decoding allocated %d KiB; the cost model counted %d KiB", allocated>>10, counted.bytes>>10)
			}
			if float64(allocated) < float64(counted.bytes)/2 {
				t.Errorf("decoding allocated %d KiB; the cost model counted over twice that, %d KiB", allocated>>10, counted.bytes>>10)
			}
		})
	}
}

// TestWebPBitstreamLargerThanItsCanvas: x/image/webp allocates by the size
// its VP8 bitstream says, not by VP8X's canvas, which DecodeConfig reports:
// a 1x1 canvas over a 16383x16383 picture is judged by the picture.
func TestWebPBitstreamLargerThanItsCanvas(t *testing.T) {
	vp8 := []byte{0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a, 0xff, 0x3f, 0xff, 0x3f} // key frame, 16383x16383
	vp8x := make([]byte, 10)                                                  // no alpha, a 1x1 canvas
	data := appendChunk(nil, "RIFF", appendChunk(appendChunk([]byte("WEBP"), "VP8X", vp8x), "VP8 ", vp8))
	if cfg, _, err := decodeConfig(data); err != nil || cfg.Width != 1 {
		t.Fatalf("the fixture: DecodeConfig says %dx%d, %v; want the 1x1 canvas", cfg.Width, cfg.Height, err)
	}
	c, err := checkImageHeader(data, maxDecodedBytes)
	if c.width != 16383 || c.height != 16383 || err == nil {
		t.Fatalf("judged as %dx%d, %v; want 16383x16383, refused", c.width, c.height, err)
	}
	_, err = NewPreparer("", nil).Image(t.Context(), data, "")
	wantFault(t, err, fault.TooLarge, "", "at most 64 megapixels")
}

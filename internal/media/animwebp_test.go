package media

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"testing"
	"time"

	"github.com/gen2brain/webp"

	"github.com/wagraph/wagraph/internal/memtest"
)

// stillChunks encodes img as a still WebP and returns its image chunks
// (ALPH and VP8, or VP8L), as an ANMF chunk holds them.
func stillChunks(t *testing.T, img image.Image, lossless bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := webp.Encode(&buf, img, webp.Options{Quality: 90, Lossless: lossless}); err != nil {
		t.Fatal(err)
	}
	var out []byte
	riffChunks(buf.Bytes(), func(fourcc string, body []byte) {
		switch fourcc {
		case "ALPH", "VP8 ", "VP8L":
			out = appendChunk(out, fourcc, body)
		}
	})
	return out
}

// filled is a w x h NRGBA picture of c, with a transparent hole in its
// middle when hole.
func filled(w, h int, c color.NRGBA, hole bool) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			p := c
			p.R = uint8(int(c.R) + 3*x)
			if hole && x > w/4 && x < 3*w/4 && y > h/4 && y < 3*h/4 {
				p = color.NRGBA{}
			}
			img.SetNRGBA(x, y, p)
		}
	}
	return img
}

// TestAnimatedWebPLikeLibwebp: an animation decoded here frame by frame
// shows, after each frame, the canvas libwebp shows: offsets, blending
// (straight alpha over the canvas), frames replacing their rectangle,
// disposal to transparent, lossless and lossy frames with and without
// alpha.
func TestAnimatedWebPLikeLibwebp(t *testing.T) {
	const w, h = 64, 48
	frames := [][]byte{
		anmf(0, 0, w, h, 100, 0, stillChunks(t, filled(w, h, color.NRGBA{40, 160, 60, 255}, false), true)),
		anmf(8, 8, 16, 16, 100, 0, stillChunks(t, filled(16, 16, color.NRGBA{10, 20, 230, 128}, false), true)),     // blended
		anmf(30, 20, 20, 10, 100, 0x03, stillChunks(t, filled(20, 10, color.NRGBA{200, 200, 0, 255}, true), true)), // replaces, then cleared
		anmf(40, 30, 10, 10, 100, 0, stillChunks(t, filled(10, 10, color.NRGBA{0, 250, 250, 200}, false), false)),  // lossy with alpha, blended
		anmf(4, 2, 20, 20, 100, 0x02, stillChunks(t, filled(20, 20, color.NRGBA{90, 90, 90, 255}, false), false)),  // lossy, opaque
	}
	data := animation(w, h, frames...)
	a, animated, ok := parseAnimatedWebP(data)
	if !animated || !ok || len(a.frames) != len(frames) {
		t.Fatalf("parsed %d frames, animated %v, ok %v", len(a.frames), animated, ok)
	}
	want, err := webp.DecodeAll(bytes.NewReader(data))
	if err != nil || len(want.Image) != len(frames) {
		t.Fatalf("libwebp: %v, %d frames", err, len(want.Image))
	}
	var got []*image.RGBA
	err = a.decode(t.Context(), func(_, millis int, canvas image.Image) {
		if millis != 100 {
			t.Errorf("frame shown for %d ms", millis)
		}
		c := *canvas.(*image.RGBA)
		c.Pix = bytes.Clone(c.Pix)
		got = append(got, &c)
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, canvas := range got {
		// libwebp's frames are straight alpha, whatever their type says.
		ref := want.Image[i].(*image.RGBA)
		worst, at := 0, image.Point{}
		for y := range h {
			for x := range w {
				o := ref.PixOffset(x, y)
				p := ref.Pix[o : o+4]
				exp := color.RGBAModel.Convert(color.NRGBA{p[0], p[1], p[2], p[3]}).(color.RGBA)
				c := canvas.RGBAAt(x, y)
				for _, d := range []int{int(c.R) - int(exp.R), int(c.G) - int(exp.G), int(c.B) - int(exp.B), int(c.A) - int(exp.A)} {
					if d = max(d, -d); d > worst {
						worst, at = d, image.Pt(x, y)
					}
				}
			}
		}
		// Alike but for rounding: blending here is premultiplied, and
		// chroma is taken from the nearest sample where libwebp
		// interpolates.
		if worst > 3 {
			t.Errorf("frame %d differs from libwebp's by %d at %v: %v, libwebp %v", i, worst, at, canvas.RGBAAt(at.X, at.Y), fmt.Sprint(ref.RGBAAt(at.X, at.Y)))
		}
	}
}

// smallLargeAnimation is the finding's sticker source: an animated WebP of
// a few hundred bytes, n frames of one pixel on a 2048x2048 canvas, the
// largest an animation may have.
func smallLargeAnimation(t *testing.T, n int) []byte {
	t.Helper()
	var frames [][]byte
	for i := range n {
		dot := filled(1, 1, color.NRGBA{uint8(20 * i), 100, 200, 255}, false)
		frames = append(frames, anmf(2*i, 2*i, 1, 1, 100, 0, stillChunks(t, dot, true)))
	}
	return animation(2048, 2048, frames...)
}

// TestAnimatedWebPCostWithinBudget: a 620-byte animated WebP of twelve
// frames on a 2048x2048 canvas was counted at 252 MiB and took 488 MiB
// (libwebp held every frame as a canvas, in WebAssembly memory grown by
// copying). Decoded a frame at a time, its decode takes no more than is
// counted, and the whole sticker is made well within the decode bound.
func TestAnimatedWebPCostWithinBudget(t *testing.T) {
	data := smallLargeAnimation(t, 12)
	t.Logf("%d bytes", len(data))
	src, err := inspectSticker(data)
	if err != nil {
		t.Fatal(err)
	}
	counted := src.anim.decodedBytes(src.mimetype)
	if counted > maxDecodedBytes {
		t.Fatalf("counted %d MiB, over the bound", counted>>20)
	}

	done := memtest.Watch(time.Millisecond)
	frames, err := src.decode(t.Context(), data)
	peak := done()
	if err != nil || len(frames) != 12 {
		t.Fatalf("%d frames, %v", len(frames), err)
	}
	t.Logf("decode: counted %d MiB, the heap grew by %d MiB at most", counted>>20, peak>>20)
	if peak > uint64(counted) {
		t.Errorf("decoding took %d MiB of heap; it was counted at %d MiB", peak>>20, counted>>20)
	}

	p := NewPreparer("", nil)
	if _, err := p.Sticker(t.Context(), smallLargeAnimation(t, 2)); err != nil { // the encoder's module compiles once
		t.Fatal(err)
	}
	done = memtest.Watch(time.Millisecond)
	_, err = p.Sticker(t.Context(), data)
	peak = done()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the sticker: the heap grew by %d MiB at most", peak>>20)
	if peak > maxDecodedBytes/2 {
		t.Errorf("making the sticker took %d MiB of heap; the decode bound is %d MiB", peak>>20, maxDecodedBytes>>20)
	}
}

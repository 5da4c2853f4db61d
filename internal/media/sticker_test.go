package media

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"image"
	"image/color"
	"image/gif"
	"image/png"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/gen2brain/webp"
	xwebp "golang.org/x/image/webp"

	"github.com/wagraph/wagraph/internal/fault"
)

var (
	gifRed   = color.RGBA{255, 0, 0, 255}
	gifBlue  = color.RGBA{0, 0, 255, 255}
	gifGreen = color.RGBA{0, 255, 0, 255}
	gifWhite = color.RGBA{255, 255, 255, 255}
)

// partialGIF is a 64x48 animation whose later frames cover only part of the
// screen, with each disposal: shown right, frame 1 keeps the gifRed of frame 0
// under its transparent half, frame 3 shows the hole frame 2's disposal
// left, and frame 4 the screen as it was before frame 3.
func partialGIF(t testing.TB) []byte {
	pal := color.Palette{color.RGBA{}, gifRed, gifBlue, gifGreen, gifWhite}
	frame := func(r image.Rectangle, fill func(x, y int) uint8) *image.Paletted {
		img := image.NewPaletted(r, pal)
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				img.SetColorIndex(x, y, fill(x, y))
			}
		}
		return img
	}
	g := &gif.GIF{
		Image: []*image.Paletted{
			frame(image.Rect(0, 0, 64, 48), func(x, y int) uint8 { return 1 }),
			frame(image.Rect(8, 8, 24, 24), func(x, y int) uint8 {
				if x < 16 {
					return 2
				}
				return 0
			}),
			frame(image.Rect(32, 8, 48, 24), func(x, y int) uint8 { return 3 }),
			frame(image.Rect(40, 32, 48, 40), func(x, y int) uint8 { return 4 }),
			frame(image.Rect(0, 40, 8, 48), func(x, y int) uint8 { return 2 }),
		},
		Delay:    []int{10, 20, 30, 40, 50},
		Disposal: []byte{gif.DisposalNone, gif.DisposalNone, gif.DisposalBackground, gif.DisposalPrevious, gif.DisposalNone},
		Config:   image.Config{Width: 64, Height: 48, ColorModel: pal},
	}
	var buf bytes.Buffer
	if err := gif.EncodeAll(&buf, g); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// gifOf makes an animation of n frames of w x h, frame i drawn by fill(i).
func gifOf(t testing.TB, n, w, h, delay int, fill func(i int, img *image.Paletted)) []byte {
	g := &gif.GIF{}
	for i := range n {
		img := image.NewPaletted(image.Rect(0, 0, w, h), palette256)
		fill(i, img)
		g.Image = append(g.Image, img)
		g.Delay = append(g.Delay, delay)
	}
	var buf bytes.Buffer
	if err := gif.EncodeAll(&buf, g); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var palette256 = func() color.Palette {
	p := make(color.Palette, 256)
	for i := range p {
		p[i] = color.RGBA{uint8(i), uint8(i * 7), uint8(255 - i), 255}
	}
	return p
}()

// noisyPhoto is a 1024x1024 picture as a camera makes it: smooth light with
// sensor noise on every pixel, the worst case for the size limit short of
// pure noise.
func noisyPhoto(t *testing.T) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	return makeJPEG(t, pictureOf(1024, 1024, func(x, y int) color.Color {
		n := func(v int) uint8 { return uint8(max(0, min(255, v+r.IntN(61)-30))) }
		return color.NRGBA{n(x / 4), n(y / 4), n((x + y) / 8), 255}
	}))
}

// stickerPixel is the sticker pixel over the source pixel (x, y) of a picture scaled
// by k and placed at off.
func stickerPixel(img image.Image, k, offX, offY, x, y int) color.NRGBA {
	return color.NRGBAModel.Convert(img.At(offX+k*x+k/2, offY+k*y+k/2)).(color.NRGBA)
}

func nearColor(c color.NRGBA, want color.RGBA) bool {
	d := func(a, b uint8) int { return max(int(a)-int(b), int(b)-int(a)) }
	if want.A == 0 {
		return c.A < 30
	}
	return d(c.R, want.R) < 60 && d(c.G, want.G) < 60 && d(c.B, want.B) < 60 && c.A > 220
}

func TestSticker(t *testing.T) {
	still, err := os.ReadFile("testdata/photo-40x30.webp")
	if err != nil {
		t.Fatal(err)
	}
	animWebP, err := os.ReadFile("testdata/anim-96x64-3frames.webp")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		data   []byte
		delays []int // of an animated result
		check  func(t *testing.T, frames []image.Image)
	}{
		{name: "png wider than high: transparent above and below", data: makePNG(t, pictureOf(300, 150, gradient)), check: func(t *testing.T, frames []image.Image) {
			for _, p := range []image.Point{{256, 5}, {256, 506}, {5, 127}} {
				if c := color.NRGBAModel.Convert(frames[0].At(p.X, p.Y)).(color.NRGBA); c.A != 0 {
					t.Errorf("padding at %v is %v, want transparent", p, c)
				}
			}
			for _, p := range []image.Point{{256, 256}, {2, 130}, {509, 381}} {
				if c := color.NRGBAModel.Convert(frames[0].At(p.X, p.Y)).(color.NRGBA); c.A != 255 {
					t.Errorf("picture at %v is %v, want opaque", p, c)
				}
			}
		}},
		{name: "jpeg higher than wide", data: makeJPEG(t, pictureOf(150, 400, gradient)), check: func(t *testing.T, frames []image.Image) {
			if c := color.NRGBAModel.Convert(frames[0].At(10, 256)).(color.NRGBA); c.A != 0 {
				t.Errorf("left padding is %v, want transparent", c)
			}
		}},
		{name: "static webp", data: still},
		{name: "gif of one frame is still", data: makeGIF(t, pictureOf(64, 64, gradient))},
		{name: "noisy photo fits in 100 KiB", data: noisyPhoto(t)},
		{name: "pure noise fits in 100 KiB at a lower quality", data: makePNG(t, pictureOf(1024, 1024, func(x, y int) color.Color {
			v := rand.Uint32()
			return color.NRGBA{uint8(v), uint8(v >> 8), uint8(v >> 16), 255}
		}))},
		{name: "animated gif with partial frames", data: partialGIF(t), delays: []int{100, 200, 300, 400, 500}, check: func(t *testing.T, frames []image.Image) {
			// 64x48 scaled by 8 to 512x384, 64 px from the top.
			want := []struct {
				frame, x, y int
				c           color.RGBA
			}{
				{0, 16, 16, gifRed},
				{1, 12, 16, gifBlue}, {1, 20, 16, gifRed}, // the transparent half shows frame 0
				{2, 12, 16, gifBlue}, {2, 40, 16, gifGreen},
				{3, 40, 16, color.RGBA{}}, {3, 44, 36, gifWhite}, {3, 12, 16, gifBlue}, // cleared to transparent
				{4, 44, 36, gifRed}, {4, 4, 44, gifBlue}, {4, 40, 16, color.RGBA{}}, // frame 3 undone
			}
			for _, w := range want {
				if c := stickerPixel(frames[w.frame], 8, 0, 64, w.x, w.y); !nearColor(c, w.c) {
					t.Errorf("frame %d at (%d,%d) is %v, want %v", w.frame, w.x, w.y, c, w.c)
				}
			}
		}},
		{name: "animated webp", data: animWebP, delays: []int{200, 200, 200}},
		{name: "large animation", data: gifOf(t, 3, 1600, 1200, 10, func(i int, img *image.Paletted) {
			for p := range img.Pix {
				img.Pix[p] = uint8(40 * i)
			}
		}), delays: []int{100, 100, 100}, check: func(t *testing.T, frames []image.Image) {
			for i, img := range frames {
				want := palette256[40*i].(color.RGBA)
				if c := stickerPixel(img, 1, 0, 0, 256, 256); !nearColor(c, want) {
					t.Errorf("frame %d is %v, want %v", i, c, want)
				}
			}
		}},
		{name: "long animation keeps 50 frames and its length", data: gifOf(t, 120, 16, 16, 5, func(i int, img *image.Paletted) {
			for p := range img.Pix {
				img.Pix[p] = uint8(i)
			}
		}), delays: thinnedDelays(120, 50, 50)},
	}
	p := NewPreparer("", nil)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			f, err := p.Sticker(t.Context(), c.data)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d bytes in, %d bytes out in %v", len(c.data), len(f.Data), time.Since(start))
			if f.Mimetype != "image/webp" || f.Width != 512 || f.Height != 512 || f.Animated != (c.delays != nil) {
				t.Fatalf("got %s %dx%d animated %v; want image/webp 512x512 animated %v", f.Mimetype, f.Width, f.Height, f.Animated, c.delays != nil)
			}
			var frames []image.Image
			if c.delays == nil {
				if len(f.Data) > 100<<10 {
					t.Errorf("static sticker is %d bytes, over 100 KiB", len(f.Data))
				}
				img, err := xwebp.Decode(bytes.NewReader(f.Data)) // another decoder than the encoder's
				if err != nil {
					t.Fatalf("output is not a WebP: %v", err)
				}
				frames = []image.Image{img}
			} else {
				if len(f.Data) > 500<<10 {
					t.Errorf("animated sticker is %d bytes, over 500 KiB", len(f.Data))
				}
				anim, err := webp.DecodeAll(bytes.NewReader(f.Data))
				if err != nil {
					t.Fatalf("output is not an animated WebP: %v", err)
				}
				if !slices.Equal(anim.Delay, c.delays) {
					t.Fatalf("%d frames with delays %v, want %v", len(anim.Delay), anim.Delay, c.delays)
				}
				frames = anim.Image
			}
			for i, img := range frames {
				if b := img.Bounds(); b.Dx() != 512 || b.Dy() != 512 {
					t.Fatalf("frame %d is %dx%d, want 512x512", i, b.Dx(), b.Dy())
				}
			}
			if c.check != nil {
				c.check(t, frames)
			}
		})
	}
}

// thinnedDelays is what n frames of ms each become when k are kept.
func thinnedDelays(n, k, ms int) []int {
	var out []int
	for g := range k {
		out = append(out, ((g+1)*n/k-g*n/k)*ms)
	}
	return out
}

// TestWebPDecoderOfImage: github.com/gen2brain/webp registers itself with
// package image as a second WebP decoder, and image.Decode takes the first
// registered. The image checks (checkImageHeader, decodeImage) are written
// for golang.org/x/image/webp, which decodes one frame; the other decodes
// every frame of an animation at once, which their bounds do not count. This
// fails if the packages' initialisation order ever gives it the first place.
func TestWebPDecoderOfImage(t *testing.T) {
	data, err := os.ReadFile("testdata/photo-40x30.webp")
	if err != nil {
		t.Fatal(err)
	}
	img, err := decodeImage(data, maxDecodedBytes)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := img.(*image.YCbCr); !ok { // gen2brain's decoder returns *image.NYCbCrA
		t.Fatalf("image.Decode of a WebP returned %T: github.com/gen2brain/webp, not golang.org/x/image/webp, decodes WebP for package image", img)
	}
}

// TestStickerFitsAnimations: an animation of noise, each frame new, cannot
// keep all its frames in 500 KiB; it keeps fewer, shown as long in all.
func TestStickerFitsAnimations(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	data := gifOf(t, 40, 256, 256, 10, func(i int, img *image.Paletted) {
		for p := range img.Pix {
			img.Pix[p] = uint8(r.IntN(256))
		}
	})
	start := time.Now()
	f, err := NewPreparer("", nil).Sticker(t.Context(), data)
	if err != nil {
		t.Fatal(err)
	}
	anim, err := webp.DecodeAll(bytes.NewReader(f.Data))
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, d := range anim.Delay {
		total += d
	}
	t.Logf("%d frames, %d bytes in %v", len(anim.Image), len(f.Data), time.Since(start))
	if len(f.Data) > 500<<10 || !f.Animated || len(anim.Image) >= 40 || len(anim.Image) < 2 || total != 4000 {
		t.Fatalf("%d bytes, animated %v, %d frames for %d ms; want at most 500 KiB, 2 to 39 frames for 4000 ms", len(f.Data), f.Animated, len(anim.Image), total)
	}
}

func TestStickerRefusals(t *testing.T) {
	small := makePNG(t, pictureOf(10, 10, gradient))
	over := make([]byte, MaxImage+1)
	copy(over, small)
	cases := []struct {
		name  string
		data  []byte
		code  fault.Code
		parts []string
	}{
		{"garbage", []byte("GIF? no, just some words"), fault.Unsupported, []string{"source must be a PNG, JPEG, GIF or WebP image; it is text/plain"}},
		{"pdf", []byte("%PDF-1.4 ..."), fault.Unsupported, []string{"it is application/pdf"}},
		{"over the size limit", over, fault.TooLarge, []string{"source is 16.1 MiB; WhatsApp takes images up to 16 MiB"}},
		{"huge dimensions", withSize(t, small, 30000, 30000), fault.TooLarge, []string{"at most 64 megapixels"}},
		{"animation over 10 s", gifOf(t, 3, 8, 8, 400, func(int, *image.Paletted) {}), fault.Invalid, []string{"plays for 12.0 s", "at most 10 s"}},
		{"too many frames", gifOf(t, 501, 1, 1, 2, func(int, *image.Paletted) {}), fault.TooLarge, []string{"501 frames", "at most 500"}},
		{"gif frames decoding to gigabytes", gifHeaders(2000, 2000, 100), fault.TooLarge, []string{"decodes to", "100 frames of 2000x2000", "at most 256 MiB"}},
		{"gif animation of 8000x8000", gifHeaders(8000, 8000, 2), fault.TooLarge, []string{"animation of 8000x8000", "at most 4 megapixels"}},
		{"gif screen of 65535x65535", gifHeaders(65535, 65535, 1), fault.TooLarge, []string{"65535x65535", "at most 64 megapixels"}},
		{"webp canvas of 16384x16384", webpHeaders(16384, 16384, 2, 16384, 16384), fault.TooLarge, []string{"16384x16384", "64 megapixels"}},
		{"webp animation of 4000x4000", webpHeaders(4000, 4000, 2, 4000, 4000), fault.TooLarge, []string{"animation of 4000x4000", "at most 4 megapixels"}},
		{"webp frame out of its canvas", webpHeaders(100, 100, 2, 200, 100), fault.Invalid, []string{"source looks like image/webp but is not a readable image"}},
		{"webp frame larger than it says", webpFrameSaying(64, 64, 16000, 16000), fault.Invalid, []string{"source looks like image/webp but is not a readable image"}},
		{"gif without frames", []byte("GIF89a\x10\x00\x10\x00\x00\x00\x00;"), fault.Invalid, []string{"source looks like image/gif but is not a readable image"}},
	}
	// The one decode slot is taken: a refusal that comes before decoding
	// does not wait for it.
	p := NewPreparerWith(PreparerOptions{ImageDecodes: 1, QueueWait: time.Millisecond})
	release, err := p.decodes.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := p.Sticker(t.Context(), c.data)
			wantFault(t, err, c.code, "source", c.parts...)
		})
	}
	t.Run("unreadable after its header", func(t *testing.T) {
		_, err := NewPreparer("", nil).Sticker(t.Context(), small[:len(small)/2])
		wantFault(t, err, fault.Invalid, "source", "source looks like image/png but is not a readable image")
		_, err = NewPreparer("", nil).Sticker(t.Context(), partialGIF(t)[:200])
		wantFault(t, err, fault.Invalid, "source", "source looks like image/gif but is not a readable image")
	})
}

// gifHeaders is a GIF of n frames that claim w x h pixels and hold none.
func gifHeaders(w, h uint16, n int) []byte {
	b := []byte("GIF89a")
	b = binary.LittleEndian.AppendUint16(b, w)
	b = binary.LittleEndian.AppendUint16(b, h)
	b = append(b, 0, 0, 0)
	for range n {
		b = append(b, 0x21, 0xF9, 4, 0, 10, 0, 0, 0) // 100 ms
		b = append(b, 0x2C, 0, 0, 0, 0)
		b = binary.LittleEndian.AppendUint16(b, w)
		b = binary.LittleEndian.AppendUint16(b, h)
		b = append(b, 0, 2, 0)
	}
	return append(b, 0x3B)
}

// webpHeaders is an animated WebP of n frames of fw x fh on a w x h
// canvas, each a lossless bitstream's header without its image data.
func webpHeaders(w, h, n, fw, fh int) []byte {
	frames := make([][]byte, n)
	for i := range frames {
		frames[i] = anmf(0, 0, fw, fh, 100, 0, appendChunk(nil, "VP8L", vp8lHeader(fw, fh)))
	}
	return animation(w, h, frames...)
}

// webpFrameSaying is an animated WebP of one w x h frame whose lossless
// bitstream says it is bw x bh.
func webpFrameSaying(w, h, bw, bh int) []byte {
	return animation(w, h, anmf(0, 0, w, h, 100, 0, appendChunk(nil, "VP8L", vp8lHeader(bw, bh))))
}

// vp8lHeader is a lossless bitstream's signature and size.
func vp8lHeader(w, h int) []byte {
	return binary.LittleEndian.AppendUint32([]byte{0x2f}, uint32(w-1)|uint32(h-1)<<14)
}

// anmf is an ANMF chunk: a frame of w x h at (x, y) (even), shown for ms,
// with flags (0x01 dispose to background, 0x02 do not blend) and its image
// chunks.
func anmf(x, y, w, h, ms int, flags byte, chunks []byte) []byte {
	f := make([]byte, 16)
	put24(f[0:], x/2)
	put24(f[3:], y/2)
	put24(f[6:], w-1)
	put24(f[9:], h-1)
	put24(f[12:], ms)
	f[15] = flags
	return appendChunk(nil, "ANMF", f, chunks)
}

// animation is an animated WebP of a w x h canvas and ANMF chunks.
func animation(w, h int, frames ...[]byte) []byte {
	vp8x := make([]byte, 10)
	vp8x[0] = 0x02 | 0x10
	put24(vp8x[4:], w-1)
	put24(vp8x[7:], h-1)
	body := appendChunk([]byte("WEBP"), "VP8X", vp8x)
	body = appendChunk(body, "ANIM", make([]byte, 6))
	for _, f := range frames {
		body = append(body, f...)
	}
	return appendChunk(nil, "RIFF", body)
}

func TestStickerCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := NewPreparer("", nil).Sticker(ctx, partialGIF(t))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
}

// TestStickerConcurrent runs more conversions than the pool has slots.
func TestStickerConcurrent(t *testing.T) {
	p := NewPreparer("", nil)
	data := [][]byte{partialGIF(t), makePNG(t, pictureOf(200, 100, gradient)), makeJPEG(t, pictureOf(90, 90, gradient))}
	errs := make(chan error, 2*len(data))
	for range 2 {
		for _, d := range data {
			go func() {
				_, err := p.Sticker(t.Context(), d)
				errs <- err
			}()
		}
	}
	for range 2 * len(data) {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// BenchmarkSticker is a static PNG photo made into a sticker.
func BenchmarkSticker(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	var buf bytes.Buffer
	img := pictureOf(800, 600, func(x, y int) color.Color {
		return color.NRGBA{uint8(x/4 + r.IntN(16)), uint8(y/3 + r.IntN(16)), uint8((x + y) / 6), 255}
	})
	if err := png.Encode(&buf, img); err != nil {
		b.Fatal(err)
	}
	p := NewPreparer("", nil)
	if _, err := p.Sticker(b.Context(), buf.Bytes()); err != nil { // the WASM module compiles once
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := p.Sticker(b.Context(), buf.Bytes()); err != nil {
			b.Fatal(err)
		}
	}
}

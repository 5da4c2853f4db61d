package media

import (
	"bytes"
	"context"
	"encoding/binary"
	"image"
	"io"

	"golang.org/x/image/draw"
	"golang.org/x/image/webp"
)

// An animated WebP sticker source is decoded here one frame at a time,
// each drawn on a canvas as the container says
// (https://developers.google.com/speed/webp/docs/riff_container#animation):
// a frame at its offset, alpha-blended over the canvas or replacing its
// rectangle, and after it is shown, its rectangle cleared to transparent
// when it says so (libwebp's decoder ignores the background color too).
// What it costs is one canvas and one frame's decode, however many frames
// there are. libwebp (github.com/gen2brain/webp's DecodeAll) returned every
// frame as a whole canvas at once, in WebAssembly memory that grows by
// copying itself: a 620-byte file of twelve 2048x2048 frames took 488 MiB,
// twice the bound it was counted within.

// animatedWebP is an animation's canvas and frames, read from its chunks
// without decoding a pixel.
type animatedWebP struct {
	width, height int
	frames        []webpFrame
}

// webpFrame is one ANMF chunk.
type webpFrame struct {
	rect     image.Rectangle // on the canvas
	millis   int             // shown, as frameMillis has it
	blend    bool            // alpha-blended over the canvas; else it replaces its rectangle
	dispose  bool            // its rectangle cleared to transparent once it was shown
	alpha    []byte          // the ALPH chunk's body of a lossy frame, nil when none
	fourcc   string          // "VP8 " or "VP8L"
	picture  []byte          // the bitstream chunk's body
	decodes  int64           // what decoding it allocates (stillWebPCost), with the NRGBA a lossy frame is drawn from
	pixelsOf int64           // its rectangle's pixels
}

// parseAnimatedWebP reads data's canvas and frames; animated is false for a
// still WebP, ok false for one that is not readable: a frame out of the
// canvas, or whose bitstream's size is not its rectangle's (the decoder
// would allocate by the bitstream's).
func parseAnimatedWebP(data []byte) (a animatedWebP, animated, ok bool) {
	framesOK := true
	ok = riffChunks(data, func(fourcc string, body []byte) {
		switch {
		case fourcc == "VP8X" && len(body) >= 10:
			animated = body[0]&0x02 != 0
			a.width, a.height = le24(body[4:])+1, le24(body[7:])+1
		case fourcc == "ANMF":
			f, good := parseFrame(body)
			framesOK = framesOK && good
			a.frames = append(a.frames, f)
		}
	})
	ok = ok && framesOK
	if !animated {
		return animatedWebP{}, false, ok
	}
	canvas := image.Rect(0, 0, a.width, a.height)
	for _, f := range a.frames {
		if !f.rect.In(canvas) {
			return a, true, false
		}
	}
	return a, true, ok && len(a.frames) > 0
}

// parseFrame reads an ANMF chunk's header and sub-chunks.
func parseFrame(body []byte) (webpFrame, bool) {
	if len(body) < 16 {
		return webpFrame{}, false
	}
	x, y := 2*le24(body[0:]), 2*le24(body[3:])
	w, h := le24(body[6:])+1, le24(body[9:])+1
	f := webpFrame{
		rect:    image.Rect(x, y, x+w, y+h),
		millis:  frameMillis(le24(body[12:])),
		blend:   body[15]&0x02 == 0,
		dispose: body[15]&0x01 != 0,
	}
	for b := body[16:]; len(b) >= 8 && f.fourcc == ""; {
		n := uint64(binary.LittleEndian.Uint32(b[4:]))
		if n > uint64(len(b)-8) {
			return f, false
		}
		switch fourcc, sub := string(b[:4]), b[8:8+n]; fourcc {
		case "ALPH":
			f.alpha = sub
		case "VP8 ", "VP8L":
			f.fourcc, f.picture = fourcc, sub
		}
		b = b[min(uint64(len(b)), 8+n+n&1):]
	}
	if f.fourcc == "" || (f.fourcc == "VP8L" && f.alpha != nil) {
		return f, false
	}
	c, ok := stillWebPCost(f.fourcc, f.picture, f.alpha, w, h)
	if !ok || c.width != w || c.height != h {
		return f, false
	}
	f.decodes, f.pixelsOf = c.bytes, int64(w)*int64(h)
	if f.fourcc == "VP8 " {
		f.decodes += 4 * f.pixelsOf // the NRGBA it is drawn from (vp8NRGBA)
	}
	return f, true
}

// decode decodes f alone: its chunks as a still WebP of its own, read by
// golang.org/x/image/webp.
func (f webpFrame) decode() (image.Image, error) {
	var parts [][]byte
	chunk := func(fourcc string, body []byte) {
		hdr := append([]byte(fourcc), 0, 0, 0, 0)
		binary.LittleEndian.PutUint32(hdr[4:], uint32(len(body)))
		parts = append(parts, hdr, body)
		if len(body)%2 == 1 {
			parts = append(parts, []byte{0})
		}
	}
	if f.alpha != nil {
		vp8x := make([]byte, 10)
		vp8x[0] = 0x10 // alpha
		put24(vp8x[4:], f.rect.Dx()-1)
		put24(vp8x[7:], f.rect.Dy()-1)
		chunk("VP8X", vp8x)
		chunk("ALPH", f.alpha)
	}
	chunk(f.fourcc, f.picture)
	size := 4
	for _, p := range parts {
		size += len(p)
	}
	head := append([]byte("RIFF"), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(head[4:], uint32(size))
	readers := []io.Reader{bytes.NewReader(append(head, "WEBP"...))}
	for _, p := range parts {
		readers = append(readers, bytes.NewReader(p))
	}
	return webp.Decode(io.MultiReader(readers...))
}

// decode draws each frame on the canvas and shows show the canvas after
// each one (it is only read during the call).
func (a animatedWebP) decode(ctx context.Context, show func(i, millis int, canvas image.Image)) error {
	canvas := image.NewRGBA(image.Rect(0, 0, a.width, a.height))
	for i, f := range a.frames {
		if err := ctx.Err(); err != nil {
			return err
		}
		img, err := f.decode()
		if err != nil || img.Bounds().Size() != f.rect.Size() {
			return unreadable("image/webp")
		}
		switch m := img.(type) {
		case *image.YCbCr:
			img = vp8NRGBA(m, nil, 0)
		case *image.NYCbCrA:
			img = vp8NRGBA(&m.YCbCr, m.A, m.AStride)
		}
		op := draw.Src
		if f.blend {
			op = draw.Over
		}
		draw.Draw(canvas, f.rect, img, img.Bounds().Min, op)
		show(i, f.millis, canvas)
		if f.dispose {
			draw.Draw(canvas, f.rect, image.Transparent, image.Point{}, draw.Src)
		}
	}
	return nil
}

// vp8NRGBA is a lossy frame (with its alpha plane, nil when opaque) as
// libwebp shows it: VP8 codes BT.601 studio-range YCbCr, which package
// image would convert as JPEG's full range, washing the colors out (a
// green of 250 shown as 232). The arithmetic is libwebp's (dsp/yuv.h);
// chroma is taken from the nearest sample.
func vp8NRGBA(m *image.YCbCr, alpha []byte, alphaStride int) *image.NRGBA {
	b := m.Bounds()
	out := image.NewNRGBA(b)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		row := out.Pix[out.PixOffset(b.Min.X, y):]
		for x := range b.Dx() {
			lum := mulHi(int(m.Y[m.YOffset(b.Min.X+x, y)]), 19077)
			c := m.COffset(b.Min.X+x, y)
			u, v := int(m.Cb[c]), int(m.Cr[c])
			p := row[4*x : 4*x+4 : 4*x+4]
			p[0] = clip8(lum + mulHi(v, 26149) - 14234)
			p[1] = clip8(lum - mulHi(u, 6419) - mulHi(v, 13320) + 8708)
			p[2] = clip8(lum + mulHi(u, 33050) - 17685)
			p[3] = 255
			if alpha != nil {
				p[3] = alpha[(y-b.Min.Y)*alphaStride+x]
			}
		}
	}
	return out
}

func mulHi(v, coeff int) int { return (v * coeff) >> 8 }

// clip8 is libwebp's VP8Clip8: v has 6 bits of fraction.
func clip8(v int) uint8 {
	switch {
	case v&^(256<<6-1) == 0:
		return uint8(v >> 6)
	case v < 0:
		return 0
	}
	return 255
}

package media

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"

	"github.com/gen2brain/webp"
)

// The sticker's WebP is encoded here, at the highest quality that fits
// WhatsApp's limit. The encoder of github.com/gen2brain/webp writes still
// pictures only, so an animated WebP is put together here: each frame is
// encoded as a still one and its image chunks are moved into an ANMF chunk
// of the container
// (https://developers.google.com/speed/webp/docs/riff_container).
//
// A frame is only the rectangle that changed since the frame before,
// replacing what is under it (no blending, no disposal): the canvas keeps
// the rest. Stickers move a little on a still background, and each frame
// then costs a fraction of the bytes and of the encoding time.

// animHeader is the size of RIFF, VP8X and ANIM before the frames.
const animHeader = 12 + 8 + 10 + 8 + 6

// The encoder's effort (libwebp's method, 0-6). Still stickers take
// libwebp's default; animations the cheapest, as every attempt encodes
// every frame again.
const (
	stillMethod = 4
	animMethod  = 0
	// maxAnimAttempts bounds the encodings of one animation: the qualities,
	// then frame counts, each chosen from how far the last one missed.
	maxAnimAttempts = 8
)

// The qualities tried, best first. A still sticker starts where lossy
// artefacts are hard to see and goes down to whatever fits: even noise fits
// 100 KiB at the bottom. An animation is tried at fewer, as each attempt
// costs every frame; below 15 it loses frames instead (see encodeAnimation).
func stillQualities() []int { return []int{80, 65, 50, 35, 20, 10, 1} }

func animQualities() []int { return []int{75, 50, 30, 15} }

// stickerCanvas is a transparent 512x512 picture with img drawn at its place.
func stickerCanvas(img *image.NRGBA) *image.NRGBA {
	c := image.NewNRGBA(image.Rect(0, 0, stickerSide, stickerSide))
	copyNRGBA(c, img.Rect.Min, img, img.Rect)
	return c
}

// encodeStill encodes at decreasing qualities until the sticker fits,
// skipping further down when it misses by far.
func encodeStill(ctx context.Context, img *image.NRGBA) ([]byte, error) {
	c := stickerCanvas(img)
	qualities := stillQualities()
	for i := 0; ; {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out, err := encodeWebP(c, qualities[i], stillMethod)
		if err != nil {
			return nil, err
		}
		if len(out) <= maxStaticSticker {
			return out, nil
		}
		if i == len(qualities)-1 {
			return nil, cannotFit(len(out), "static", maxStaticSticker)
		}
		step := 1
		switch {
		case len(out) > 2*maxStaticSticker:
			step = 3
		case len(out) > maxStaticSticker*3/2:
			step = 2
		}
		i = min(i+step, len(qualities)-1)
	}
}

// encodeWebP encodes img whole. The encoder reads a picture's pixels as one
// block from its first, so img must not be a sub-image.
func encodeWebP(img *image.NRGBA, quality, method int) ([]byte, error) {
	var buf bytes.Buffer
	if err := webp.Encode(&buf, img, webp.Options{Quality: quality, Method: method}); err != nil {
		return nil, fmt.Errorf("sticker: encode webp: %w", err)
	}
	return buf.Bytes(), nil
}

// encodeAnimation encodes frames within WhatsApp's limit for animated
// stickers: at decreasing qualities, then with fewer frames, each step
// chosen from how far the last attempt missed. animated is false when the
// frames turned out identical and a still sticker was made instead.
func encodeAnimation(ctx context.Context, frames []stickerFrame) (data []byte, animated bool, err error) {
	qualities := animQualities()
	floor := len(qualities) - 1
	q, set, size := 0, frames, 0
	for range maxAnimAttempts {
		var n int
		data, n, size, err = muxAnimation(ctx, set, qualities[q])
		switch {
		case err != nil:
			return nil, false, err
		case data != nil && n == 1:
			data, err = encodeStill(ctx, set[0].img)
			return data, false, err
		case data != nil:
			return data, true, nil
		}
		miss := float64(size) / maxAnimatedSticker
		// A quality step saves 10-25 %; past that, only the lowest quality
		// and fewer frames will do.
		switch {
		case q < floor && miss < 1.3:
			q++
		case q < floor:
			q = floor
		case len(set) > 2:
			set = thinFrames(frames, max(2, min(len(set)-1, int(float64(len(set))/(miss*1.15)))))
		default:
			return nil, false, cannotFit(size, "animated", maxAnimatedSticker)
		}
	}
	return nil, false, cannotFit(size, "animated", maxAnimatedSticker)
}

// thinFrames keeps k of frames, evenly spread, each shown for the frames it
// stands for.
func thinFrames(frames []stickerFrame, k int) []stickerFrame {
	out := make([]stickerFrame, 0, k)
	for g := range k {
		from, to := g*len(frames)/k, (g+1)*len(frames)/k
		f := frames[from]
		for _, merged := range frames[from+1 : to] {
			f.millis += merged.millis
		}
		out = append(out, f)
	}
	return out
}

// animFrame is one ANMF chunk to be: where it goes on the canvas, how long
// it shows and its image chunks (ALPH and VP8, or VP8L).
type animFrame struct {
	rect   image.Rectangle
	millis int
	chunks []byte
	alpha  bool
}

// muxAnimation encodes frames at quality. When the result is over the limit
// it stops as soon as it knows and returns no data, with size the projected
// size of the whole: the first frame, drawn whole, costs more than the
// others.
func muxAnimation(ctx context.Context, frames []stickerFrame, quality int) (data []byte, n, size int, err error) {
	canvas := image.Rect(0, 0, stickerSide, stickerSide)
	prev, cur := image.NewNRGBA(canvas), image.NewNRGBA(canvas)
	var out []animFrame
	size = animHeader
	first := 0
	for i, f := range frames {
		if err := ctx.Err(); err != nil {
			return nil, 0, 0, err
		}
		copyNRGBA(cur, f.img.Rect.Min, f.img, f.img.Rect)
		r := canvas
		if i > 0 {
			if r = changed(prev, cur, f.img.Rect); r.Empty() {
				out[len(out)-1].millis += f.millis
				continue
			}
			// ANMF offsets are stored halved.
			r.Min.X &^= 1
			r.Min.Y &^= 1
		}
		af, err := encodeFrame(cur, r, quality)
		if err != nil {
			return nil, 0, 0, err
		}
		af.millis = f.millis
		out = append(out, af)
		size += 8 + 16 + len(af.chunks)
		if i == 0 {
			first = size
		}
		if size > maxAnimatedSticker {
			if done := i + 1; done < len(frames) {
				if done == 1 {
					size *= len(frames)
				} else {
					size = first + (size-first)*(len(frames)-1)/(done-1)
				}
			}
			return nil, 0, size, nil
		}
		prev, cur = cur, prev
	}
	return assembleAnimation(out), len(out), size, nil
}

// changed is the smallest rectangle within r outside of which a and b are
// the same.
func changed(a, b *image.NRGBA, r image.Rectangle) image.Rectangle {
	var diff image.Rectangle
	for y := r.Min.Y; y < r.Max.Y; y++ {
		ra := a.Pix[a.PixOffset(r.Min.X, y):a.PixOffset(r.Max.X, y)]
		rb := b.Pix[b.PixOffset(r.Min.X, y):b.PixOffset(r.Max.X, y)]
		if bytes.Equal(ra, rb) {
			continue
		}
		lo, hi := 0, len(ra)-1
		for ra[lo] == rb[lo] {
			lo++
		}
		for ra[hi] == rb[hi] {
			hi--
		}
		diff = diff.Union(image.Rect(r.Min.X+lo/4, y, r.Min.X+hi/4+1, y+1))
	}
	return diff
}

// encodeFrame encodes the part r of canvas as a still WebP and keeps its
// image chunks.
func encodeFrame(canvas *image.NRGBA, r image.Rectangle, quality int) (animFrame, error) {
	part := image.NewNRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
	copyNRGBA(part, image.Point{}, canvas, r)
	still, err := encodeWebP(part, quality, animMethod)
	if err != nil {
		return animFrame{}, err
	}
	f := animFrame{rect: r}
	hasImage := false
	riffChunks(still, func(fourcc string, body []byte) {
		switch fourcc {
		case "ALPH", "VP8L":
			f.alpha = true
			fallthrough
		case "VP8 ":
			hasImage = hasImage || fourcc != "ALPH"
			f.chunks = appendChunk(f.chunks, fourcc, body)
		}
	})
	if !hasImage {
		return animFrame{}, errors.New("sticker: the encoder wrote a WebP without image data")
	}
	return f, nil
}

// assembleAnimation writes the container: a 512x512 canvas, looping
// forever, and the frames.
func assembleAnimation(frames []animFrame) []byte {
	vp8x := make([]byte, 10)
	vp8x[0] = 0x02 // animation
	for _, f := range frames {
		if f.alpha {
			vp8x[0] |= 0x10
		}
	}
	put24(vp8x[4:], stickerSide-1)
	put24(vp8x[7:], stickerSide-1)
	body := []byte("WEBP")
	body = appendChunk(body, "VP8X", vp8x)
	body = appendChunk(body, "ANIM", make([]byte, 6)) // transparent background, loop count 0: forever
	for _, f := range frames {
		h := make([]byte, 16)
		put24(h[0:], f.rect.Min.X/2)
		put24(h[3:], f.rect.Min.Y/2)
		put24(h[6:], f.rect.Dx()-1)
		put24(h[9:], f.rect.Dy()-1)
		put24(h[12:], f.millis)
		h[15] = 0x02 // do not blend: the rectangle replaces what is under it
		body = appendChunk(body, "ANMF", h, f.chunks)
	}
	return appendChunk(nil, "RIFF", body)
}

// appendChunk appends a RIFF chunk made of parts, padded to an even size.
func appendChunk(b []byte, fourcc string, parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	b = append(b, fourcc...)
	b = binary.LittleEndian.AppendUint32(b, uint32(n))
	for _, p := range parts {
		b = append(b, p...)
	}
	if n%2 == 1 {
		b = append(b, 0)
	}
	return b
}

func put24(b []byte, v int) {
	b[0], b[1], b[2] = byte(v), byte(v>>8), byte(v>>16)
}

// copyNRGBA copies the part r of src to dst at p, row by row: the generic
// draw path converts every pixel through premultiplied color and back.
func copyNRGBA(dst *image.NRGBA, p image.Point, src *image.NRGBA, r image.Rectangle) {
	for y := r.Min.Y; y < r.Max.Y; y++ {
		copy(dst.Pix[dst.PixOffset(p.X, p.Y+y-r.Min.Y):], src.Pix[src.PixOffset(r.Min.X, y):src.PixOffset(r.Max.X, y)])
	}
}

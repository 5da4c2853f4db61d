package media

import (
	"bytes"
	"context"
	"encoding/binary"
	"image"
	"image/gif"

	"golang.org/x/image/draw"

	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/fault"
)

// WhatsApp shows a sticker only as a 512x512 WebP, and its clients refuse
// to send static ones over 100 KiB and animated ones over 500 KiB or over
// 10 s: a sticker made from an arbitrary picture is converted here, where
// those rules can be kept, rather than refused by the phone at the other end.
const (
	stickerSide        = 512
	maxStaticSticker   = 100 << 10
	maxAnimatedSticker = 500 << 10
	maxStickerMillis   = 10_000
)

// maxStickerFrames bounds the frames of a source animation, checked from its
// header: 500 is 10 s at 50 frames a second, the fastest a GIF plays (2/100 s
// a frame; shorter delays are shown at 100 ms, see frameMillis).
const maxStickerFrames = 500

// maxAnimatedPixels bounds the canvas of a source animation: each frame
// kept is scaled from the whole canvas. 4 megapixels takes 2048x2048 and
// 1920x1080, four times the sticker's side; more gains nothing on a
// 512x512 sticker.
const maxAnimatedPixels = 4 << 20

// maxEncodedFrames bounds the frames of an animated sticker. libwebp run as
// WASM takes 40-70 ms to encode a 512x512 frame at its cheapest effort, and
// 500 KiB over 50 frames is already only 10 KiB each, about what a lossy
// 512x512 frame needs to look right: a longer source keeps 50 of its
// frames, evenly spread, each shown for the frames it stands for, so that
// its length is kept.
const maxEncodedFrames = 50

// Sticker converts a PNG, JPEG, GIF or WebP picture (animated or not) into a
// WhatsApp sticker: the picture fitted in 512x512, centred on a transparent
// canvas as WhatsApp's sticker maker does, as WebP under WhatsApp's size
// limits; an animation keeps its timing. Everything a client sends is
// checked from the headers before anything is decoded, and the decoding and
// encoding run in one of the image pool's slots.
func (p *Preparer) Sticker(ctx context.Context, data []byte) (File, error) {
	src, err := inspectSticker(data)
	if err != nil {
		return File{}, err
	}
	release, err := p.decodes.Acquire(ctx)
	if err != nil {
		return File{}, err
	}
	defer release()
	frames, err := src.decode(ctx, data)
	if err != nil {
		return File{}, err
	}
	f := File{Mimetype: "image/webp", Width: stickerSide, Height: stickerSide}
	if len(frames) == 1 {
		f.Data, err = encodeStill(ctx, frames[0].img)
	} else {
		f.Data, f.Animated, err = encodeAnimation(ctx, frames)
	}
	if err != nil {
		return File{}, err
	}
	return f, nil
}

// stickerSource is what a source's header says, enough to refuse it
// before a decode slot is taken.
type stickerSource struct {
	mimetype string
	anim     animInfo     // GIFs and animated WebPs
	webp     animatedWebP // an animated WebP's frames
}

// animInfo is an animation's layout, read from its blocks or chunks without
// decoding a pixel.
type animInfo struct {
	width, height int
	frames        int
	millis        int   // shown, each frame's delay as frameMillis has it
	area          int64 // pixels of all frames (a GIF's are partial)
	frameBytes    int64 // a WebP's: the most decoding one frame allocates
}

func inspectSticker(data []byte) (stickerSource, error) {
	if len(data) > MaxImage {
		return stickerSource{}, onSource(tooLarge(len(data), "images", MaxImage))
	}
	src := stickerSource{mimetype: detect(data)}
	var ok bool
	switch src.mimetype {
	case "image/png", "image/jpeg":
	case "image/gif":
		if src.anim, ok = inspectGIF(data); !ok {
			return src, unreadable(src.mimetype)
		}
		return src, src.anim.check(src.mimetype)
	case "image/webp":
		var animated bool
		if src.webp, animated, ok = parseAnimatedWebP(data); !ok {
			return src, unreadable(src.mimetype)
		}
		if animated {
			src.anim = src.webp.info()
			return src, src.anim.check(src.mimetype)
		}
	default:
		e := fault.New(fault.Unsupported, "source must be a PNG, JPEG, GIF or WebP image; it is %s", src.mimetype)
		e.Field = "source"
		return src, e
	}
	if _, err := checkImageHeader(data, maxDecodedBytes); err != nil {
		return src, onSource(imageError(src.mimetype, err))
	}
	return src, nil
}

// check applies the bounds of an animation, its decoded size among them
// (decodedBytes).
func (a animInfo) check(mimetype string) error {
	canvas := int64(a.width) * int64(a.height)
	switch {
	case a.frames == 0 || canvas == 0:
		return unreadable(mimetype)
	case canvas > maxPixels:
		return refuse(fault.TooLarge, "source is %dx%d; images may have at most %d megapixels", a.width, a.height, maxPixels>>20)
	case a.frames > 1 && canvas > maxAnimatedPixels:
		return refuse(fault.TooLarge, "source is an animation of %dx%d; animated stickers are made from animations of at most %d megapixels (2048x2048)", a.width, a.height, maxAnimatedPixels>>20)
	case a.frames > maxStickerFrames:
		return refuse(fault.TooLarge, "source has %d frames; an animated sticker may have at most %d", a.frames, maxStickerFrames)
	case a.millis > maxStickerMillis:
		return refuse(fault.Invalid, "source plays for %.1f s; WhatsApp plays animated stickers for at most %d s", float64(a.millis)/1000, maxStickerMillis/1000)
	}
	if decoded := a.decodedBytes(mimetype); decoded > maxDecodedBytes {
		return refuse(fault.TooLarge, "source decodes to %s (%d frames of %dx%d pixels); a sticker's source may take at most %s once decoded",
			sizeOver(decoded), a.frames, a.width, a.height, config.FormatSize(maxDecodedBytes))
	}
	return nil
}

// decodedBytes is what making a sticker of the animation allocates at
// most, from the cost model (decodecost.go): the frames kept for the
// sticker (a 512x512 NRGBA each, and one more being compared), the RGBA
// canvas the frames are drawn on, and its halvings (shrink); for a GIF,
// every frame as image/gif keeps them (a byte a pixel) and a second canvas
// for the frames that restore it; for a WebP, one frame's decode at a time
// (animwebp.go).
func (a animInfo) decodedBytes(mimetype string) int64 {
	canvas := 4 * int64(a.width) * int64(a.height)
	decoded := int64(min(a.frames, maxEncodedFrames)+1)*stickerSide*stickerSide*4 + canvas + shrinkBytes(a.width, a.height)
	if mimetype == "image/gif" {
		return decoded + a.area + canvas
	}
	return decoded + a.frameBytes
}

// shrinkBytes is what shrink allocates for a w x h frame: its halvings.
func shrinkBytes(w, h int) int64 {
	var n int64
	for ; max(w, h) >= 2*stickerSide && min(w, h) >= 2; w, h = w/2, h/2 {
		n += 4 * int64(w/2) * int64(h/2)
	}
	return n
}

// frameMillis is how long a frame shows, in milliseconds. Browsers show
// frames of 10 ms or less for 100 ms, and GIFs are made to look right in
// them; WhatsApp wants at least 8 ms.
func frameMillis(ms int) int {
	if ms <= 10 {
		return 100
	}
	return ms
}

// inspectGIF walks a GIF's blocks: the logical screen, and for each image
// its size and the delay of the graphic control extension before it. ok is
// false when it is not a GIF; a truncated one is left to the decoder.
func inspectGIF(data []byte) (a animInfo, ok bool) {
	if len(data) < 13 || (string(data[:6]) != "GIF87a" && string(data[:6]) != "GIF89a") {
		return a, false
	}
	a.width, a.height = int(le16(data[6:])), int(le16(data[8:]))
	i := 13 + colorTableSize(data[10])
	delay := 0
	for i < len(data) {
		switch data[i] {
		case 0x21: // extension: label, then sub-blocks
			if i+2 >= len(data) {
				return a, true
			}
			if data[i+1] == 0xF9 && i+6 <= len(data) && data[i+2] >= 4 {
				delay = int(le16(data[i+4:]))
			}
			i = skipSubBlocks(data, i+2)
		case 0x2C: // image descriptor, local color table, LZW code size, data
			if i+10 > len(data) {
				return a, true
			}
			w, h := int64(le16(data[i+5:])), int64(le16(data[i+7:]))
			i = skipSubBlocks(data, i+10+colorTableSize(data[i+9])+1)
			a.frames++
			a.area += w * h
			a.millis += frameMillis(delay * 10)
			delay = 0
		default: // the trailer, or bytes the decoder will refuse
			return a, true
		}
	}
	return a, true
}

func colorTableSize(flags byte) int {
	if flags&0x80 == 0 {
		return 0
	}
	return 3 << (flags&7 + 1)
}

// skipSubBlocks returns the index after the sub-blocks starting at i.
func skipSubBlocks(data []byte, i int) int {
	for i < len(data) {
		n := int(data[i])
		i += 1 + n
		if n == 0 {
			break
		}
	}
	return i
}

func le16(b []byte) uint16 { return binary.LittleEndian.Uint16(b) }

func le24(b []byte) int { return int(b[0]) | int(b[1])<<8 | int(b[2])<<16 }

// info is the layout of an animated WebP, as the sticker's bounds judge it.
func (w animatedWebP) info() animInfo {
	a := animInfo{width: w.width, height: w.height, frames: len(w.frames)}
	for _, f := range w.frames {
		a.millis += f.millis
		a.area += f.pixelsOf
		a.frameBytes = max(a.frameBytes, f.decodes)
	}
	return a
}

// riffChunks calls fn with each chunk of a WebP file; false when it is not
// one. A chunk running past the end stops the walk: the decoder says more.
func riffChunks(data []byte, fn func(fourcc string, body []byte)) bool {
	if !isWebP(data) {
		return false
	}
	for b := data[12:]; len(b) >= 8; {
		n := uint64(binary.LittleEndian.Uint32(b[4:]))
		if n > uint64(len(b)-8) {
			break
		}
		fn(string(b[:4]), b[8:8+n])
		b = b[min(uint64(len(b)), 8+n+n&1):]
	}
	return true
}

// stickerFrame is one frame fitted in the sticker: img's bounds are where it
// sits on the 512x512 canvas, the rest of which stays transparent.
type stickerFrame struct {
	img    *image.NRGBA
	millis int
}

// decode returns the frames of the sticker, scaled; identical neighbours
// are merged, and a source of one frame gives one.
func (s stickerSource) decode(ctx context.Context, data []byte) ([]stickerFrame, error) {
	switch {
	case s.mimetype == "image/gif":
		g, err := gif.DecodeAll(bytes.NewReader(data))
		if err != nil || len(g.Image) == 0 || len(g.Image) > maxStickerFrames {
			return nil, unreadable(s.mimetype)
		}
		return gifFrames(ctx, g)
	case s.anim.frames > 0:
		sink := newFrameSink(len(s.webp.frames))
		if err := s.webp.decode(ctx, sink.add); err != nil {
			return nil, err
		}
		return sink.frames, nil
	}
	img, err := decodeImage(data, maxDecodedBytes)
	if err != nil {
		return nil, onSource(imageError(s.mimetype, err))
	}
	return []stickerFrame{{img: fitSticker(img, draw.CatmullRom)}}, nil
}

// gifFrames draws each frame of g on a canvas of its logical screen as a
// browser does: a frame may cover only part of the screen, with the rest
// left from the frames before, and after it is shown its disposal clears
// its area or restores what was there before it.
func gifFrames(ctx context.Context, g *gif.GIF) ([]stickerFrame, error) {
	screen := image.Rect(0, 0, g.Config.Width, g.Config.Height)
	canvas := image.NewRGBA(screen)
	var saved *image.RGBA
	sink := newFrameSink(len(g.Image))
	for i, frame := range g.Image {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r := frame.Rect.Intersect(screen)
		disposal := byte(0)
		if i < len(g.Disposal) {
			disposal = g.Disposal[i]
		}
		if disposal == gif.DisposalPrevious {
			if saved == nil {
				saved = image.NewRGBA(screen)
			}
			draw.Copy(saved, r.Min, canvas, r, draw.Src, nil)
		}
		drawPaletted(canvas, frame, r)
		delay := 0
		if i < len(g.Delay) {
			delay = g.Delay[i]
		}
		sink.add(i, frameMillis(delay*10), canvas)
		switch disposal {
		case gif.DisposalBackground: // browsers clear to transparent, not to the background color
			draw.Draw(canvas, r, image.Transparent, image.Point{}, draw.Src)
		case gif.DisposalPrevious:
			draw.Copy(canvas, r.Min, saved, r, draw.Src, nil)
		}
		g.Image[i] = nil
	}
	return sink.frames, nil
}

// drawPaletted draws the pixels of frame within r over canvas: a GIF's
// pixels are opaque or, at its transparent index, not drawn.
func drawPaletted(canvas *image.RGBA, frame *image.Paletted, r image.Rectangle) {
	var pal [256][4]byte
	for i, c := range frame.Palette {
		cr, cg, cb, ca := c.RGBA()
		pal[i] = [4]byte{byte(cr >> 8), byte(cg >> 8), byte(cb >> 8), byte(ca >> 8)}
	}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		src := frame.Pix[frame.PixOffset(r.Min.X, y):]
		dst := canvas.Pix[canvas.PixOffset(r.Min.X, y):]
		for x := range r.Dx() {
			if c := pal[src[x]]; c[3] != 0 {
				copy(dst[4*x:4*x+4], c[:])
			}
		}
	}
}

// frameSink keeps at most maxEncodedFrames of n frames: frames are taken in
// evenly spread groups, the first of each shown for the whole group.
type frameSink struct {
	n, groups, next int
	frames          []stickerFrame
	halves          []*image.RGBA // shrink's, made once for every frame
}

func newFrameSink(n int) *frameSink {
	return &frameSink{n: n, groups: min(n, maxEncodedFrames)}
}

// add takes frame i, shown for millis; img is only read during the call.
func (s *frameSink) add(i, millis int, img image.Image) {
	if s.next >= s.groups || i != s.next*s.n/s.groups {
		s.frames[len(s.frames)-1].millis += millis
		return
	}
	s.next++
	var fit *image.NRGBA
	if s.n == 1 {
		fit = fitSticker(img, draw.CatmullRom)
	} else {
		fit = fitSticker(s.shrink(img), draw.ApproxBiLinear)
	}
	if k := len(s.frames); k > 0 && bytes.Equal(s.frames[k-1].img.Pix, fit.Pix) {
		s.frames[k-1].millis += millis
		return
	}
	s.frames = append(s.frames, stickerFrame{img: fit, millis: millis})
}

// fitSticker scales img to fit stickerSide, up or down, keeping its aspect
// ratio, at its place on the centred canvas. Scaling works on premultiplied
// pixels (so that transparent ones do not bleed their color into the
// edges); the result is straight alpha, which is what the encoder reads.
func fitSticker(img image.Image, kernel draw.Interpolator) *image.NRGBA {
	b := img.Bounds()
	w, h := stickerSide, stickerSide
	if b.Dx() > b.Dy() {
		h = max(1, (b.Dy()*stickerSide+b.Dx()/2)/b.Dx())
	} else if b.Dy() > b.Dx() {
		w = max(1, (b.Dx()*stickerSide+b.Dy()/2)/b.Dy())
	}
	r := image.Rect(0, 0, w, h).Add(image.Pt((stickerSide-w)/2, (stickerSide-h)/2))
	dst := image.NewRGBA(r)
	kernel.Scale(dst, r, img, b, draw.Src, nil)
	pix := dst.Pix
	for i := 0; i < len(pix); i += 4 {
		if a := uint32(pix[i+3]); a != 0 && a != 255 {
			pix[i] = uint8((uint32(pix[i])*255 + a/2) / a)
			pix[i+1] = uint8((uint32(pix[i+1])*255 + a/2) / a)
			pix[i+2] = uint8((uint32(pix[i+2])*255 + a/2) / a)
		}
	}
	return &image.NRGBA{Pix: pix, Stride: dst.Stride, Rect: r}
}

// shrink halves a frame, each pixel the mean of four, until it is less
// than twice the sticker's side: the kernels of package draw cost ten
// times more on a large frame, and past twice the nearest-pixel one skips
// pixels. Only *image.RGBA, the canvas both animations are drawn on, is
// shrunk, into the sink's halvings: every frame is of the canvas's size,
// and one set of them serves all.
func (s *frameSink) shrink(img image.Image) image.Image {
	src, ok := img.(*image.RGBA)
	if !ok {
		return img
	}
	for k, b := 0, src.Rect; max(b.Dx(), b.Dy()) >= 2*stickerSide && min(b.Dx(), b.Dy()) >= 2; k, b = k+1, src.Rect {
		r := image.Rect(0, 0, b.Dx()/2, b.Dy()/2)
		if k == len(s.halves) || s.halves[k].Rect != r {
			s.halves = append(s.halves[:k], image.NewRGBA(r))
		}
		half := s.halves[k]
		for y := range half.Rect.Dy() {
			r0 := src.Pix[src.PixOffset(b.Min.X, b.Min.Y+2*y):]
			r1 := src.Pix[src.PixOffset(b.Min.X, b.Min.Y+2*y+1):]
			out := half.Pix[y*half.Stride : y*half.Stride+4*half.Rect.Dx()]
			for i := range out {
				j := i/4*8 + i%4
				out[i] = uint8((uint32(r0[j]) + uint32(r0[j+4]) + uint32(r1[j]) + uint32(r1[j+4]) + 2) / 4)
			}
		}
		src = half
	}
	return src
}

func unreadable(mimetype string) error {
	return fault.InvalidField("source", "source looks like %s but is not a readable image", mimetype)
}

func refuse(code fault.Code, format string, args ...any) error {
	e := fault.New(code, format, args...)
	e.Field = "source"
	return e
}

// onSource names the field of a refusal made by the image checks, some of
// which name none; a full pool is no fault of the source.
func onSource(err error) error {
	if f := fault.From(err); f != nil && f.Field == "" && f.Code != fault.RateLimited {
		f.Field = "source"
	}
	return err
}

func cannotFit(size int, kind string, limit int) error {
	return refuse(fault.TooLarge, "source does not fit in a sticker: at the lowest quality the WebP is still %s, over WhatsApp's %s limit for %s stickers; send a smaller or simpler picture",
		config.FormatSize(int64(size)), config.FormatSize(int64(limit)), kind)
}

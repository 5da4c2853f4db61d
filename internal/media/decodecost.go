package media

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"

	"golang.org/x/image/webp"
)

// The cost model of every decode: what decoding an image allocates, in
// bytes, read from its header before anything is decoded. It counts the
// pixel buffers of what each decoder really builds, not of the color model
// its header names: a progressive JPEG keeps every DCT coefficient (4 bytes
// each) of every component until its last scan, a CMYK or RGB one is
// converted into a picture of its own, an interlaced PNG is decoded pass by
// pass before it is merged, a gray PNG with a transparent color becomes
// 8-bit color, and a WebP's compressed alpha is decoded as a whole
// lossless picture. A 62 KB progressive CMYK JPEG of 8 megapixels decodes
// to 183 MiB: counted as pixels, a link preview took it.
//
// Images sent, pictures, video frames, still stickers and link previews'
// thumbnails are judged by imageCost; animations by animInfo.cost
// (sticker.go), from their frames' costs here.

// cost is what decoding one image allocates.
type cost struct {
	width, height int    // of the picture decoded
	bytes         int64  // allocated while it is decoded and used
	layout        string // what makes it cost that, for a refusal: "progressive CMYK JPEG"
}

// perPixel is bytes over the pixels, for a refusal's message.
func (c cost) perPixel() float64 {
	return float64(c.bytes) / (float64(c.width) * float64(c.height))
}

// errUnsupportedImage says an image is in none of the formats decoded
// here, JPEG, PNG, GIF and WebP (a decoder another package registered
// with package image, for instance).
var errUnsupportedImage = errors.New("image is not JPEG, PNG, GIF or WebP")

// imageCost reads data's header: the size of the picture it decodes to and
// what decoding it allocates.
func imageCost(data []byte) (cost, error) {
	cfg, format, err := decodeConfig(data)
	if err != nil {
		return cost{}, fmt.Errorf("image header: %w", err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return cost{}, fmt.Errorf("image header: %dx%d pixels", cfg.Width, cfg.Height)
	}
	var c cost
	var ok bool
	switch format {
	case "jpeg":
		c, ok = jpegCost(data, cfg)
	case "png":
		c, ok = pngCost(data)
	case "gif":
		// gif.Decode reads the first frame, within the logical screen,
		// one byte a pixel.
		c, ok = cost{width: cfg.Width, height: cfg.Height, bytes: int64(cfg.Width) * int64(cfg.Height), layout: "GIF"}, true
	case "webp":
		c, ok = webpCost(data)
	default:
		return cost{}, errUnsupportedImage
	}
	if !ok {
		return cost{}, fmt.Errorf("image header: unreadable %s header", format)
	}
	return c, nil
}

// jpegCost is what image/jpeg allocates: each component's plane, whole
// MCUs of 8x8 blocks of its sampling (a byte a pixel), a progressive
// image's coefficients beside (4 bytes a pixel of each component), and
// the 4-byte picture an RGB, CMYK or YCCK image is converted into.
func jpegCost(data []byte, cfg image.Config) (cost, bool) {
	f, ok := jpegFrame(data)
	if !ok {
		return cost{}, false
	}
	h0, v0 := f.sampling[0][0], f.sampling[0][1]
	if len(f.sampling) == 1 { // one component: non-interleaved, 8x8 blocks whatever its factors
		h0, v0 = 1, 1
		f.sampling[0] = [2]int{1, 1}
	}
	mxx := (cfg.Width + 8*h0 - 1) / (8 * h0)
	myy := (cfg.Height + 8*v0 - 1) / (8 * v0)
	var blocks int64
	for _, s := range f.sampling {
		blocks += int64(mxx*s[0]) * int64(myy*s[1])
	}
	c := cost{width: cfg.Width, height: cfg.Height, bytes: 64 * blocks}
	kind := map[int]string{1: "gray", 3: "YCbCr", 4: "CMYK"}[len(f.sampling)]
	if f.progressive {
		c.bytes += 4 * 64 * blocks
	}
	if cfg.ColorModel == color.RGBAModel || cfg.ColorModel == color.CMYKModel {
		c.bytes += 4 * int64(cfg.Width) * int64(cfg.Height)
		if cfg.ColorModel == color.RGBAModel {
			kind = "RGB"
		}
	}
	c.layout = kind + " JPEG"
	if f.progressive {
		c.layout = "progressive " + c.layout
	}
	return c, true
}

// jpegSOF is a JPEG's frame header: each component's sampling factors
// (h, v), and whether it is coded in several scans.
type jpegSOF struct {
	sampling    [][2]int
	progressive bool
}

// jpegFrame reads a JPEG's frame header; false when none is found before
// the first scan.
func jpegFrame(data []byte) (jpegSOF, bool) {
	if len(data) < 4 || data[0] != 0xFF || data[1] != 0xD8 {
		return jpegSOF{}, false
	}
	for i := 2; i+4 <= len(data); {
		if data[i] != 0xFF {
			return jpegSOF{}, false
		}
		marker := data[i+1]
		if marker == 0xFF { // fill byte
			i++
			continue
		}
		length := int(binary.BigEndian.Uint16(data[i+2:]))
		seg := data[i+4 : min(len(data), i+2+length)]
		switch marker {
		case 0xC0, 0xC1, 0xC2: // the frames Go's decoder reads
			// precision, height, width, components, then 3 bytes each
			if len(seg) < 6 {
				return jpegSOF{}, false
			}
			n := int(seg[5])
			if (n != 1 && n != 3 && n != 4) || len(seg) < 6+3*n {
				return jpegSOF{}, false
			}
			f := jpegSOF{progressive: marker == 0xC2}
			for c := range n {
				hv := seg[6+3*c+1]
				f.sampling = append(f.sampling, [2]int{max(1, int(hv>>4)), max(1, int(hv&0x0F))})
			}
			return f, true
		case 0xDA, 0xD9: // scan or end before any frame
			return jpegSOF{}, false
		}
		if length < 2 {
			return jpegSOF{}, false
		}
		i += 2 + length
	}
	return jpegSOF{}, false
}

// pngCost is what image/png allocates: the picture in the model it really
// decodes to (a gray or truecolor image with a transparent color, tRNS,
// becomes NRGBA), twice for an interlaced one (each pass decoded on its
// own, then merged). Its two rows and the inflater's window are small
// beside it.
func pngCost(data []byte) (cost, bool) {
	if len(data) < 33 || string(data[:8]) != "\x89PNG\r\n\x1a\n" || string(data[12:16]) != "IHDR" {
		return cost{}, false
	}
	w, h := binary.BigEndian.Uint32(data[16:]), binary.BigEndian.Uint32(data[20:])
	depth, colorType, interlaced := data[24], data[25], data[28] == 1
	transparent := false
	for i := 33; i+8 <= len(data); {
		n, typ := int(binary.BigEndian.Uint32(data[i:])), string(data[i+4:i+8])
		if typ == "IDAT" || n < 0 {
			break
		}
		transparent = transparent || typ == "tRNS"
		i += 12 + n
	}
	var bpp int64
	var layout string
	switch {
	case colorType == 3:
		bpp, layout = 1, "paletted PNG"
	case colorType == 0 && !transparent && depth <= 8:
		bpp, layout = 1, "8-bit gray PNG"
	case colorType == 0 && !transparent:
		bpp, layout = 2, "16-bit gray PNG"
	case depth == 16:
		bpp, layout = 8, "16-bit color PNG"
	default:
		bpp, layout = 4, "8-bit color PNG"
	}
	c := cost{width: int(w), height: int(h), bytes: bpp * int64(w) * int64(h), layout: layout}
	if interlaced {
		c.bytes *= 2
		c.layout = "interlaced " + c.layout
	}
	return c, true
}

// The bytes per pixel of golang.org/x/image/webp's decoders: a lossy
// picture is 4:2:0 YCbCr of whole 16x16 macroblocks; a lossless one is
// decoded to NRGBA, and its color-indexing transform writes a second copy
// from the packed first, beside the transforms' and codes' tiles (at most a
// quarter byte a pixel each): 7 at most. Compressed alpha is a lossless
// picture of its own, then one byte a pixel.
const (
	lossyPerPixel    = 1.5
	losslessPerPixel = 7
)

// webpCost is what golang.org/x/image/webp allocates for a still WebP: it
// decodes the first VP8 or VP8L chunk at the size its bitstream says, which
// need not be VP8X's canvas (the alpha plane's size).
func webpCost(data []byte) (cost, bool) {
	var canvasW, canvasH int
	var alpha []byte
	var c cost
	ok, done := false, false
	riffChunks(data, func(fourcc string, body []byte) {
		if done {
			return
		}
		switch fourcc {
		case "VP8X":
			if len(body) >= 10 {
				canvasW, canvasH = le24(body[4:])+1, le24(body[7:])+1
				if body[0]&0x10 != 0 {
					alpha = []byte{} // expected: the chunk comes before VP8
				}
			}
		case "ALPH":
			if alpha != nil && len(body) > 0 {
				alpha = body
			}
		case "VP8 ", "VP8L":
			done = true
			c, ok = stillWebPCost(fourcc, body, alpha, canvasW, canvasH)
		}
	})
	return c, ok
}

// stillWebPCost is the cost of decoding one picture's bitstream (a VP8 or
// VP8L chunk's body) with its alpha (an ALPH chunk's body, nil when none)
// of alphaW x alphaH, which must be the picture's size.
func stillWebPCost(fourcc string, body, alpha []byte, alphaW, alphaH int) (cost, bool) {
	w, h, ok := bitstreamSize(fourcc, body)
	if !ok {
		return cost{}, false
	}
	c := cost{width: w, height: h}
	if fourcc == "VP8L" {
		c.bytes, c.layout = int64(losslessPerPixel*float64(w)*float64(h)), "lossless WebP"
		return c, true
	}
	c.bytes = int64(lossyPerPixel * float64(16*((w+15)/16)) * float64(16*((h+15)/16)))
	c.layout = "lossy WebP"
	if len(alpha) > 0 {
		if alphaW != w || alphaH != h { // the decoder would read its alpha out of bounds
			return cost{}, false
		}
		area := int64(w) * int64(h)
		c.bytes += area
		c.layout = "lossy WebP with alpha"
		if alpha[0]&0x03 == 1 {
			c.bytes += int64(losslessPerPixel * float64(area))
			c.layout = "lossy WebP with compressed alpha"
		}
	}
	return c, true
}

// bitstreamSize reads the picture size of a VP8 (a key frame's header) or
// VP8L bitstream.
func bitstreamSize(fourcc string, b []byte) (w, h int, ok bool) {
	switch fourcc {
	case "VP8 ":
		if len(b) < 10 || b[0]&1 != 0 || b[3] != 0x9d || b[4] != 0x01 || b[5] != 0x2a {
			return 0, 0, false
		}
		w, h = int(le16(b[6:])&0x3fff), int(le16(b[8:])&0x3fff)
	case "VP8L":
		if len(b) < 5 || b[0] != 0x2f {
			return 0, 0, false
		}
		bits := binary.LittleEndian.Uint32(b[1:])
		w, h = int(bits&0x3fff)+1, int(bits>>14&0x3fff)+1
	default:
		return 0, 0, false
	}
	return w, h, w > 0 && h > 0
}

// decodeConfig is image.DecodeConfig, except that WebP is read by
// x/image's decoder: package image has two WebP decoders registered (the
// sticker encoder's library brings libwebp's, which decodes every frame
// of an animation) and picks whichever initialised first; the bounds
// here are computed for x/image's, which decodes one frame.
func decodeConfig(data []byte) (image.Config, string, error) {
	if isWebP(data) {
		cfg, err := webp.DecodeConfig(bytes.NewReader(data))
		return cfg, "webp", err
	}
	return image.DecodeConfig(bytes.NewReader(data))
}

package media

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	_ "image/gif" // SquareJPEG takes a GIF's first frame
	"image/jpeg"
	_ "image/png"
	"io"

	"golang.org/x/image/draw"
	"golang.org/x/image/webp"

	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/fault"
)

// thumbSide is the longest side of a thumbnail. The thumbnail travels
// inside the (encrypted, size-bounded) message itself and the recipient
// only shows it blurred and stretched to the bubble until the media has
// downloaded, so detail is wasted: Baileys sends 32 px, and 72 px at
// quality 60 (1-3 KB) still gives a recognisable preview.
const (
	thumbSide    = 72
	thumbQuality = 60
)

// pictureSide is WhatsApp's size for profile and group pictures; larger
// uploads are refused by its servers.
const (
	pictureSide    = 640
	pictureQuality = 90
)

// maxPixels bounds the pixels of an image: the thumbnail's scaling reads
// every one of them. 64 megapixels is more than any phone camera writes by
// default.
const maxPixels = 64 << 20

// maxDecodedBytes bounds the memory an image takes once decoded, judged
// from its header before anything is decoded: a 522 KB PNG of 8192x8192
// 16-bit pixels decodes to 512 MiB, twice an 8-bit one of the same size.
// 256 MiB admits 64 megapixels at 8 bits per channel.
const maxDecodedBytes = 256 << 20

// Image accepts JPEG, PNG and WebP as they are; it reads their size and
// makes the thumbnail.
func (p *Preparer) Image(ctx context.Context, data []byte, fileName string) (File, error) {
	if len(data) > MaxImage {
		return File{}, tooLarge(len(data), "images", MaxImage)
	}
	mt := detect(data)
	switch mt {
	case "image/jpeg", "image/png", "image/webp":
	case "image/gif":
		return File{}, fault.New(fault.Unsupported, "source is a GIF (image/gif); WhatsApp does not show GIF images: convert it to an MP4 video and send that as a video with gifPlayback: true")
	default:
		return File{}, fault.New(fault.Unsupported, "source is %s; WhatsApp takes images as JPEG (image/jpeg), PNG (image/png) or WebP (image/webp)", mt)
	}
	img, release, err := p.decode(ctx, data)
	if err != nil {
		return File{}, imageError(mt, err)
	}
	defer release() // the decoded image is alive until the thumbnail is made
	thumb, err := thumbnail(img)
	if err != nil {
		return File{}, fmt.Errorf("image thumbnail: %w", err)
	}
	b := img.Bounds()
	return File{
		Data:      data,
		Mimetype:  mt,
		FileName:  cleanName(fileName),
		Thumbnail: thumb,
		Width:     uint32(b.Dx()),
		Height:    uint32(b.Dy()),
	}, nil
}

// SquareJPEG makes a profile or group picture as WhatsApp requires: the
// centred square of the image, at most 640x640, as JPEG. JPEG, PNG, WebP
// and GIF (its first frame) are read, one of the decode pool's slots held
// while they are.
func (p *Preparer) SquareJPEG(ctx context.Context, data []byte) ([]byte, error) {
	if err := checkPicture(data); err != nil {
		return nil, err
	}
	img, release, err := p.decode(ctx, data)
	if err != nil {
		return nil, imageError(detect(data), err)
	}
	defer release()
	return squareJPEG(img)
}

func checkPicture(data []byte) error {
	if len(data) > MaxImage {
		return tooLarge(len(data), "pictures", MaxImage)
	}
	switch mt := detect(data); mt {
	case "image/jpeg", "image/png", "image/webp", "image/gif":
		return nil
	default:
		return fault.New(fault.Unsupported, "source is %s; a picture must be a JPEG, PNG or WebP image", mt)
	}
}

func squareJPEG(img image.Image) ([]byte, error) {
	b := img.Bounds()
	side := min(b.Dx(), b.Dy())
	crop := image.Rect(0, 0, side, side).Add(b.Min).Add(image.Pt((b.Dx()-side)/2, (b.Dy()-side)/2))
	out := min(side, pictureSide)
	return encodeJPEG(scale(img, crop, out, out), pictureQuality)
}

// decode is decodeImage in one of the decode pool's slots, for images of
// at most maxDecodedBytes decoded.
func (p *Preparer) decode(ctx context.Context, data []byte) (img image.Image, release func(), err error) {
	return p.DecodeWithin(ctx, data, maxDecodedBytes)
}

// DecodeWithin decodes a JPEG, PNG, GIF (its first frame) or WebP image in
// one of the decode pool's slots, refusing it from its header (TOO_LARGE)
// when decoding it would allocate more than limit bytes (at most
// maxDecodedBytes; see imageCost) or it has more than maxPixels pixels.
// The header is checked before a slot is waited for: an image the bounds
// refuse does not queue. release gives the slot back; call it once img is
// no longer used.
func (p *Preparer) DecodeWithin(ctx context.Context, data []byte, limit int64) (img image.Image, release func(), err error) {
	if _, err := checkImageHeader(data, limit); err != nil {
		return nil, nil, err
	}
	release, err = p.decodes.Acquire(ctx)
	if err != nil {
		return nil, nil, err
	}
	if img, err = decodeImage(data, limit); err != nil {
		release()
		return nil, nil, err
	}
	return img, release, nil
}

var errTooManyPixels = errors.New("too many pixels")

// decodeImage decodes after checking the header against limit, so that a
// small file cannot make the server allocate gigabytes.
func decodeImage(data []byte, limit int64) (image.Image, error) {
	if _, err := checkImageHeader(data, limit); err != nil {
		return nil, err
	}
	decode := func(r io.Reader) (image.Image, error) { img, _, err := image.Decode(r); return img, err }
	if isWebP(data) {
		decode = webp.Decode
	}
	img, err := decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("image: %w", err)
	}
	return img, nil
}

// checkImageHeader reads the image's header and refuses it when its
// pixels, or the bytes decoding it allocates, are over the bounds: limit,
// and at most maxDecodedBytes.
func checkImageHeader(data []byte, limit int64) (cost, error) {
	c, err := imageCost(data)
	if err != nil {
		return c, err
	}
	if int64(c.width)*int64(c.height) > maxPixels {
		return c, fmt.Errorf("%dx%d: %w", c.width, c.height, errTooManyPixels)
	}
	if limit = min(limit, maxDecodedBytes); c.bytes > limit {
		e := fault.New(fault.TooLarge, "source decodes to %s (%dx%d pixels, %s: %.3g bytes each); images may take at most %s once decoded",
			sizeOver(c.bytes), c.width, c.height, c.layout, c.perPixel(), config.FormatSize(limit))
		e.Field = "source"
		return c, e
	}
	return c, nil
}

func imageError(mimetype string, err error) error {
	if fault.From(err) != nil {
		return err // already classified: the decoded-size bound, a full pool
	}
	if errors.Is(err, errTooManyPixels) {
		return fault.New(fault.TooLarge, "source has too many pixels; images may have at most %d megapixels", maxPixels>>20)
	}
	if errors.Is(err, context.Canceled) {
		return err // the caller left while waiting for a slot
	}
	return fault.InvalidField("source", "source looks like %s but is not a readable image", mimetype)
}

// thumbnail scales img to fit thumbSide (never up) and encodes it as JPEG.
func thumbnail(img image.Image) ([]byte, error) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if longest := max(w, h); longest > thumbSide {
		w = max(1, (w*thumbSide+longest/2)/longest)
		h = max(1, (h*thumbSide+longest/2)/longest)
	}
	return encodeJPEG(scale(img, b, w, h), thumbQuality)
}

// scale draws the part src of img into a w x h picture over white: JPEG has
// no transparency, and transparent pixels would otherwise turn black.
func scale(img image.Image, src image.Rectangle, w, h int) *image.RGBA {
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(dst, dst.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	draw.CatmullRom.Scale(dst, dst.Bounds(), img, src, draw.Over, nil)
	return dst
}

func encodeJPEG(img image.Image, quality int) ([]byte, error) {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: quality}); err != nil {
		return nil, fmt.Errorf("encode jpeg: %w", err)
	}
	return buf.Bytes(), nil
}

// isWebP says whether data is a RIFF WebP file.
func isWebP(data []byte) bool {
	return len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP"
}

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

	"golang.org/x/image/draw"
	_ "golang.org/x/image/webp"

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

// maxPixels bounds decoded images: a 16 MiB PNG can claim 30000x30000
// pixels, 3.6 GB once decoded. 64 megapixels (256 MB decoded) is more than
// any phone camera writes by default.
const maxPixels = 64 << 20

// Image accepts JPEG, PNG and WebP as they are; it reads their size and
// makes the thumbnail.
func (p *Preparer) Image(_ context.Context, data []byte, fileName string) (File, error) {
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
	img, err := decodeImage(data)
	if err != nil {
		return File{}, imageError(mt, err)
	}
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
// and GIF (its first frame) are read.
func SquareJPEG(data []byte) ([]byte, error) {
	if len(data) > MaxImage {
		return nil, tooLarge(len(data), "pictures", MaxImage)
	}
	mt := detect(data)
	switch mt {
	case "image/jpeg", "image/png", "image/webp", "image/gif":
	default:
		return nil, fault.New(fault.Unsupported, "source is %s; a picture must be a JPEG, PNG or WebP image", mt)
	}
	img, err := decodeImage(data)
	if err != nil {
		return nil, imageError(mt, err)
	}
	b := img.Bounds()
	side := min(b.Dx(), b.Dy())
	crop := image.Rect(0, 0, side, side).Add(b.Min).Add(image.Pt((b.Dx()-side)/2, (b.Dy()-side)/2))
	out := min(side, pictureSide)
	return encodeJPEG(scale(img, crop, out, out), pictureQuality)
}

var errTooManyPixels = errors.New("too many pixels")

// decodeImage decodes after checking the claimed size, so that a small
// file cannot make the server allocate gigabytes.
func decodeImage(data []byte) (image.Image, error) {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("image header: %w", err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || int64(cfg.Width)*int64(cfg.Height) > maxPixels {
		return nil, fmt.Errorf("%dx%d: %w", cfg.Width, cfg.Height, errTooManyPixels)
	}
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("image: %w", err)
	}
	return img, nil
}

func imageError(mimetype string, err error) error {
	if errors.Is(err, errTooManyPixels) {
		return fault.New(fault.TooLarge, "source has too many pixels; images may have at most %d megapixels", maxPixels>>20)
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

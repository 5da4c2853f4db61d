package linkpreview

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	_ "image/gif" // og:images come in the web's formats
	"image/jpeg"
	_ "image/png"
	"io"
	"net/http"
	"net/url"

	"golang.org/x/image/draw"
	_ "golang.org/x/image/webp"
)

const (
	maxImageBytes = 2 << 20
	// maxImagePixels bounds what one decode allocates (up to ~8 bytes a
	// pixel, so 64 MB, times the previews made at once): a 2 MiB file can
	// claim any size, and only its header is read before it is refused.
	// Pages' preview images are around a megapixel (1200×630).
	maxImagePixels = 8_000_000
	thumbSide      = 100
	thumbQuality   = 75
)

var (
	errImageTooLarge    = errors.New("image is larger than 2 MiB")
	errTooManyPixels    = errors.New("image has more than 8 megapixels")
	errUnsupportedImage = errors.New("image is not JPEG, PNG, GIF or WebP")
)

type thumbnail struct {
	jpeg          []byte
	width, height int
}

// thumbnail fetches the image at u through the guarded client and scales it.
func (f *Fetcher) thumbnail(ctx context.Context, u *url.URL) (thumbnail, error) {
	if u.Scheme != "http" && u.Scheme != "https" {
		return thumbnail{}, fmt.Errorf("image URL has scheme %.16q; only http and https are fetched", u.Scheme)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return thumbnail{}, fmt.Errorf("build image request: %w", err)
	}
	req.Header.Set("Accept", "image/webp,image/png,image/jpeg,image/gif;q=0.9,*/*;q=0.1")
	resp, err := f.do(req)
	if err != nil {
		return thumbnail{}, fmt.Errorf("fetch image: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return thumbnail{}, fmt.Errorf("image %w", statusError(resp.StatusCode))
	}
	if resp.ContentLength > maxImageBytes {
		return thumbnail{}, errImageTooLarge
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxImageBytes+1))
	if err != nil {
		return thumbnail{}, fmt.Errorf("read image: %w", err)
	}
	if len(data) > maxImageBytes {
		return thumbnail{}, errImageTooLarge
	}
	return makeThumbnail(ctx, data)
}

// makeThumbnail checks the image's header before decoding it, then scales
// it to fit thumbSide x thumbSide (never up) over white and encodes JPEG.
func makeThumbnail(ctx context.Context, data []byte) (thumbnail, error) {
	format, err := checkHeader(data)
	if err != nil {
		return thumbnail{}, err
	}
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return thumbnail{}, fmt.Errorf("decode %s: %w", format, err)
	}
	// Decoding cannot be interrupted; scaling a large image is the other
	// slow step, so give up between the two if the preview's time is up.
	if err := ctx.Err(); err != nil {
		return thumbnail{}, err
	}
	b := img.Bounds()
	w, h := fit(b.Dx(), b.Dy(), thumbSide)
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	// JPEG has no transparency: transparent pixels would turn black.
	draw.Draw(dst, dst.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	src, sb := image.Image(img), b
	// CatmullRom's cost grows with the source: a cheap pass down to four
	// times the thumbnail first keeps an 8-megapixel image from eating the
	// preview's time, and the final pass smooths what it leaves.
	if pw, ph := fit(b.Dx(), b.Dy(), 4*thumbSide); pw < b.Dx() {
		mid := image.NewRGBA(image.Rect(0, 0, pw, ph))
		draw.Draw(mid, mid.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
		draw.ApproxBiLinear.Scale(mid, mid.Bounds(), img, b, draw.Over, nil)
		src, sb = mid, mid.Bounds()
	}
	draw.CatmullRom.Scale(dst, dst.Bounds(), src, sb, draw.Over, nil)
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, dst, &jpeg.Options{Quality: thumbQuality}); err != nil {
		return thumbnail{}, fmt.Errorf("encode thumbnail: %w", err)
	}
	return thumbnail{jpeg: buf.Bytes(), width: w, height: h}, nil
}

// checkHeader reads only the image's header, and refuses what is not one
// of the web's formats or would take too much memory once decoded.
func checkHeader(data []byte) (format string, err error) {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return "", fmt.Errorf("image header: %w", err)
	}
	switch format {
	case "jpeg", "png", "gif", "webp":
	default: // a decoder some other package registered
		return "", errUnsupportedImage
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || int64(cfg.Width)*int64(cfg.Height) > maxImagePixels {
		return "", fmt.Errorf("%dx%d: %w", cfg.Width, cfg.Height, errTooManyPixels)
	}
	return format, nil
}

// fit scales w x h to fit side x side keeping its aspect, never up.
func fit(w, h, side int) (int, int) {
	if longest := max(w, h); longest > side {
		w = max(1, (w*side+longest/2)/longest)
		h = max(1, (h*side+longest/2)/longest)
	}
	return w, h
}

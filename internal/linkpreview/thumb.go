package linkpreview

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"net/http"
	"net/url"

	"golang.org/x/image/draw"
)

const (
	maxImageBytes = 2 << 20
	// maxImageDecoded bounds what decoding a page's image may allocate, as
	// the process's cost model counts it from the header (Decoder): a
	// 2 MiB file can claim any size, and a 62 KB progressive CMYK JPEG of 8
	// megapixels decodes to 183 MiB. Pages' preview images are around a
	// megapixel (1200×630, 3 MiB as 8-bit color); 32 MiB takes 8
	// megapixels of 8-bit color, a 4K photo as baseline JPEG.
	maxImageDecoded = 32 << 20
	thumbSide       = 100
	thumbQuality    = 75
)

var errImageTooLarge = errors.New("image is larger than 2 MiB")

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
	return makeThumbnail(ctx, f.images, data)
}

// makeThumbnail decodes the image within maxImageDecoded (its header
// judged before it is decoded, the decode in one of the process's decode
// slots), then scales it to fit thumbSide x thumbSide (never up) over
// white and encodes JPEG.
func makeThumbnail(ctx context.Context, images Decoder, data []byte) (thumbnail, error) {
	img, release, err := images.DecodeWithin(ctx, data, maxImageDecoded)
	if err != nil {
		return thumbnail{}, fmt.Errorf("image: %w", err)
	}
	defer release() // the decoded image is alive until it is scaled
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

// fit scales w x h to fit side x side keeping its aspect, never up.
func fit(w, h, side int) (int, int) {
	if longest := max(w, h); longest > side {
		w = max(1, (w*side+longest/2)/longest)
		h = max(1, (h*side+longest/2)/longest)
	}
	return w, h
}

package linkpreview

import (
	"bytes"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"net/http"
	"net/netip"
	"testing"

	"github.com/wagraph/wagraph/internal/media"
	"github.com/wagraph/wagraph/internal/netguard/netguardtest"
)

// publicFetcher returns a Fetcher that treats s as a public host named
// public.example, and the base URL to reach it by that name. Its images
// are decoded by a media.Preparer of its own, unless opts has a Decoder.
func publicFetcher(t *testing.T, opts Options, s *netguardtest.Server) (*Fetcher, string) {
	t.Helper()
	if opts.Images == nil {
		opts.Images = media.NewPreparer("", nil)
	}
	resolver := netguardtest.Resolver{
		"public.example": {s.AddrPort(t).Addr()},
		"evil.example":   {netip.MustParseAddr("127.0.0.1")},
	}
	if opts.Resolver == nil {
		opts.Resolver = resolver
	}
	return newFetcher(opts, []netip.AddrPort{s.AddrPort(t)}), "http://public.example:" + s.Port(t)
}

// pngImage encodes a w x h PNG of a gradient.
func pngImage(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.NRGBA{uint8(x), uint8(y), 128, 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func htmlHandler(page string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(page))
	}
}

func gifImage(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewPaletted(image.Rect(0, 0, w, h), color.Palette{color.Black, color.White, color.Transparent})
	for y := range h {
		for x := range w {
			img.SetColorIndex(x, y, uint8((x+y)%3))
		}
	}
	var buf bytes.Buffer
	if err := gif.Encode(&buf, img, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func jpegImage(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio420)
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

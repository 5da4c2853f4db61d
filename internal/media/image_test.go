package media

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"os"
	"testing"

	"github.com/wagraph/wagraph/internal/fault"
)

// withSize patches a PNG's IHDR to claim w x h (with a valid CRC).
func withSize(t *testing.T, pngData []byte, w, h uint32) []byte {
	t.Helper()
	out := bytes.Clone(pngData)
	ihdr := out[8:] // after the signature: length, "IHDR", data, CRC
	if string(ihdr[4:8]) != "IHDR" {
		t.Fatal("no IHDR")
	}
	binary.BigEndian.PutUint32(ihdr[8:], w)
	binary.BigEndian.PutUint32(ihdr[12:], h)
	binary.BigEndian.PutUint32(ihdr[8+13:], crc32.ChecksumIEEE(ihdr[4:8+13]))
	return out
}

func TestImage(t *testing.T) {
	webp, err := os.ReadFile("testdata/photo-40x30.webp")
	if err != nil {
		t.Fatal(err)
	}
	transparent := pictureOf(100, 100, func(x, y int) color.Color { return color.NRGBA{} })
	cases := []struct {
		name          string
		data          []byte
		mimetype      string
		width, height uint32
		thumbW        int
		thumbH        int
	}{
		{"png landscape", makePNG(t, pictureOf(300, 200, gradient)), "image/png", 300, 200, 72, 48},
		{"jpeg portrait", makeJPEG(t, pictureOf(50, 80, gradient)), "image/jpeg", 50, 80, 45, 72},
		{"small png is not enlarged", makePNG(t, pictureOf(20, 10, gradient)), "image/png", 20, 10, 20, 10},
		{"webp", webp, "image/webp", 40, 30, 40, 30},
		{"transparent png", makePNG(t, transparent), "image/png", 100, 100, 72, 72},
	}
	p := NewPreparer("", nil)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := p.Image(t.Context(), c.data, "dir/../holiday.png")
			if err != nil {
				t.Fatal(err)
			}
			if f.Mimetype != c.mimetype || f.Width != c.width || f.Height != c.height || !bytes.Equal(f.Data, c.data) || f.FileName != "holiday.png" {
				t.Fatalf("got %s %dx%d name %q (data kept: %v); want %s %dx%d", f.Mimetype, f.Width, f.Height, f.FileName, bytes.Equal(f.Data, c.data), c.mimetype, c.width, c.height)
			}
			thumb := decodeJPEG(t, f.Thumbnail)
			if b := thumb.Bounds(); b.Dx() != c.thumbW || b.Dy() != c.thumbH {
				t.Fatalf("thumbnail %dx%d, want %dx%d", b.Dx(), b.Dy(), c.thumbW, c.thumbH)
			}
			if len(f.Thumbnail) > 8<<10 {
				t.Errorf("thumbnail is %d bytes; it travels inside the message and must stay small", len(f.Thumbnail))
			}
		})
	}
	t.Run("transparency becomes white", func(t *testing.T) {
		f, err := p.Image(t.Context(), makePNG(t, transparent), "")
		if err != nil {
			t.Fatal(err)
		}
		r, g, b, _ := decodeJPEG(t, f.Thumbnail).At(36, 36).RGBA()
		if r>>8 < 245 || g>>8 < 245 || b>>8 < 245 {
			t.Fatalf("transparent pixel became %d,%d,%d, want white", r>>8, g>>8, b>>8)
		}
	})
}

func TestImageRefusals(t *testing.T) {
	small := makePNG(t, pictureOf(10, 10, gradient))
	over := make([]byte, MaxImage+1)
	copy(over, small)
	cases := []struct {
		name  string
		data  []byte
		code  fault.Code
		parts []string
	}{
		{"gif", makeGIF(t, pictureOf(10, 10, gradient)), fault.Unsupported, []string{"image/gif", "video", "gifPlayback: true"}},
		{"text", []byte("just some words"), fault.Unsupported, []string{"source is text/plain", "JPEG (image/jpeg), PNG (image/png) or WebP (image/webp)"}},
		{"pdf", []byte("%PDF-1.4 ..."), fault.Unsupported, []string{"source is application/pdf"}},
		{"over the limit", over, fault.TooLarge, []string{"source is 16.1 MiB; WhatsApp takes images up to 16 MiB"}},
		{"huge dimensions", withSize(t, small, 30000, 30000), fault.TooLarge, []string{"at most 64 megapixels"}},
		{"truncated png", small[:len(small)/2], fault.Invalid, []string{"source looks like image/png but is not a readable image"}},
	}
	p := NewPreparer("", nil)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := p.Image(t.Context(), c.data, "")
			field := ""
			if c.code == fault.Invalid {
				field = "source"
			}
			wantFault(t, err, c.code, field, c.parts...)
		})
	}
}

func TestSquareJPEG(t *testing.T) {
	// Red and blue bands at the sides, green in the middle 200 px: a centred
	// crop of the 300x200 picture is all green.
	bands := pictureOf(300, 200, func(x, y int) color.Color {
		switch {
		case x < 50:
			return color.NRGBA{255, 0, 0, 255}
		case x >= 250:
			return color.NRGBA{0, 0, 255, 255}
		}
		return color.NRGBA{0, 255, 0, 255}
	})
	webp, err := os.ReadFile("testdata/photo-40x30.webp")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		data []byte
		side int
	}{
		{"300x200 png", makePNG(t, bands), 200},
		{"large jpeg is scaled to 640", makeJPEG(t, pictureOf(1000, 800, gradient)), 640},
		{"portrait", makePNG(t, pictureOf(90, 700, gradient)), 90},
		{"webp", webp, 30},
		{"gif first frame", makeGIF(t, pictureOf(64, 48, gradient)), 48},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := NewPreparer("", nil).SquareJPEG(t.Context(), c.data)
			if err != nil {
				t.Fatal(err)
			}
			img := decodeJPEG(t, out)
			if b := img.Bounds(); b.Dx() != c.side || b.Dy() != c.side {
				t.Fatalf("%dx%d, want %dx%d", b.Dx(), b.Dy(), c.side, c.side)
			}
		})
	}
	t.Run("the crop is centred", func(t *testing.T) {
		out, err := NewPreparer("", nil).SquareJPEG(t.Context(), makePNG(t, bands))
		if err != nil {
			t.Fatal(err)
		}
		img := decodeJPEG(t, out)
		for _, pt := range []image.Point{{2, 100}, {197, 100}, {100, 2}} {
			r, g, b, _ := img.At(pt.X, pt.Y).RGBA()
			if g>>8 < 200 || r>>8 > 60 || b>>8 > 60 {
				t.Errorf("pixel %v is %d,%d,%d; want green", pt, r>>8, g>>8, b>>8)
			}
		}
	})
	_, err = NewPreparer("", nil).SquareJPEG(t.Context(), []byte("this is not a picture"))
	wantFault(t, err, fault.Unsupported, "", "source is text/plain", "JPEG, PNG or WebP")
}

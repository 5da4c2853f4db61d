package linkpreview

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/logtest"
	"github.com/wagraph/wagraph/internal/media"
	"github.com/wagraph/wagraph/internal/media/mediatest"
	"github.com/wagraph/wagraph/internal/netguard/netguardtest"
)

// endlessHead serves a head padded with harmless <meta>s, tags at tagsAt
// bytes, and then keeps writing until total or until the client hangs up.
// written reports how much the server managed to send.
func endlessHead(tags string, tagsAt, total int, written *atomic.Int64, done chan<- struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		filler := []byte(`<meta name="filler" content="` + strings.Repeat("x", 100) + `">` + "\n")
		n := 0
		write := func(b []byte) bool {
			m, err := w.Write(b)
			n += m
			written.Store(int64(n))
			return err == nil
		}
		if !write([]byte("<!doctype html><html><head>\n")) {
			return
		}
		for n < total {
			if tags != "" && n >= tagsAt {
				if !write([]byte(tags)) {
					return
				}
				tags = ""
			}
			if !write(filler) {
				return
			}
		}
	}
}

func TestPreviewReadsAtMostTheLimit(t *testing.T) {
	const total = 64 << 20
	cases := []struct {
		name   string
		tagsAt int
	}{
		// Tags past the limit are never seen; tags before it are, and a
		// head that never ends is read up to the limit only.
		{"tags after 600 KiB", 600 << 10},
		{"tags early, endless head", 1 << 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var written atomic.Int64
			done := make(chan struct{})
			s := netguardtest.NewServer(t, endlessHead(`<meta property="og:title" content="late">`, c.tagsAt, total, &written, done))
			f, base := publicFetcher(t, Options{Timeout: 10 * time.Second}, s)
			p, err := f.Preview(t.Context(), base)
			if c.tagsAt > maxHTMLBytes {
				if p != nil || !errors.Is(err, ErrNoMetadata) {
					t.Fatalf("got %+v, %v; want no preview: the tags are past the limit", p, err)
				}
			} else if err != nil || p.Title != "late" {
				t.Fatalf("got %+v, %v; want the early title", p, err)
			}
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("the server is still writing: the client did not hang up")
			}
			if n := written.Load(); n >= total/2 {
				t.Fatalf("the server sent %d bytes; the client read far past its limit", n)
			}
		})
	}
}

func TestPreviewStopsAtHead(t *testing.T) {
	var written atomic.Int64
	done := make(chan struct{})
	s := netguardtest.NewServer(t, func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<html><head><title>t</title></head><body>`))
		w.(http.Flusher).Flush()
		chunk := []byte(strings.Repeat("<p>body</p>", 1000))
		for range 100_000 {
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	})
	f, base := publicFetcher(t, Options{}, s)
	if p, err := f.Preview(t.Context(), base); err != nil || p.Title != "t" {
		t.Fatalf("got %+v, %v", p, err)
	}
	<-done
	if n := written.Load(); n > 32<<20 {
		t.Fatalf("the server sent %d bytes past </head>", n)
	}
}

// pngChunk appends a PNG chunk to buf.
func pngChunk(buf *bytes.Buffer, kind string, data []byte) {
	_ = binary.Write(buf, binary.BigEndian, uint32(len(data)))
	crc := crc32.NewIEEE()
	crc.Write([]byte(kind))
	crc.Write(data)
	buf.WriteString(kind)
	buf.Write(data)
	_ = binary.Write(buf, binary.BigEndian, crc.Sum32())
}

// pngHeader is the signature and header of a w x h one-bit gray PNG:
// enough for image.DecodeConfig, not for a decode.
func pngHeader(w, h int) []byte {
	var buf bytes.Buffer
	buf.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = 1, 0 // 1-bit gray
	pngChunk(&buf, "IHDR", ihdr)
	return buf.Bytes()
}

// hugePNG is a valid PNG of w x h one-bit gray pixels, all black: small on
// the wire (and quick to make), w*h bytes once decoded.
func hugePNG(t *testing.T, w, h int) []byte {
	t.Helper()
	buf := bytes.NewBuffer(pngHeader(w, h))
	var idat bytes.Buffer
	z, _ := zlib.NewWriterLevel(&idat, zlib.BestCompression)
	row := make([]byte, 1+(w+7)/8) // filter byte, then the pixels
	for range h {
		_, _ = z.Write(row)
	}
	_ = z.Close()
	pngChunk(buf, "IDAT", idat.Bytes())
	pngChunk(buf, "IEND", nil)
	return buf.Bytes()
}

// TestThumbnailDecodedBytes: a page's image is judged by what decoding it
// allocates, from its header, not by its pixels: the finding's 62 KB
// progressive CMYK JPEG of 8 megapixels (183 MiB decoded) is refused like
// a 48-megapixel PNG, and neither is decoded.
func TestThumbnailDecodedBytes(t *testing.T) {
	cases := []struct {
		name    string
		data    []byte
		refused string // the refusal's words, "" when decoded
	}{
		{"progressive CMYK JPEG of 8 megapixels", mediatest.ProgressiveJPEG(2828, 2828, 4), "decodes to 183.5 MiB (2828x2828 pixels, progressive CMYK JPEG: 24.1 bytes each)"},
		{"progressive YCbCr JPEG of 2.6 megapixels", mediatest.ProgressiveJPEG(1600, 1600, 3), "decodes to 36.7 MiB"},
		{"1-bit PNG of 48 megapixels", hugePNG(t, 8000, 6000), "decodes to 45.8 MiB (8000x6000 pixels, 8-bit gray PNG: 1 bytes each)"},
		{"progressive gray JPEG of 4 megapixels", mediatest.ProgressiveJPEG(2000, 2000, 1), ""},
		{"baseline JPEG of 8 megapixels", jpegImage(t, 4000, 2000), ""},
		{"PNG of a page's size", pngImage(t, 1200, 630), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if len(c.data) > maxImageBytes {
				t.Fatalf("test image is %d bytes; it must pass the byte limit", len(c.data))
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := makeThumbnail(t.Context(), media.NewPreparer("", nil), c.data)
			runtime.ReadMemStats(&after)
			allocated := after.TotalAlloc - before.TotalAlloc
			if c.refused == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if fault.CodeOf(err) != fault.TooLarge || !strings.Contains(err.Error(), c.refused) || !strings.Contains(err.Error(), "at most 32 MiB once decoded") {
				t.Fatalf("error %v; want TOO_LARGE saying %q", err, c.refused)
			}
			if allocated > 8<<20 {
				t.Fatalf("refusing allocated %d bytes: the image was decoded", allocated)
			}
		})
	}
}

func TestMakeThumbnailFormats(t *testing.T) {
	webp, err := os.ReadFile("testdata/photo-40x30.webp")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name          string
		data          []byte
		width, height int
		err           bool
	}{
		{"png", pngImage(t, 300, 150), 100, 50, false},
		{"tall png", pngImage(t, 10, 1000), 1, 100, false},
		{"webp", webp, 40, 30, false},
		{"gif", gifImage(t, 200, 200), 100, 100, false},
		{"jpeg", jpegImage(t, 1000, 800), 100, 80, false},
		{"text", []byte("not an image"), 0, 0, true},
		{"truncated png", pngImage(t, 300, 150)[:200], 0, 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			th, err := makeThumbnail(t.Context(), media.NewPreparer("", nil), c.data)
			if c.err {
				if err == nil {
					t.Fatal("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			cfg, format, err := image.DecodeConfig(bytes.NewReader(th.jpeg))
			if err != nil || format != "jpeg" || cfg.Width != c.width || cfg.Height != c.height ||
				th.width != c.width || th.height != c.height {
				t.Fatalf("thumbnail %s %dx%d (said %dx%d), %v; want jpeg %dx%d", format, cfg.Width, cfg.Height, th.width, th.height, err, c.width, c.height)
			}
		})
	}
}

func TestPreviewImageLimits(t *testing.T) {
	huge := hugePNG(t, 8000, 6000)
	bomb := mediatest.ProgressiveJPEG(2828, 2828, 4)
	big := append(pngImage(t, 10, 10), bytes.Repeat([]byte{0}, maxImageBytes)...)
	s := netguardtest.NewServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page":
			img := r.URL.Query().Get("img")
			htmlHandler(`<head><title>t</title><meta property="og:image" content="/`+img+`"></head>`)(w, r)
		case "/huge.png":
			_, _ = w.Write(huge)
		case "/bomb.jpg":
			_, _ = w.Write(bomb)
		case "/big.png":
			w.Header().Set("Content-Length", strconv.Itoa(len(big)))
			_, _ = w.Write(big)
		case "/big-chunked.png":
			w.(http.Flusher).Flush() // no Content-Length: the read limit must catch it
			_, _ = w.Write(big)
		case "/notfound.png":
			http.NotFound(w, r)
		default:
			http.NotFound(w, r)
		}
	})
	log, buf := logtest.New(slog.LevelDebug)
	f, base := publicFetcher(t, Options{Logger: log, Timeout: 10 * time.Second}, s)
	cases := []struct{ img, why string }{
		{"huge.png", "decodes to 45.8 MiB"},
		{"bomb.jpg", "decodes to 183.5 MiB"},
		{"big.png", "larger than 2 MiB"},
		{"big-chunked.png", "larger than 2 MiB"},
		{"notfound.png", "answered 404"},
	}
	for _, c := range cases {
		p, err := f.Preview(t.Context(), base+"/page?img="+c.img)
		if err != nil || p.Title != "t" || p.Thumbnail != nil {
			t.Fatalf("%s: got %+v, %v; want the title without a thumbnail", c.img, p, err)
		}
		if len(buf.Lines("link preview without thumbnail", c.why)) == 0 {
			t.Fatalf("%s: no debug line says %q; log:\n%s", c.img, c.why, buf)
		}
	}
}

package linkpreview

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/netguard/netguardtest"
)

const ogPage = `<!doctype html>
<html><head>
<meta charset="utf-8">
<title>Plain title</title>
<meta property="og:title" content="Caf&eacute; &amp; Bar &#8212; &quot;menu&quot;">
<meta property="og:description" content="  The best
	coffee   in town &lt;3 ">
<meta property="og:image" content="/img/cover.png">
<meta property="og:url" content="/canonical">
<meta name="description" content="plain description">
</head><body><p>hello</p></body></html>`

func TestPreviewOpenGraph(t *testing.T) {
	cover := pngImage(t, 400, 200)
	var s *netguardtest.Server
	s = netguardtest.NewServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/start":
			http.Redirect(w, r, "/article/1?x=1", http.StatusFound)
		case "/article/1":
			htmlHandler(ogPage)(w, r)
		case "/img/cover.png":
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write(cover)
		default:
			http.NotFound(w, r)
		}
	})
	f, base := publicFetcher(t, Options{}, s)
	text := "look: " + base + "/start."
	p, err := f.Preview(t.Context(), text)
	if err != nil {
		t.Fatal(err)
	}
	want := Preview{
		Thumbnail:       p.Thumbnail, // checked below
		URL:             base + "/canonical",
		MatchedText:     base + "/start",
		Title:           `Café & Bar — "menu"`,
		Description:     "The best coffee in town <3",
		ThumbnailWidth:  100,
		ThumbnailHeight: 50,
	}
	if !reflect.DeepEqual(*p, want) {
		t.Fatalf("got  %+v\nwant %+v", *p, want)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(p.Thumbnail))
	if err != nil || format != "jpeg" {
		t.Fatalf("thumbnail is %q, %v; want a JPEG", format, err)
	}
	if cfg.Width != 100 || cfg.Height != 50 {
		t.Fatalf("thumbnail is %dx%d; want 100x50", cfg.Width, cfg.Height)
	}
	if _, err := jpeg.Decode(bytes.NewReader(p.Thumbnail)); err != nil {
		t.Fatalf("thumbnail does not decode: %v", err)
	}
}

func TestPreviewFallbacks(t *testing.T) {
	cases := []struct {
		name, page         string
		title, description string
		thumbnail          bool
		wantURLPath        string
		contentType        string
	}{
		{
			name:        "title and meta description",
			page:        "<html><head><title>  A &amp; B\n page </title><meta name=\"description\" content=\"About &#x41;&#66;.\"></head><body>x</body></html>",
			title:       "A & B page",
			description: "About AB.",
			wantURLPath: "/page",
		},
		{
			name:        "twitter before plain",
			page:        `<head><title>plain</title><meta name="twitter:title" content="tw title"><meta name="twitter:description" content="tw desc"><meta name="twitter:image" content="img.png"></head>`,
			title:       "tw title",
			description: "tw desc",
			thumbnail:   true,
			wantURLPath: "/page",
		},
		{
			name:        "description only",
			page:        `<head><meta name="Description" content="just this"></head>`,
			description: "just this",
			wantURLPath: "/page",
		},
		{
			name:        "og:url of another scheme is ignored",
			page:        `<head><meta property="og:title" content="t"><meta property="og:url" content="javascript:alert(1)"></head>`,
			title:       "t",
			wantURLPath: "/page",
		},
		{
			name:        "svg title is not the page title",
			page:        `<head></head><body><svg><title>icon</title></svg><title>real</title></body>`,
			title:       "real",
			wantURLPath: "/page",
		},
		{
			name:        "xhtml",
			page:        `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>x</title></head></html>`,
			title:       "x",
			wantURLPath: "/page",
			contentType: "application/xhtml+xml",
		},
		{
			name:        "no content type is sniffed",
			page:        `<html><head><title>sniffed</title></head></html>`,
			title:       "sniffed",
			wantURLPath: "/page",
			contentType: "none",
		},
	}
	img := pngImage(t, 30, 60)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := netguardtest.NewServer(t, func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/page":
					switch c.contentType {
					case "":
						w.Header().Set("Content-Type", "text/html")
					case "none":
						w.Header()["Content-Type"] = nil // no sniffing by the server
					default:
						w.Header().Set("Content-Type", c.contentType)
					}
					_, _ = w.Write([]byte(c.page))
				case "/img.png":
					_, _ = w.Write(img)
				default:
					http.NotFound(w, r)
				}
			})
			f, base := publicFetcher(t, Options{}, s)
			p, err := f.Preview(t.Context(), base+"/page")
			if err != nil {
				t.Fatal(err)
			}
			if p.Title != c.title || p.Description != c.description || p.URL != base+c.wantURLPath {
				t.Fatalf("got title %q, description %q, URL %q; want %q, %q, %q", p.Title, p.Description, p.URL, c.title, c.description, base+c.wantURLPath)
			}
			if (p.Thumbnail != nil) != c.thumbnail {
				t.Fatalf("thumbnail present %v; want %v", p.Thumbnail != nil, c.thumbnail)
			}
			if c.thumbnail && (p.ThumbnailWidth != 30 || p.ThumbnailHeight != 60) {
				t.Fatalf("thumbnail %dx%d; want 30x60, never scaled up", p.ThumbnailWidth, p.ThumbnailHeight)
			}
		})
	}
}

func TestPreviewCaps(t *testing.T) {
	long := strings.Repeat("é", 300)
	longer := strings.Repeat("word ", 400)
	s := netguardtest.NewServer(t, htmlHandler(`<head><title>`+long+`</title><meta name="description" content="`+longer+`"></head>`))
	f, base := publicFetcher(t, Options{}, s)
	p, err := f.Preview(t.Context(), base+"/")
	if err != nil {
		t.Fatal(err)
	}
	if n := len([]rune(p.Title)); n != maxTitleRunes || !strings.HasSuffix(p.Title, "…") {
		t.Fatalf("title has %d runes (%q...); want %d ending in an ellipsis", n, p.Title[:10], maxTitleRunes)
	}
	if n := len([]rune(p.Description)); n > maxDescriptionRunes || !strings.HasSuffix(p.Description, "…") {
		t.Fatalf("description has %d runes; want at most %d ending in an ellipsis", n, maxDescriptionRunes)
	}
}

func TestPreviewCharsets(t *testing.T) {
	cases := []struct {
		name, contentType, page, want string
	}{
		{"latin1 header", "text/html; charset=ISO-8859-1", "<title>Caf\xe9 \x93quoted\x94</title>", "Café “quoted”"},
		{"meta charset", "text/html", "<meta charset=\"windows-1252\"><title>na\xefve &eacute;</title>", "naïve é"},
		{"http-equiv", "text/html", "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=latin1\"><title>\xc0 la carte</title>", "À la carte"},
		{"undeclared utf-8", "text/html", "<title>Caf\xc3\xa9</title>", "Café"},
		{"undeclared not utf-8", "text/html", "<title>Caf\xe9</title>", "Café"},
		{"sniffed, not utf-8", "none", "<html><title>Caf\xe9</title>", "Café"},
		{"bom", "text/html; charset=iso-8859-1", "\xef\xbb\xbf<title>Caf\xc3\xa9</title>", "Café"},
		{"unsupported charset, ascii title", "text/html; charset=shift_jis", "<title>plain ascii</title><meta name=description content=\"x\">", "plain ascii"},
		{"unsupported charset, other title", "text/html; charset=shift_jis", "<title>\x93\xfa\x96\x7b</title><meta name=description content=\"x\">", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := netguardtest.NewServer(t, func(w http.ResponseWriter, r *http.Request) {
				if c.contentType == "none" {
					w.Header()["Content-Type"] = nil // no sniffing by the server
				} else {
					w.Header().Set("Content-Type", c.contentType)
				}
				_, _ = w.Write([]byte(c.page))
			})
			f, base := publicFetcher(t, Options{}, s)
			p, err := f.Preview(t.Context(), base)
			if err != nil {
				t.Fatal(err)
			}
			if p.Title != c.want {
				t.Fatalf("title %q; want %q", p.Title, c.want)
			}
		})
	}
}

func TestPreviewWithoutPreview(t *testing.T) {
	s := netguardtest.NewServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/empty":
			htmlHandler("<html><head></head><body>nothing</body></html>")(w, r)
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"title":"no"}`)
		case "/png":
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write(pngImage(t, 10, 10))
		case "/gone":
			http.Error(w, "<title>not found</title>", http.StatusNotFound)
		default:
			http.NotFound(w, r)
		}
	})
	f, base := publicFetcher(t, Options{}, s)
	if p, err := f.Preview(t.Context(), "no link here, only example.com"); p != nil || err != nil {
		t.Fatalf("text without URL: got %+v, %v; want nil, nil", p, err)
	}
	cases := []struct {
		path string
		want error
		text string
	}{
		{"/empty", ErrNoMetadata, "neither title nor description"},
		{"/json", ErrNotHTML, "application/json"},
		{"/png", ErrNotHTML, "image/png"},
		{"/gone", nil, "answered 404 Not Found"},
	}
	for _, c := range cases {
		p, err := f.Preview(t.Context(), "see "+base+c.path)
		if p != nil || err == nil {
			t.Fatalf("%s: got %+v, %v; want no preview and an error", c.path, p, err)
		}
		if c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%s: error %v is not %v", c.path, err, c.want)
		}
		if !strings.Contains(err.Error(), c.text) || !strings.Contains(err.Error(), "public.example") {
			t.Errorf("%s: error %q does not name the host and %q", c.path, err, c.text)
		}
	}
}

func TestPreviewTimeout(t *testing.T) {
	var s *netguardtest.Server
	s = netguardtest.NewServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/no-headers":
			s.Hang(r)
		case "/stalled-body":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html><head><meta charset=utf-8>")
			w.(http.Flusher).Flush()
			s.Hang(r)
		case "/stalled-image":
			htmlHandler(`<head><title>t</title><meta property="og:image" content="/img"></head>`)(w, r)
		case "/img":
			w.Header().Set("Content-Type", "image/png")
			w.(http.Flusher).Flush()
			s.Hang(r)
		}
	})
	const timeout = 200 * time.Millisecond
	f, base := publicFetcher(t, Options{Timeout: timeout}, s)
	for _, path := range []string{"/no-headers", "/stalled-body"} {
		start := time.Now()
		p, err := f.Preview(t.Context(), base+path)
		took := time.Since(start)
		if p != nil || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: got %+v, %v; want no preview and a deadline error", path, p, err)
		}
		if took < timeout || took > 2*time.Second {
			t.Errorf("%s: returned after %s; want about %s", path, took, timeout)
		}
	}
	// The deadline covers the thumbnail too, whose failure costs only the
	// thumbnail.
	start := time.Now()
	p, err := f.Preview(t.Context(), base+"/stalled-image")
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("stalled image: returned after %s", took)
	}
	if err != nil || p.Title != "t" || p.Thumbnail != nil {
		t.Fatalf("stalled image: got %+v, %v; want the title without a thumbnail", p, err)
	}
}

func TestPreviewCallerContext(t *testing.T) {
	var s *netguardtest.Server
	s = netguardtest.NewServer(t, func(w http.ResponseWriter, r *http.Request) { s.Hang(r) })
	f, base := publicFetcher(t, Options{Timeout: time.Minute}, s)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := f.Preview(ctx, base); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v; want the caller's deadline", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("returned after %s; the caller's context was not obeyed", took)
	}
	done, cancelDone := context.WithTimeout(t.Context(), 0)
	cancelDone()
	if _, err := f.Preview(done, base); err == nil {
		t.Fatal("a done context gave no error")
	}
}

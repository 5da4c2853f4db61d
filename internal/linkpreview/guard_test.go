package linkpreview

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/netguard"
	"github.com/wagraph/wagraph/internal/netguard/netguardtest"
)

func TestPreviewGuard(t *testing.T) {
	trap := netguardtest.NewServer(t, htmlHandler(`<head><title>secret</title></head>`))
	trapURL := "http://127.0.0.1:" + trap.Port(t)
	s := netguardtest.NewServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-loopback":
			http.Redirect(w, r, trapURL+"/", http.StatusFound)
		case "/to-evil":
			http.Redirect(w, r, "http://evil.example:"+trap.Port(t)+"/", http.StatusMovedPermanently)
		case "/to-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusTemporaryRedirect)
		case "/to-ftp":
			http.Redirect(w, r, "ftp://public.example/file", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/image-on-loopback":
			htmlHandler(`<head><title>t</title><meta property="og:image" content="`+trapURL+`/img.png"></head>`)(w, r)
		case "/image-file":
			htmlHandler(`<head><title>t</title><meta property="og:image" content="file:///etc/passwd"></head>`)(w, r)
		default:
			http.NotFound(w, r)
		}
	})
	f, base := publicFetcher(t, Options{Timeout: 5 * time.Second}, s)

	refused := []struct{ name, url string }{
		{"loopback literal", trapURL + "/"},
		{"loopback name", "http://localhost:" + trap.Port(t) + "/"},
		{"name resolving to loopback", "http://evil.example:" + trap.Port(t) + "/"},
		{"redirect to another loopback port", base + "/to-loopback"},
		{"redirect to a name resolving to loopback", base + "/to-evil"},
		{"redirect to metadata", base + "/to-metadata"},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			p, err := f.Preview(t.Context(), "see "+c.url)
			var r *netguard.RefusedError
			if p != nil || !errors.As(err, &r) {
				t.Fatalf("got %+v, %v; want no preview and a refusal", p, err)
			}
		})
	}
	p, err := f.Preview(t.Context(), base+"/to-ftp")
	var bad *badRedirectError
	if p != nil || !errors.As(err, &bad) {
		t.Fatalf("redirect to ftp: got %+v, %v; want it refused", p, err)
	}
	p, err = f.Preview(t.Context(), base+"/loop")
	if p != nil || !errors.Is(err, errTooManyRedirects) {
		t.Fatalf("redirect loop: got %+v, %v; want too many redirects", p, err)
	}
	for _, path := range []string{"/image-on-loopback", "/image-file"} {
		p, err = f.Preview(t.Context(), base+path)
		if err != nil || p.Title != "t" || p.Thumbnail != nil {
			t.Fatalf("%s: got %+v, %v; want the title without a thumbnail", path, p, err)
		}
	}
	if n := trap.Hits(); n != 0 {
		t.Fatalf("the loopback server was reached %d times", n)
	}

	// --allow-private-urls lets it all through.
	open := New(Options{AllowPrivate: true, Timeout: 5 * time.Second})
	p, err = open.Preview(t.Context(), trapURL)
	if err != nil || p.Title != "secret" {
		t.Fatalf("with AllowPrivate: got %+v, %v; want the loopback page", p, err)
	}
}

func TestPreviewGuardDefaultResolver(t *testing.T) {
	// New, not the tests' newFetcher: nothing is declared public.
	s := netguardtest.NewServer(t, htmlHandler(`<head><title>t</title></head>`))
	f := New(Options{})
	for _, u := range []string{
		s.URL,
		fmt.Sprintf("http://[::ffff:127.0.0.1]:%s/", s.Port(t)),
		fmt.Sprintf("http://2130706433:%s/", s.Port(t)),
	} {
		if p, err := f.Preview(t.Context(), u); p != nil || err == nil || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("%s: got %+v, %v; want a loopback refusal", u, p, err)
		}
	}
	if n := s.Hits(); n != 0 {
		t.Fatalf("the loopback server was reached %d times", n)
	}
}

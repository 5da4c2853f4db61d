package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/apptest"
)

// TestLinkPreview: a text with a URL reaches the phone with the page's
// preview (title, description and a thumbnail), made through the outbound
// guard (the sandbox admits loopback, as --allow-private-urls does); with
// linkPreview false it goes without; a page that never answers costs the
// send its 3 s budget at most and never fails it.
func TestLinkPreview(t *testing.T) {
	t.Parallel()
	photo := pngImage(t, 200, 100)
	stall := make(chan struct{})
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/article":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, `<html><head><title>fallback</title>
<meta property="og:title" content="Öffnungszeiten &amp; Preise">
<meta property="og:description" content="Montag bis Freitag, 9 bis 18 Uhr">
<meta property="og:image" content="/photo.png"></head><body>…</body></html>`)
		case "/photo.png":
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write(photo)
		case "/slow":
			select {
			case <-stall:
			case <-r.Context().Done():
			}
		}
	}))
	defer site.Close()
	defer close(stall)

	s, sess := apptest.StartLinked(t)
	const phone, ana = apptest.LinkedPhone, "4915550310002"

	text := "Schau mal: " + site.URL + "/article."
	got := received(t, s, ana, restSend(t, s, sess.ID, "text", map[string]any{"number": ana, "text": text}))
	p := got.LinkPreview
	if str(got.Text) != text || p == nil || p.URL != site.URL+"/article" || str(p.Title) != "Öffnungszeiten & Preise" ||
		str(p.Description) != "Montag bis Freitag, 9 bis 18 Uhr" || !p.HasThumbnail {
		t.Errorf("the phone decrypted %+v with preview %+v, want the text with the page's title, description and thumbnail", got, p)
	}

	got = received(t, s, ana, restSend(t, s, sess.ID, "text", map[string]any{"number": ana, "text": text, "linkPreview": false}))
	if got.LinkPreview != nil {
		t.Errorf("linkPreview false: the phone shows a preview %+v", got.LinkPreview)
	}

	start := time.Now()
	id := restSend(t, s, sess.ID, "text", map[string]any{"number": ana, "text": "langsam: " + site.URL + "/slow"})
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("a send whose page never answers took %s", took)
	}
	if got := received(t, s, ana, id); got.LinkPreview != nil || str(got.Text) != "langsam: "+site.URL+"/slow" {
		t.Errorf("the phone decrypted %+v, want the text without a preview", got)
	}
}

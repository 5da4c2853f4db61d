package linkpreview

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/fairpool"
	"github.com/wagraph/wagraph/internal/logtest"
	"github.com/wagraph/wagraph/internal/media"
	"github.com/wagraph/wagraph/internal/netguard/netguardtest"
)

func TestPreviewBusy(t *testing.T) {
	arrived := make(chan struct{}, 1)
	var s *netguardtest.Server
	s = netguardtest.NewServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stall" {
			arrived <- struct{}{}
			s.Hang(r)
			return
		}
		htmlHandler(`<title>free</title>`)(w, r)
	})
	f, base := publicFetcher(t, Options{Concurrency: 1, Timeout: time.Minute}, s)

	ctx, cancel := context.WithCancel(t.Context())
	first := make(chan error, 1)
	go func() {
		_, err := f.Preview(ctx, base+"/stall")
		first <- err
	}()
	select {
	case <-arrived:
	case <-time.After(5 * time.Second):
		t.Fatal("the first preview never reached the server")
	}

	start := time.Now()
	p, err := f.Preview(t.Context(), base+"/other")
	if p != nil || !errors.Is(err, ErrBusy) {
		t.Fatalf("second call: got %+v, %v; want ErrBusy", p, err)
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("second call took %s; it must not wait for a slot", took)
	}

	cancel()
	select {
	case err := <-first:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("first call: %v; want canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the first call did not end with its context")
	}
	// Its slot is free again.
	if p, err := f.Preview(t.Context(), base+"/other"); err != nil || p.Title != "free" {
		t.Fatalf("after the slot was freed: got %+v, %v", p, err)
	}
}

func TestPreviewLogsAndErrorsNameTheHostOnly(t *testing.T) {
	const secret = "s3cr3t-t0ken"
	var s *netguardtest.Server
	s = netguardtest.NewServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			htmlHandler(`<head><title>t</title><meta property="og:image" content="/img.png?sig=`+secret+`"></head>`)(w, r)
		case "/redirect":
			http.Redirect(w, r, "http://127.0.0.1:1/?token="+secret, http.StatusFound)
		case "/stall":
			s.Hang(r)
		case "/img.png":
			_, _ = w.Write([]byte("not an image " + secret))
		default:
			http.Error(w, secret, http.StatusForbidden)
		}
	})
	log, buf := logtest.New(slog.LevelDebug)
	f, base := publicFetcher(t, Options{Logger: log, Timeout: 300 * time.Millisecond}, s)
	for _, path := range []string{"/ok", "/redirect", "/stall", "/forbidden", "/missing"} {
		_, err := f.Preview(t.Context(), base+path+"?token="+secret+"&x=1")
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("%s: error %q carries the secret", path, err)
		}
	}
	if strings.Contains(buf.String(), secret) {
		t.Fatalf("the log carries the secret:\n%s", buf)
	}
	if len(buf.Lines(`"host":"public.example"`)) == 0 {
		t.Fatalf("nothing logged names the host:\n%s", buf)
	}
}

// leaked lists the stacks of goroutines, other than the caller, that run
// this package's code or an HTTP client connection.
func leaked() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for i, g := range bytes.Split(buf, []byte("\n\n")) {
		if i == 0 {
			continue // the caller
		}
		s := string(g)
		if strings.Contains(s, "net/http.(*persistConn)") || strings.Contains(s, "internal/linkpreview.(*") {
			out = append(out, s)
		}
	}
	return out
}

func TestPreviewLeavesNoGoroutines(t *testing.T) {
	img := pngImage(t, 50, 50)
	var s *netguardtest.Server
	s = netguardtest.NewServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			htmlHandler(`<head><title>t</title><meta property="og:image" content="/img.png"></head>`)(w, r)
		case "/whole": // no </head>: read to its end
			htmlHandler(`<title>t</title>`)(w, r)
		case "/img.png":
			_, _ = w.Write(img)
		case "/stall":
			s.Hang(r)
		default:
			http.NotFound(w, r)
		}
	})
	f, base := publicFetcher(t, Options{Timeout: 200 * time.Millisecond, Concurrency: 2}, s)
	paths := []string{"/ok", "/stall", "/missing"}
	for _, path := range paths {
		if _, err := f.Preview(t.Context(), base+path); (err == nil) != (path == "/ok") {
			t.Fatalf("%s: %v", path, err)
		}
	}
	// The same at once, some of them turned away busy.
	results := make(chan error, 3*len(paths))
	for range 3 {
		for _, path := range paths {
			go func() {
				_, err := f.Preview(t.Context(), base+path)
				results <- err
			}()
		}
	}
	for range 3 * len(paths) {
		<-results
	}
	if _, err := f.Preview(t.Context(), "http://127.0.0.1:1/"); err == nil {
		t.Fatal("loopback: no error")
	}
	// Last, two successes that read their responses to the end: a kept-alive
	// connection would now sit idle, its goroutines owned by no one.
	for _, path := range []string{"/ok", "/whole"} {
		if _, err := f.Preview(t.Context(), base+path); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := leaked()
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines left behind:\n%s", len(left), strings.Join(left, "\n\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPreviewFairShares: one user's slow links hold every slot; another
// user's preview takes one back from it (the newest of them ends, taken
// back) rather than be turned away, and is made. The first user, alone
// over the slots it holds, is still turned away at once.
func TestPreviewFairShares(t *testing.T) {
	const slots = 4
	arrived := make(chan struct{}, slots+1)
	var s *netguardtest.Server
	s = netguardtest.NewServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stall" {
			arrived <- struct{}{}
			s.Hang(r)
			return
		}
		htmlHandler(`<title>kept</title>`)(w, r)
	})
	f, base := publicFetcher(t, Options{Concurrency: slots, Timeout: time.Minute}, s)
	flooder := fairpool.WithTenant(t.Context(), "flooder")
	other := fairpool.WithTenant(t.Context(), "other")

	stalled := make(chan error, slots)
	for range slots {
		go func() {
			_, err := f.Preview(flooder, base+"/stall")
			stalled <- err
		}()
	}
	for range slots {
		select {
		case <-arrived:
		case <-time.After(5 * time.Second):
			t.Fatal("the slow previews never reached the server")
		}
	}
	start := time.Now()
	if p, err := f.Preview(flooder, base+"/other"); p != nil || !errors.Is(err, ErrBusy) || time.Since(start) > time.Second {
		t.Fatalf("the flooder's next: %+v, %v after %s; want ErrBusy at once", p, err, time.Since(start))
	}

	p, err := f.Preview(other, base+"/page")
	if err != nil || p.Title != "kept" {
		t.Fatalf("the other user's preview: %+v, %v; want it made", p, err)
	}
	select {
	case err := <-stalled:
		if !errors.Is(err, fairpool.ErrReclaimed) {
			t.Fatalf("the slow preview taken back ended with %v, want fairpool.ErrReclaimed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no slow preview gave its slot back")
	}
	if len(stalled) != 0 {
		t.Fatal("more than one slow preview was taken back")
	}
}

// TestPreviewDecodesInTheSharedPool: a page's image is decoded in one of
// the process's image decode slots: with the only one taken, the preview
// goes without its thumbnail when its time is up; given back, it has one.
func TestPreviewDecodesInTheSharedPool(t *testing.T) {
	img := pngImage(t, 50, 50)
	s := netguardtest.NewServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/img.png" {
			_, _ = w.Write(img)
			return
		}
		htmlHandler(`<head><title>t</title><meta property="og:image" content="/img.png"></head>`)(w, r)
	})
	prep := media.NewPreparerWith(media.PreparerOptions{ImageDecodes: 1, QueueWait: time.Minute})
	log, buf := logtest.New(slog.LevelDebug)
	f, base := publicFetcher(t, Options{Images: prep, Timeout: 500 * time.Millisecond, Logger: log}, s)

	// The one slot, taken by a decode of its own that holds it.
	holding := make(chan func(), 1)
	go func() {
		_, release, err := prep.DecodeWithin(t.Context(), img, 1<<20)
		if err != nil {
			t.Error(err)
		}
		holding <- release
	}()
	release := <-holding
	p, err := f.Preview(t.Context(), base+"/page")
	if err != nil || p.Title != "t" || p.Thumbnail != nil {
		t.Fatalf("with the decode slot taken: %+v, %v; want the title without a thumbnail", p, err)
	}
	if len(buf.Lines("link preview without thumbnail", "too many images being prepared at once")) == 0 {
		t.Fatalf("no debug line says the decode waited for a slot; log:\n%s", buf)
	}
	release()
	if p, err := f.Preview(t.Context(), base+"/page"); err != nil || p.Thumbnail == nil {
		t.Fatalf("with the slot given back: %+v, %v; want a thumbnail", p, err)
	}
}

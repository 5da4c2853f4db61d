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

	"github.com/wagraph/wagraph/internal/logtest"
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

package linkpreview

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"sync/atomic"
	"testing"
)

// fakeResolver answers from a table; names it does not know do not exist.
type fakeResolver map[string][]netip.Addr

func (r fakeResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	addrs, ok := r[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	out := make([]net.IPAddr, len(addrs))
	for i, a := range addrs {
		out[i] = net.IPAddr{IP: a.AsSlice()}
	}
	return out, nil
}

// testServer is an httptest server that counts requests and lets hanging
// handlers go at cleanup.
type testServer struct {
	*httptest.Server
	hits    atomic.Int64
	release chan struct{} // closed at cleanup: handlers that hang return
}

func newTestServer(t *testing.T, h http.HandlerFunc) *testServer {
	t.Helper()
	s := &testServer{release: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(s.Close)
	t.Cleanup(func() { close(s.release) }) // runs first: LIFO
	return s
}

func (s *testServer) addrPort(t *testing.T) netip.AddrPort {
	t.Helper()
	ap, err := netip.ParseAddrPort(s.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return ap
}

func (s *testServer) port(t *testing.T) string {
	return strconv.Itoa(int(s.addrPort(t).Port()))
}

// hang blocks a handler until the client leaves or the test ends.
func (s *testServer) hang(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-s.release:
	}
}

// publicFetcher returns a Fetcher that treats s as a public host named
// public.example, and the base URL to reach it by that name.
func publicFetcher(t *testing.T, opts Options, s *testServer) (*Fetcher, string) {
	t.Helper()
	resolver := fakeResolver{
		"public.example": {s.addrPort(t).Addr()},
		"evil.example":   {netip.MustParseAddr("127.0.0.1")},
	}
	if opts.Resolver == nil {
		opts.Resolver = resolver
	}
	return newFetcher(opts, []netip.AddrPort{s.addrPort(t)}), "http://public.example:" + s.port(t)
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

package apptest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
)

// LinkMany links n sessions to the phones prefix+00001… through the
// server's API (over HTTP: s.URL), eight at a time, as a client would:
// create, connect, wait for the QR code, have the simulated phone scan it.
// The sessions are tracked (Track).
func (s *Server) LinkMany(t testing.TB, n int, prefix string) []Session {
	t.Helper()
	out := LinkManyAt(t, s.Client(), s.URL, n, prefix)
	for _, sess := range out {
		s.Track(sess)
	}
	return out
}

// LinkManyAt is LinkMany on the server at base, which need not be one of
// this process (a wagraph child started with AdminToken).
func LinkManyAt(t testing.TB, hc *http.Client, base string, n int, prefix string) []Session {
	t.Helper()
	out := make([]Session, n)
	errs := make([]error, n)
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i], errs[i] = link(context.Background(), hc, base, AdminToken, fmt.Sprintf("%s%05d", prefix, i+1))
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return out
}

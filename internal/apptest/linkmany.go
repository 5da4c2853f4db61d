package apptest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/testclient"
)

// LinkMany links n sessions to the phones prefix+00001… through the
// server's API (over HTTP: s.URL), eight at a time, as a client would:
// create, connect, wait for the QR code, have the simulated phone scan it.
// The sessions are tracked (Track).
func (s *Server) LinkMany(t testing.TB, n int, prefix string) []Session {
	t.Helper()
	out := make([]Session, n)
	errs := make([]error, n)
	// The first alone: libsignal sets its global logger at its first use,
	// unlocked, and two first uses at once are a data race (upstream).
	out[0], errs[0] = link(s.URL, fmt.Sprintf("%s%05d", prefix, 1))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i := 1; i < n; i++ {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i], errs[i] = link(s.URL, fmt.Sprintf("%s%05d", prefix, i+1))
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for _, sess := range out {
		s.Track(sess)
	}
	return out
}

func link(base, phone string) (Session, error) {
	var created struct {
		CreateSession struct{ Session struct{ ID string } }
	}
	if err := adminOverHTTP(base, `mutation { createSession { session { id } } }`, nil, &created); err != nil {
		return Session{}, err
	}
	id := created.CreateSession.Session.ID
	if err := adminOverHTTP(base, `mutation($id: ID!) { connectSession(id: $id) { status } }`, map[string]any{"id": id}, nil); err != nil {
		return Session{}, err
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var st struct {
			Session struct{ Status, QrCode string }
		}
		if err := adminOverHTTP(base, `query($id: ID!) { session(id: $id) { status qrCode } }`, map[string]any{"id": id}, &st); err != nil {
			return Session{}, err
		}
		if st.Session.Status == "PAIRING" && st.Session.QrCode != "" {
			break
		}
		if time.Now().After(deadline) {
			return Session{}, fmt.Errorf("session %s: no QR code within 30 s (%s)", id, st.Session.Status)
		}
	}
	var linked struct{ SandboxLinkDevice struct{ Status, Jid string } }
	if err := adminOverHTTP(base, `mutation($id: ID!, $phone: String!) { sandboxLinkDevice(sessionId: $id, phone: $phone) { status jid } }`,
		map[string]any{"id": id, "phone": phone}, &linked); err != nil {
		return Session{}, err
	}
	if linked.SandboxLinkDevice.Status != "CONNECTED" {
		return Session{}, fmt.Errorf("linked session %s is %s", id, linked.SandboxLinkDevice.Status)
	}
	return Session{ID: id, Phone: phone, JID: linked.SandboxLinkDevice.Jid}, nil
}

// adminOverHTTP runs one operation as the admin over HTTP; safe from any
// goroutine.
func adminOverHTTP(base, query string, vars map[string]any, v any) error {
	return testclient.GraphQL(context.Background(), http.DefaultClient, base, AdminToken, query, vars, v)
}

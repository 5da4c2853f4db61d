package whatsapp

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"log/slog"
	"math/rand/v2"
	"net"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/logtest"
	"github.com/wagraph/wagraph/internal/proxytest"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// The passwords of the proxy tests: none may show in a log, an event, a
// status reason or an error.
const (
	socksPass   = "socks-s3cret-pw"
	connectPass = "connect-s3cret-pw"
	wrongPass   = "wr0ng-s3cret-pw"
)

// The sandbox's transport can be given a session's proxy.
var _ rerouting = (*wafake.Redirect)(nil)

// noisePNG is a real PNG of random pixels: it compresses to little, so its
// upload is most of what a send carries.
func noisePNG(t *testing.T, side int) []byte {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	img := image.NewRGBA(image.Rect(0, 0, side, side))
	for x := range side {
		for y := range side {
			img.Set(x, y, color.RGBA{R: uint8(rng.Uint32()), G: uint8(rng.Uint32()), B: uint8(rng.Uint32()), A: 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestProxyPerSession: a session with a SOCKS5 proxy and one with an HTTP
// CONNECT proxy link, log in and upload media through their own proxy,
// asked to connect to the simulated network's address; a session without a
// proxy goes through neither, and none goes through another's. Then: a
// change of proxy leaves a live connection alone and applies at the next
// connect; wrong credentials, an unreachable proxy and an unknown scheme
// fail the connect saying why; no password shows in the log, the events,
// the reasons or the errors.
func TestProxyPerSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	log, logs := logtest.New(slog.LevelDebug)
	e.log = log
	socks := proxytest.SOCKS5(t, "alice", socksPass)
	connect := proxytest.Connect(t, "bob", connectPass, false)
	socksAddr, connectAddr := socks.Addr, connect.Addr
	proxies := &fakeProxies{urls: map[string]string{
		"s1": "socks5://alice:" + socksPass + "@" + socksAddr,
		"s2": "http://bob:" + connectPass + "@" + connectAddr,
	}}
	m := NewManager(ManagerOptions{Store: e.store, Logger: e.log, Publisher: e.pub, Statuses: e.statuses, Transport: e.net.Transport(), Proxies: proxies})
	t.Cleanup(m.Close)

	sessions := []struct {
		id, phone string
		via       *proxytest.Proxy // nil: no proxy
	}{
		{"s1", phone, socks},
		{"s2", memberB, connect},
		{"s3", memberC, nil},
	}
	all := []*proxytest.Proxy{socks, connect}
	type seen struct {
		opened int
		up     int64
	}
	before := func() map[*proxytest.Proxy]seen {
		out := map[*proxytest.Proxy]seen{}
		for _, p := range all {
			n, up := p.Seen()
			out[p] = seen{n, up}
		}
		return out
	}
	// grew checks that, since was, via opened at least tunnels tunnels and
	// carried at least up bytes up, and that the other proxy opened none.
	// The other's sessions' sockets are live meanwhile (receipts,
	// acknowledgements), so it may carry some bytes, never an image.
	const background = 4096
	grew := func(what string, was map[*proxytest.Proxy]seen, via *proxytest.Proxy, tunnels int, up int64) {
		t.Helper()
		for _, p := range all {
			n, u := p.Seen()
			d := seen{n - was[p].opened, u - was[p].up}
			switch {
			case p == via && (d.opened < tunnels || d.up < up):
				t.Errorf("%s: its proxy opened %d tunnels and carried %d bytes; want %d tunnels and %d bytes at least", what, d.opened, d.up, tunnels, up)
			case p != via && (d.opened != 0 || d.up >= background):
				t.Errorf("%s: another proxy opened %d tunnels and carried %d bytes", what, d.opened, d.up)
			}
		}
	}

	// The pairing socket and the logged-in one.
	for _, s := range sessions {
		was := before()
		e.pairQR(m, s.id, s.phone)
		grew("linking "+s.id, was, s.via, 2, 1)
	}
	pic := noisePNG(t, 96)
	if len(pic) < 4*background {
		t.Fatalf("the image is %d bytes: too small to tell its upload from the sockets' traffic", len(pic))
	}
	for _, s := range sessions {
		was := before()
		out := Outgoing{To: phoneJID(peer), Type: "image", Media: &Media{Data: pic, Mimetype: "image/png", Width: 96, Height: 96}}
		if _, err := m.Send(ctx, s.id, out); err != nil {
			t.Fatalf("%s: send an image: %v", s.id, err)
		}
		// The upload is the encrypted image: no smaller than the image.
		grew("the image of "+s.id, was, s.via, 0, int64(len(pic)))
	}
	for _, p := range all {
		for _, target := range p.Targets() {
			if target != e.net.Addr() {
				t.Errorf("a proxy was asked to connect to %s, want the simulated network's %s", target, e.net.Addr())
			}
		}
	}
	if t.Failed() {
		return
	}

	// A change applies at the next connect, never to the live connection.
	for _, s := range sessions[:2] {
		e.settle(m.State(s.id))
	}
	proxies.set("s1", "socks5://alice:"+wrongPass+"@"+socksAddr)
	proxies.set("s2", "http://bob:"+wrongPass+"@"+connectAddr)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nobody := closed.Addr().String()
	closed.Close()

	var errs []error
	reconnect := func(id string) error {
		t.Helper()
		if err := m.Disconnect(id); err != nil {
			t.Fatal(err)
		}
		err := m.Connect(ctx, id)
		errs = append(errs, err)
		return err
	}
	refusals := []struct {
		name, id, proxy string // proxy "": as set above
		wantFault       fault.Code
		want            []string
	}{
		{"wrong SOCKS5 password", "s1", "", "", []string{"could not reach WhatsApp through the proxy socks5://alice:xxxxx@" + socksAddr, "authentication failed"}},
		{"wrong HTTP proxy password", "s2", "", "", []string{"could not reach WhatsApp through the proxy http://bob:xxxxx@" + connectAddr, "refused the credentials (407"}},
		{"proxy not reachable", "s1", "socks5://alice:" + wrongPass + "@" + nobody, "", []string{"through the proxy socks5://alice:xxxxx@" + nobody, "connection refused"}},
		{"unknown scheme", "s1", "ftp://alice:" + wrongPass + "@" + socksAddr, fault.Invalid, []string{"the proxy ftp://alice:xxxxx@" + socksAddr + ` has the scheme "ftp": want socks5://, http:// or https://`}},
		{"a session pairing through it", "s4", "socks5://alice:" + wrongPass + "@" + socksAddr, fault.WhatsAppError, []string{"could not reach WhatsApp through the proxy socks5://alice:xxxxx@", "authentication failed"}},
	}
	if st := m.State("s1"); st.Status != StatusConnected {
		t.Errorf("s1 after its proxy changed: %+v, want still CONNECTED", st)
	}
	for _, tt := range refusals {
		if tt.proxy != "" {
			proxies.set(tt.id, tt.proxy)
		}
		e.statuses.add(tt.id)
		err := reconnect(tt.id)
		switch {
		case tt.wantFault == "" && err != nil:
			t.Errorf("%s: connect: %v, want nil (a linked device's first connect is retried in the background)", tt.name, err)
		case tt.wantFault != "":
			if f := fault.From(err); f == nil || f.Code != tt.wantFault || !strings.Contains(f.Message, tt.want[0]) {
				t.Errorf("%s: connect: %v, want a %s fault saying %q", tt.name, err, tt.wantFault, tt.want[0])
			}
		}
		st := e.waitState(m, tt.id, tt.name, func(st SessionState) bool {
			return st.Status == StatusDisconnected && strings.Contains(st.Reason, "proxy")
		})
		for _, w := range tt.want {
			if !strings.Contains(st.Reason, w) {
				t.Errorf("%s: reason %q does not say %q", tt.name, st.Reason, w)
			}
		}
	}

	// The right proxy again: s1 logs in through it.
	proxies.set("s1", "socks5://alice:"+socksPass+"@"+socksAddr)
	was := before()
	if err := reconnect("s1"); err != nil {
		t.Fatal(err)
	}
	e.settle(e.waitStatus(m, "s1", StatusConnected))
	grew("s1 connecting again", was, socks, 1, 1)

	var shown bytes.Buffer
	for _, id := range []string{"s1", "s2", "s3", "s4"} {
		b, err := json.Marshal(e.pub.events(id))
		if err != nil {
			t.Fatal(err)
		}
		shown.Write(b)
		shown.WriteString(m.State(id).Reason)
		shown.WriteString(e.statuses.get(id).Reason)
	}
	for _, err := range errs {
		if err != nil {
			shown.WriteString(err.Error())
			if f := fault.From(err); f != nil && f.Cause != nil {
				shown.WriteString(f.Cause.Error())
			}
		}
	}
	if !strings.Contains(logs.String(), "alice:xxxxx@") {
		t.Error("the log never names the proxy: the test would not see a password there")
	}
	for where, text := range map[string]string{"the log": logs.String(), "the events, reasons and errors": shown.String()} {
		for _, pass := range []string{socksPass, connectPass, wrongPass} {
			if strings.Contains(text, pass) {
				t.Errorf("%s holds the password %q", where, pass)
			}
		}
	}
}

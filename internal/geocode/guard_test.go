package geocode_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/geocode"
	"github.com/wagraph/wagraph/internal/logtest"
	"github.com/wagraph/wagraph/internal/netguard"
)

func addrPort(t *testing.T, rawURL string) netip.AddrPort {
	t.Helper()
	ap, err := netip.ParseAddrPort(strings.TrimPrefix(rawURL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	return ap
}

// TestLookupGuarded: without --allow-private-urls a lookup reaches no
// private address, neither by the configured URL nor by a redirect. The
// fake geocoder on loopback is declared public (the guard's test list), so
// that its redirects to other loopback ports can be shown refused.
func TestLookupGuarded(t *testing.T) {
	var trapHits atomic.Int64
	var trap geocoder
	trapSrv := trap.serve(t, func(w http.ResponseWriter, r *http.Request) {
		trapHits.Add(1)
		reply(200, match)(w, r)
	})
	trapPort := trapSrv.URL[strings.LastIndexByte(trapSrv.URL, ':')+1:]
	var fake geocoder
	srv := fake.serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/search":
			reply(200, match)(w, r)
		case "/moved":
			http.Redirect(w, r, "/search?"+r.URL.RawQuery, http.StatusFound)
		case "/to-loopback":
			http.Redirect(w, r, "http://127.0.0.1:"+trapPort+"/search?"+r.URL.RawQuery, http.StatusFound)
		case "/to-decimal":
			http.Redirect(w, r, "http://2130706433:"+trapPort+"/search?"+r.URL.RawQuery, http.StatusFound)
		case "/to-nip":
			http.Redirect(w, r, "http://127.0.0.1.nip.io:"+trapPort+"/search", http.StatusFound)
		case "/to-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	})
	public := netguard.New(netguard.Options{Public: []netip.AddrPort{addrPort(t, srv.URL)}})
	failed := `address "Brandenburger Tor, Berlin" could not be geocoded: the geocoder failed`
	tests := []struct {
		name      string
		searchURL string
		guard     *netguard.Guard
		wantErr   string // "" for a match
		wantLog   string // a part of the log
	}{
		{"public geocoder", srv.URL + "/search", public, "", ""},
		{"redirect within the public geocoder", srv.URL + "/moved", public, "", ""},
		{"redirect to loopback", srv.URL + "/to-loopback", public, failed, "reason=\"127.0.0.1 is a loopback address\""},
		{"redirect to a decimal address", srv.URL + "/to-decimal", public, failed, "host 2130706433 stands for 127.0.0.1, a loopback address"},
		{"redirect to a name spelling loopback", srv.URL + "/to-nip", public, failed, "host 127.0.0.1.nip.io stands for 127.0.0.1"},
		{"redirect to the metadata address", srv.URL + "/to-metadata", public, failed, "169.254.169.254 is the cloud metadata address"},
		{"loopback geocoder, default guard", trapSrv.URL + "/search", nil, failed, "127.0.0.1 is a loopback address"},
		{"localhost geocoder, default guard", "http://localhost:" + trapPort + "/search", nil, failed, "host localhost is a loopback name"},
		{"loopback geocoder allowed", trapSrv.URL + "/search", allowPrivate(), "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := trapHits.Load()
			var logs logtest.Buffer
			g := geocode.New(tt.searchURL, tt.guard, slog.New(slog.NewTextHandler(&logs, nil)))
			got, err := g.Lookup(context.Background(), address)
			if tt.wantErr == "" {
				if err != nil || got.Name != "Brandenburger Tor" {
					t.Fatalf("Lookup = %+v, %v; want a match", got, err)
				}
				return
			}
			if f := fault.From(err); f == nil || f.Code != fault.WhatsAppRefused || f.Message != tt.wantErr {
				t.Fatalf("Lookup = %+v, %v; want a WhatsAppRefused fault %q", got, err, tt.wantErr)
			}
			if n := trapHits.Load() - before; n != 0 {
				t.Fatalf("the loopback geocoder was reached %d times", n)
			}
			log := logs.String()
			if !strings.Contains(log, "the geocoder's address is refused") || !strings.Contains(log, tt.wantLog) {
				t.Errorf("log %q does not say the address was refused (%q)", log, tt.wantLog)
			}
			if strings.Contains(log, "Brandenburger") {
				t.Errorf("log %q carries the looked-up address", log)
			}
		})
	}
}

package geocode_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/geocode"
	"github.com/wagraph/wagraph/internal/netguard"
)

const address = "Brandenburger Tor, Berlin"

// allowPrivate is the guard of --allow-private-urls: the fake geocoders
// listen on loopback.
func allowPrivate() *netguard.Guard { return netguard.New(netguard.Options{AllowPrivate: true}) }

// geocoder is a fake Nominatim: it records the requests it gets; serve
// starts it with the handler of its answers.
type geocoder struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (g *geocoder) last() *http.Request {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.reqs) == 0 {
		return nil
	}
	return g.reqs[len(g.reqs)-1]
}

func (g *geocoder) serve(t *testing.T, answer http.HandlerFunc) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		g.reqs = append(g.reqs, r.Clone(context.Background()))
		g.mu.Unlock()
		answer(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func reply(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}
}

const match = `[{"place_id":1,"lat":"52.5162746","lon":"13.3777041","category":"tourism",
	"name":"Brandenburger Tor","display_name":"Brandenburger Tor, Pariser Platz, Mitte, Berlin, 10117, Deutschland"}]`

func TestLookup(t *testing.T) {
	tests := []struct {
		name    string
		answer  http.HandlerFunc // nil: no geocoder configured
		path    string           // of the configured URL, query included
		want    geocode.Place
		wantErr string // the fault's message; its code is WhatsAppRefused
	}{
		{name: "match", answer: reply(200, match), path: "/search",
			want: geocode.Place{Latitude: 52.5162746, Longitude: 13.3777041, Name: "Brandenburger Tor",
				Address: "Brandenburger Tor, Pariser Platz, Mitte, Berlin, 10117, Deutschland"}},
		{name: "match, the URL's own parameters kept", answer: reply(200, match), path: "/search?countrycodes=de&limit=5",
			want: geocode.Place{Latitude: 52.5162746, Longitude: 13.3777041, Name: "Brandenburger Tor",
				Address: "Brandenburger Tor, Pariser Platz, Mitte, Berlin, 10117, Deutschland"}},
		{name: "a street address without a name", answer: reply(200, `[{"lat":"-33.8","lon":"151.2","name":"","display_name":"1 Main St"}]`), path: "/search",
			want: geocode.Place{Latitude: -33.8, Longitude: 151.2, Address: "1 Main St"}},
		{name: "no match", answer: reply(200, `[]`), path: "/search",
			wantErr: `address "Brandenburger Tor, Berlin" could not be geocoded: no match`},
		{name: "server error", answer: reply(500, `{"error":"internal stack trace here"}`), path: "/search",
			wantErr: `address "Brandenburger Tor, Berlin" could not be geocoded: the geocoder failed (HTTP 500)`},
		{name: "unavailable", answer: reply(503, `<html>down</html>`), path: "/search",
			wantErr: `address "Brandenburger Tor, Berlin" could not be geocoded: the geocoder failed (HTTP 503)`},
		{name: "bad JSON", answer: reply(200, `<html>not json</html>`), path: "/search",
			wantErr: `address "Brandenburger Tor, Berlin" could not be geocoded: the geocoder failed (unreadable answer)`},
		{name: "an object instead of an array", answer: reply(200, `{"lat":"1","lon":"2"}`), path: "/search",
			wantErr: `address "Brandenburger Tor, Berlin" could not be geocoded: the geocoder failed (unreadable answer)`},
		{name: "coordinates not numbers", answer: reply(200, `[{"lat":"north","lon":"13.3"}]`), path: "/search",
			wantErr: `address "Brandenburger Tor, Berlin" could not be geocoded: the geocoder failed (unreadable answer)`},
		{name: "coordinates out of range", answer: reply(200, `[{"lat":"95","lon":"13.3"}]`), path: "/search",
			wantErr: `address "Brandenburger Tor, Berlin" could not be geocoded: the geocoder failed (unreadable answer)`},
		{name: "unset URL",
			wantErr: `address "Brandenburger Tor, Berlin" cannot be geocoded: no geocoder is configured (--geocoder-url)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var fake geocoder
			searchURL := ""
			if tt.answer != nil {
				searchURL = fake.serve(t, tt.answer).URL + tt.path
			}
			g := geocode.New(searchURL, allowPrivate(), nil)
			if g.Configured() != (tt.answer != nil) {
				t.Errorf("Configured() = %v", g.Configured())
			}
			got, err := g.Lookup(context.Background(), " "+address+" ")
			if tt.wantErr != "" {
				f := fault.From(err)
				if f == nil || f.Code != fault.WhatsAppRefused || f.Message != tt.wantErr {
					t.Fatalf("Lookup = %+v, %v; want a WhatsAppRefused fault %q", got, err, tt.wantErr)
				}
			} else if err != nil || got != tt.want {
				t.Fatalf("Lookup = %+v, %v; want %+v", got, err, tt.want)
			}
			if tt.answer == nil {
				return
			}
			r := fake.last()
			if r == nil {
				t.Fatal("the geocoder was not asked")
			}
			q := r.URL.Query()
			if r.Method != http.MethodGet || q.Get("q") != address || q.Get("format") != "jsonv2" || len(q["limit"]) != 1 || q["limit"][0] != "1" {
				t.Errorf("request %s %s", r.Method, r.URL)
			}
			if own, _ := url.Parse(tt.path); own.Query().Get("countrycodes") != q.Get("countrycodes") {
				t.Errorf("the URL's countrycodes got lost: %s", r.URL)
			}
			if ua := r.Header.Get("User-Agent"); !strings.Contains(ua, "wagraph") {
				t.Errorf("User-Agent %q does not name wagraph", ua)
			}
		})
	}
}

// TestLookupSlowServer: a geocoder that does not answer is given up on when
// the context ends, with a fault, not an endless wait.
func TestLookupSlowServer(t *testing.T) {
	release := make(chan struct{})
	var fake geocoder
	srv := fake.serve(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) }) // before srv.Close: cleanups run last first
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := geocode.New(srv.URL, allowPrivate(), nil).Lookup(ctx, address)
	f := fault.From(err)
	if f == nil || f.Code != fault.WhatsAppRefused || f.Message != `address "Brandenburger Tor, Berlin" could not be geocoded: the geocoder did not answer in time` {
		t.Fatalf("Lookup of a silent geocoder: %v", err)
	}

	// A caller that gives up is told so, not with a fault for its client.
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	if _, err := geocode.New(srv.URL, allowPrivate(), nil).Lookup(ctx, address); !errors.Is(err, context.Canceled) || fault.From(err) != nil {
		t.Fatalf("Lookup with a cancelled context: %v", err)
	}
}

func TestLookupUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close() // nothing listens there any more
	_, err := geocode.New(srv.URL+"/search", allowPrivate(), nil).Lookup(context.Background(), address)
	f := fault.From(err)
	if f == nil || f.Code != fault.WhatsAppRefused || f.Message != `address "Brandenburger Tor, Berlin" could not be geocoded: the geocoder failed` {
		t.Fatalf("Lookup of an unreachable geocoder: %v", err)
	}
}

func TestLookupEmptyAddress(t *testing.T) {
	_, err := geocode.New("http://127.0.0.1:1/search", allowPrivate(), nil).Lookup(context.Background(), "  ")
	if f := fault.From(err); f == nil || f.Code != fault.Invalid || f.Field != "address" {
		t.Fatalf("Lookup of an empty address: %v", err)
	}
	var nilGeocoder *geocode.Geocoder
	if _, err := nilGeocoder.Lookup(context.Background(), address); !strings.Contains(fault.From(err).Message, "no geocoder is configured") {
		t.Fatalf("Lookup of a nil geocoder: %v", err)
	}
}

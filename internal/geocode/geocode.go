// Package geocode turns the address of an address-only location message into
// coordinates with a Nominatim-compatible search endpoint (--geocoder-url).
//
// Every failure a client sees is fault.WhatsAppRefused (422 in REST): the
// request was well formed, the address just cannot be sent as a location.
// The messages say which of three things happened (no geocoder configured,
// no match, the geocoder failed) and never carry the geocoder's own answer.
//
// Requests dial through a netguard.Guard with the --allow-private-urls
// setting. The endpoint is the operator's own choice, but the addresses its
// name resolves to and the redirects it answers with are not: without the
// setting, neither may lead a lookup to a loopback, private or metadata
// address.
package geocode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/netguard"
)

const (
	// timeout bounds one lookup: a send waits for it.
	timeout = 10 * time.Second
	// maxAnswer caps the answer read; one result is a few hundred bytes.
	maxAnswer = 1 << 20
	// userAgent names the application, as Nominatim's usage policy requires.
	userAgent = "wagraph (self-hosted WhatsApp gateway; https://github.com/wagraph/wagraph)"
)

// Place is where an address is.
type Place struct {
	Latitude, Longitude float64
	Name                string // the place's own name, "" when it has none (a street address)
	Address             string // the full address as the geocoder writes it
}

// Geocoder looks addresses up at one search endpoint.
type Geocoder struct {
	searchURL string
	client    *http.Client
	log       *slog.Logger
}

// New returns a geocoder for the search endpoint searchURL (such as
// https://nominatim.openstreetmap.org/search; its own query parameters are
// kept). An empty searchURL is a geocoder that refuses every lookup as not
// configured. Its requests dial through guard; nil is a guard that refuses
// every non-public address. log nil discards.
func New(searchURL string, guard *netguard.Guard, log *slog.Logger) *Geocoder {
	if guard == nil {
		guard = netguard.New(netguard.Options{})
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Geocoder{searchURL: searchURL, client: &http.Client{Transport: guard.Transport()}, log: log}
}

// Configured reports whether the geocoder has an endpoint.
func (g *Geocoder) Configured() bool { return g != nil && g.searchURL != "" }

// result is one entry of Nominatim's jsonv2 answer; it writes coordinates as
// strings.
type result struct {
	Lat         string `json:"lat"`
	Lon         string `json:"lon"`
	DisplayName string `json:"display_name"`
	Name        string `json:"name"`
}

// Lookup returns the best match of address. The caller's ctx bounds it, and
// so does a timeout of its own.
func (g *Geocoder) Lookup(ctx context.Context, address string) (Place, error) {
	address = strings.TrimSpace(address)
	if address == "" {
		return Place{}, fault.InvalidField("address", "address must not be empty")
	}
	if !g.Configured() {
		return Place{}, fault.New(fault.WhatsAppRefused, "address %q cannot be geocoded: no geocoder is configured (--geocoder-url)", fault.Clip(address, fault.QuoteLen))
	}
	failed := func(why string) error {
		return fault.New(fault.WhatsAppRefused, "address %q could not be geocoded: %s", fault.Clip(address, fault.QuoteLen), why)
	}
	u, err := url.Parse(g.searchURL)
	if err != nil {
		g.log.Error("the geocoder URL is not a URL", "err", err)
		return Place{}, failed("the geocoder failed")
	}
	q := u.Query()
	q.Set("q", address)
	q.Set("format", "jsonv2")
	q.Set("limit", "1")
	u.RawQuery = q.Encode()

	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		g.log.Error("building the geocoder request failed", "err", err)
		return Place{}, failed("the geocoder failed")
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "application/json")
	resp, err := g.client.Do(req)
	if err != nil {
		var refused *netguard.RefusedError
		if errors.As(err, &refused) {
			// The operator's to fix; the client learns only that it failed.
			g.log.Warn("the geocoder's address is refused; --allow-private-urls lets it reach private addresses",
				"host", u.Host, "reason", refused.Error())
			return Place{}, failed("the geocoder failed")
		}
		// The address is message content: it is not logged, and a url.Error
		// would repeat it in the query of the URL it names.
		logged := err
		var urlErr *url.Error
		if errors.As(err, &urlErr) {
			logged = urlErr.Err
		}
		g.log.Warn("the geocoder did not answer", "host", u.Host, "err", logged)
		switch {
		case errors.Is(err, context.Canceled):
			return Place{}, fmt.Errorf("geocode: %w", err) // the caller gave up: nobody to tell
		case errors.Is(err, context.DeadlineExceeded):
			return Place{}, failed("the geocoder did not answer in time")
		}
		return Place{}, failed("the geocoder failed")
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		g.log.Warn("the geocoder failed", "host", u.Host, "status", resp.StatusCode)
		return Place{}, failed(fmt.Sprintf("the geocoder failed (HTTP %d)", resp.StatusCode))
	}
	var results []result
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxAnswer)).Decode(&results); err != nil {
		g.log.Warn("the geocoder's answer is not a JSON array of places", "host", u.Host, "err", err)
		return Place{}, failed("the geocoder failed (unreadable answer)")
	}
	if len(results) == 0 {
		return Place{}, failed("no match")
	}
	p, err := results[0].place()
	if err != nil {
		g.log.Warn("the geocoder's answer has no usable coordinates", "host", u.Host, "err", err)
		return Place{}, failed("the geocoder failed (unreadable answer)")
	}
	return p, nil
}

func (r result) place() (Place, error) {
	lat, err := strconv.ParseFloat(strings.TrimSpace(r.Lat), 64)
	if err != nil {
		return Place{}, fmt.Errorf("lat %q: %w", r.Lat, err)
	}
	lon, err := strconv.ParseFloat(strings.TrimSpace(r.Lon), 64)
	if err != nil {
		return Place{}, fmt.Errorf("lon %q: %w", r.Lon, err)
	}
	if math.Abs(lat) > 90 || math.Abs(lon) > 180 || math.IsNaN(lat) || math.IsNaN(lon) {
		return Place{}, fmt.Errorf("coordinates %v,%v out of range", lat, lon)
	}
	return Place{Latitude: lat, Longitude: lon, Name: r.Name, Address: r.DisplayName}, nil
}

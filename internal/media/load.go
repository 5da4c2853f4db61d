package media

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/netguard"
)

// LoaderOptions configure a Loader.
type LoaderOptions struct {
	AllowPrivate bool              // --allow-private-urls
	MaxBytes     int64             // --max-body: largest fetched or decoded media; 0 means 64 MiB
	Timeout      time.Duration     // whole fetch; 0 means 60s
	Resolver     netguard.Resolver // nil: net.DefaultResolver
	Logger       *slog.Logger
}

// defaultMaxBytes matches the default of --max-body.
const defaultMaxBytes = 64 << 20

// maxRedirects is how many redirects one fetch follows.
const maxRedirects = 5

// Loader turns a `source` field into bytes: an http(s) URL fetched through
// one guarded client, or base64 (standard or URL alphabet, padded or not,
// whitespace tolerated) with an optional data-URI prefix.
type Loader struct {
	max     int64
	timeout time.Duration
	client  *http.Client
	log     *slog.Logger
}

// NewLoader builds the Loader and its one HTTP client.
func NewLoader(opts LoaderOptions) *Loader { return newLoader(opts, nil) }

// newLoader is NewLoader whose guard also admits the public destinations:
// how tests put a "public" server on loopback.
func newLoader(opts LoaderOptions, public []netip.AddrPort) *Loader {
	l := &Loader{max: opts.MaxBytes, timeout: opts.Timeout, log: opts.Logger}
	if l.max <= 0 {
		l.max = defaultMaxBytes
	}
	if l.timeout <= 0 {
		l.timeout = 60 * time.Second
	}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	guard := netguard.New(netguard.Options{AllowPrivate: opts.AllowPrivate, Resolver: opts.Resolver, Public: public})
	transport := guard.Transport()
	transport.ResponseHeaderTimeout = l.timeout
	l.client = &http.Client{
		Transport: transport,
		Timeout:   l.timeout,
		// The dialer re-checks every redirect target's addresses; this only
		// bounds the chain and keeps it on http(s).
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxRedirects {
				return errTooManyRedirects
			}
			if s := req.URL.Scheme; s != "http" && s != "https" {
				return &badRedirectError{scheme: s}
			}
			return nil
		},
	}
	return l
}

var errTooManyRedirects = errors.New("too many redirects")

type badRedirectError struct{ scheme string }

func (e *badRedirectError) Error() string { return "redirect to scheme " + e.scheme }

// Load returns the bytes of source. field names the input in errors
// ("source", "input.source").
func (l *Loader) Load(ctx context.Context, field, source string) ([]byte, error) {
	source = strings.TrimSpace(source)
	if source == "" {
		return nil, fault.InvalidField(field, "%s must be an http(s) URL or base64 data", fieldName(field))
	}
	if lower := strings.ToLower(source); strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") {
		return l.fetch(ctx, field, source)
	}
	return l.decode(field, source)
}

// fieldName is the last element of a field path: what a message calls it.
func fieldName(field string) string {
	if i := strings.LastIndexByte(field, '.'); i >= 0 {
		return field[i+1:]
	}
	return field
}

func (l *Loader) decode(field, source string) ([]byte, error) {
	name := fieldName(field)
	bad := fault.InvalidField(field, "%s must be an http(s) URL or base64 data", name)
	if strings.HasPrefix(strings.ToLower(source), "data:") {
		comma := strings.IndexByte(source, ',')
		if comma < 0 || !strings.HasSuffix(strings.ToLower(source[:comma]), ";base64") {
			return nil, bad
		}
		source = source[comma+1:]
	}
	source = strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '\r', '\n':
			return -1
		}
		return r
	}, source)
	source = strings.TrimRight(source, "=")
	if source == "" {
		return nil, bad
	}
	enc := base64.RawStdEncoding
	if strings.ContainsAny(source, "-_") {
		enc = base64.RawURLEncoding
	}
	if int64(enc.DecodedLen(len(source))) > l.max {
		return nil, l.tooLarge(name)
	}
	data, err := enc.DecodeString(source)
	if err != nil || len(data) == 0 {
		return nil, bad
	}
	return data, nil
}

func (l *Loader) tooLarge(name string) error {
	return fault.New(fault.TooLarge, "%s is larger than the %s limit (--max-body)", name, config.FormatSize(l.max))
}

func (l *Loader) fetch(ctx context.Context, field, source string) ([]byte, error) {
	name := fieldName(field)
	u, err := url.Parse(source)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fault.InvalidField(field, "%s must be an http(s) URL or base64 data", name)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fault.InvalidField(field, "%s must be an http(s) URL or base64 data", name)
	}
	req.Header.Set("User-Agent", "wagraph")
	resp, err := l.client.Do(req)
	if err != nil {
		return nil, l.fetchError(ctx, field, u.Hostname(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		l.log.InfoContext(ctx, "media URL answered an error", "host", u.Hostname(), "status", resp.StatusCode)
		// The reason phrase is ours, not the server's: remote text is not echoed.
		return nil, fault.InvalidField(field, "%s URL answered %d %s", name, resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	if resp.ContentLength > l.max {
		return nil, l.tooLarge(name)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, l.max+1))
	if err != nil {
		return nil, l.fetchError(ctx, field, u.Hostname(), err)
	}
	if int64(len(data)) > l.max {
		return nil, l.tooLarge(name)
	}
	l.log.DebugContext(ctx, "media fetched", "host", u.Hostname(), "bytes", len(data))
	return data, nil
}

// fetchError classifies a failed fetch. The message says what kind of
// failure it was, never the Go error text (addresses of resolvers, local
// ports, TLS internals).
func (l *Loader) fetchError(ctx context.Context, field, host string, err error) error {
	name := fieldName(field)
	var refused *netguard.RefusedError
	if errors.As(err, &refused) {
		l.log.InfoContext(ctx, "media URL refused", "host", host, "reason", refused.Error())
		switch {
		case !refused.Addr.IsValid():
			return fault.InvalidField(field, "%s URL host %s is %s; private addresses are refused unless --allow-private-urls", name, refused.Host, refused.Class)
		case refused.Host == "":
			return fault.InvalidField(field, "%s URL resolves to %s, %s; private addresses are refused unless --allow-private-urls", name, refused.Addr, refused.Class)
		case refused.Resolved:
			return fault.InvalidField(field, "%s URL host %s resolves to %s, %s; private addresses are refused unless --allow-private-urls", name, refused.Host, refused.Addr, refused.Class)
		default: // 2130706433, 127.0.0.1.nip.io
			return fault.InvalidField(field, "%s URL host %s stands for %s, %s; private addresses are refused unless --allow-private-urls", name, refused.Host, refused.Addr, refused.Class)
		}
	}
	if errors.Is(err, errTooManyRedirects) {
		return fault.InvalidField(field, "%s URL redirected more than %d times", name, maxRedirects)
	}
	var scheme *badRedirectError
	if errors.As(err, &scheme) {
		return fault.InvalidField(field, "%s URL redirected to a URL of scheme %s; only http and https are followed", name, scheme.scheme)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("fetch %s: %w", host, ctx.Err())
	}
	logged := err
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		logged = urlErr.Err // its text repeats the URL, whose query may be a secret
	}
	l.log.InfoContext(ctx, "media fetch failed", "host", host, "err", logged)
	return fault.InvalidField(field, "%s URL could not be fetched: %s", name, networkReason(err, host, l.timeout))
}

func networkReason(err error, host string, timeout time.Duration) string {
	var dnsErr *net.DNSError
	var netErr net.Error
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostnameErr x509.HostnameError
	var recordErr tls.RecordHeaderError
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		if timeout%time.Second == 0 {
			return fmt.Sprintf("no complete answer within %ds", int64(timeout/time.Second))
		}
		return fmt.Sprintf("no complete answer within %s", timeout)
	case errors.As(err, &dnsErr):
		return fmt.Sprintf("host %s not found", host)
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "the connection was closed early"
	case errors.As(err, &certErr), errors.As(err, &unknownAuth), errors.As(err, &hostnameErr):
		return "its TLS certificate is not valid"
	case errors.As(err, &recordErr):
		return "TLS handshake failed"
	}
	return "network error"
}

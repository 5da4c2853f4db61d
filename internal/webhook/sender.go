package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/netguard"
)

// Status is what one delivery attempt means for the delivery.
type Status string

const (
	// Delivered: the receiver answered 2xx; the delivery is done.
	Delivered Status = "delivered"
	// Retry: anything but 2xx or 410 (network error, timeout, refused
	// address, 1xx, 3xx, 4xx, 5xx); the delivery is tried again on the
	// schedule.
	Retry Status = "retry"
	// Gone: the receiver answered 410; the webhook is to be disabled and
	// not tried again.
	Gone Status = "gone"
)

// Target is where and how one webhook is delivered.
type Target struct {
	URL    string
	Secret string
	// Headers are the webhook's custom headers, sent with every request.
	Headers map[string]string
}

// TargetOf returns the delivery target of a webhook record.
func TargetOf(w *ent.Webhook) Target {
	return Target{URL: w.URL, Secret: w.Secret, Headers: w.Headers}
}

// Outcome is the result of one attempt, as the delivery log records it.
type Outcome struct {
	Status Status
	// StatusCode is the receiver's HTTP status, 0 when none came.
	StatusCode int
	Duration   time.Duration
	// Err says briefly why the attempt did not deliver, "" when it did. It
	// never holds the secret, the body or the URL (whose query or user info
	// may carry credentials).
	Err string
	// cause is the whole error behind Err when no answer came, for the
	// server log only: it may name the server's resolver or quote the
	// receiver.
	cause error
}

const (
	// maxResponseRead bounds the part of a response that is read: only
	// the status matters, and reading a short body to its end lets the
	// connection be reused.
	maxResponseRead = 4 << 10
	// maxErrLen bounds Outcome.Err.
	maxErrLen = 200
	userAgent = "wagraph-webhooks"
)

// Sender performs single delivery attempts. Its connections go through a
// netguard.Guard, so a receiver on a non-public address is refused when the
// socket connects, after DNS, unless the guard allows private addresses.
type Sender struct {
	client    *http.Client
	transport *http.Transport
	timeout   time.Duration
	log       *slog.Logger
}

// NewSender returns a Sender dialling through guard (nil: a guard refusing
// every non-public address). timeout bounds each whole attempt, from
// connecting to reading the answer; zero or less is 15s. log nil discards.
func NewSender(guard *netguard.Guard, timeout time.Duration, log *slog.Logger) *Sender {
	if guard == nil {
		guard = netguard.New(netguard.Options{})
	}
	if timeout <= 0 {
		timeout = 15 * time.Second
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	transport := guard.Transport()
	transport.ResponseHeaderTimeout = timeout
	return &Sender{
		client: &http.Client{
			Transport: transport,
			// A redirect is an answer like any other non-2xx: following it
			// would deliver the signed body to a URL nobody registered.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		transport: transport,
		timeout:   timeout,
		log:       log,
	}
}

// Close closes the idle connections kept for later attempts, and with them
// the transport's goroutines that serve them.
func (s *Sender) Close() { s.transport.CloseIdleConnections() }

// Send POSTs body to t once, signed with t's secret under eventID (the
// webhook-id: the same on every attempt, so receivers can drop duplicates).
// Custom headers are set first and the delivery's own headers after them, so
// no custom header can replace those.
func (s *Sender) Send(ctx context.Context, t Target, eventID string, body []byte) Outcome {
	start := time.Now()
	out := s.send(ctx, t, eventID, body, start)
	out.Duration = time.Since(start)
	out.Err = scrub(out.Err, t.Secret)
	return out
}

func (s *Sender) send(ctx context.Context, t Target, eventID string, body []byte, start time.Time) Outcome {
	signed, err := SignedHeaders(t.Secret, eventID, start, body)
	if err != nil {
		s.log.ErrorContext(ctx, "webhook delivery cannot be signed", "event_id", eventID, "err", err)
		return Outcome{Status: Retry, Err: "signing failed: " + err.Error()}
	}
	u, err := url.Parse(t.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// url.Parse's error quotes the URL: only the fact is told.
		return Outcome{Status: Retry, Err: "the webhook URL is not an absolute http(s) URL"}
	}
	host := u.Hostname()

	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL, bytes.NewReader(body))
	if err != nil {
		return Outcome{Status: Retry, Err: "the request could not be built"}
	}
	req.Header.Set("User-Agent", userAgent)
	s.setCustom(ctx, req.Header, t.Headers, host)
	for name, values := range signed {
		req.Header[name] = values
	}

	resp, err := s.client.Do(req)
	if err != nil {
		msg, cause := s.transportError(ctx, err, host)
		return Outcome{Status: Retry, Err: msg, cause: cause}
	}
	// The answer's body says nothing the delivery keeps; a few KiB are
	// read so a short one leaves the connection reusable.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseRead))
	_ = resp.Body.Close()

	out := Outcome{StatusCode: resp.StatusCode}
	switch code := resp.StatusCode; {
	case code >= 200 && code < 300:
		out.Status = Delivered
	case code == http.StatusGone:
		out.Status = Gone
		out.Err = "the receiver answered 410 Gone"
	case code >= 300 && code < 400:
		out.Status = Retry
		out.Err = fmt.Sprintf("the receiver answered %d (redirects are not followed)", code)
	default:
		out.Status = Retry
		out.Err = fmt.Sprintf("the receiver answered %d", code)
	}
	return out
}

// setCustom adds the webhook's custom headers. The registry already refuses
// reserved or malformed ones; a record that slipped past it (an older
// version, a hand-edited database) loses the header, not the delivery.
func (s *Sender) setCustom(ctx context.Context, dst http.Header, custom map[string]string, host string) {
	for name, value := range custom {
		switch {
		case slices.Contains(reservedHeaders, strings.ToLower(name)) || slices.Contains(hopHeaders, strings.ToLower(name)):
			s.log.WarnContext(ctx, "webhook custom header skipped: the delivery sets it", "host", host, "header", name)
		case !httpguts.ValidHeaderFieldName(name) || !httpguts.ValidHeaderFieldValue(value):
			s.log.WarnContext(ctx, "webhook custom header skipped: not a valid HTTP header", "host", host, "header", fmt.Sprintf("%q", fault.Clip(name, MaxHeaderNameLen)))
		default:
			dst.Set(name, value)
		}
	}
}

// transportError says why no answer came, in one short, fixed message per
// class for the delivery log, which the webhook's owner reads: never the Go
// error's text, which holds the server's resolver address, local ports, TLS
// internals or what the receiver wrote (the class vocabulary of the media
// loader). The whole cause, without the URL that url.Error repeats, is
// returned for the server log.
func (s *Sender) transportError(ctx context.Context, err error, host string) (msg string, cause error) {
	cause = err
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		cause = urlErr.Err // its text repeats the URL, whose query may be a secret
	}
	var refused *netguard.RefusedError
	var dnsErr *net.DNSError
	var netErr net.Error
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostnameErr x509.HostnameError
	var invalidCert x509.CertificateInvalidError
	var recordErr tls.RecordHeaderError
	var alertErr tls.AlertError
	text := cause.Error()
	switch {
	case errors.As(err, &refused):
		s.log.InfoContext(ctx, "webhook receiver refused; --allow-private-urls lets deliveries reach private addresses", "host", host, "reason", refused.Error())
		return "refused: " + refused.Error(), cause
	case errors.Is(err, context.Canceled):
		return "canceled", cause
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return fmt.Sprintf("no answer within %s", s.timeout), cause
	case errors.As(err, &dnsErr):
		return "the receiver's host name does not resolve", cause
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused", cause
	case errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
		return "the receiver's host is unreachable", cause
	case errors.As(err, &certErr), errors.As(err, &unknownAuth), errors.As(err, &hostnameErr), errors.As(err, &invalidCert):
		return "the receiver's TLS certificate is not valid", cause
	case errors.As(err, &recordErr), errors.As(err, &alertErr),
		strings.Contains(text, "server gave HTTP response to HTTPS client"), strings.HasPrefix(text, "tls: "):
		return "TLS handshake failed", cause
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "the receiver closed the connection without an answer", cause
	// net/http's parse errors are plain strings quoting the receiver's bytes.
	case strings.Contains(text, "malformed HTTP"), strings.Contains(text, "malformed MIME"),
		strings.Contains(text, "invalid header"), strings.Contains(text, "bad Content-Length"),
		strings.Contains(text, "unsupported transfer encoding"), strings.Contains(text, "server response headers exceeded"):
		return "the receiver's answer is not valid HTTP", cause
	}
	return "network error", cause
}

// scrub clips msg and removes the secret, should some error ever quote it.
func scrub(msg, secret string) string {
	return fault.Clip(scrubSecret(msg, secret), maxErrLen)
}

// scrubSecret removes the secret, in either of its forms, from msg.
func scrubSecret(msg, secret string) string {
	if secret != "" {
		msg = strings.ReplaceAll(msg, secret, "[secret]")
		if enc, ok := strings.CutPrefix(secret, secretPrefix); ok && enc != "" {
			msg = strings.ReplaceAll(msg, enc, "[secret]")
		}
	}
	return msg
}

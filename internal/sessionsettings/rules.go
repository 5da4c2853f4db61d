// Package sessionsettings is the home of a session's settings (surface.md
// §4 "Settings per session"): their rules, each written once with the
// message a client reads (the send rate's grammar, the jitter's bound, the
// proxy's schemes), their durable record in the session's row, and the
// reads the rest of the gateway makes of them: the messaging service's pace
// and typing, the automations (auto mark read, auto reject calls) and the
// session's proxy for its connection.
//
// A package of its own rather than a part of internal/sessions: the
// sessions service is the record's lifecycle and who reaches it, while
// these are rules of their own, read on the paths of sends and inbound
// events by packages that need nothing else of a session (messaging reads
// only its pace), and the proxy's password must have one reader.
package sessionsettings

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/wagraph/wagraph/internal/fault"
)

// The bounds of the settings.
const (
	// MaxJitter bounds sendJitter: a queued send waits at most this much
	// more than its rate asks.
	MaxJitter = time.Minute
	// MinSendInterval is the shortest pause a send rate may ask for
	// between two sends (1000/s): the queue orders sends by their due
	// time, kept to the millisecond.
	MinSendInterval = time.Millisecond
	// MaxCallRejectMessage bounds callRejectMessage, in characters.
	MaxCallRejectMessage = 4096
	// maxProxyLen bounds the proxy URL.
	maxProxyLen = 2048
)

// Rate is a send rate: at most N sends per Per, spaced evenly.
type Rate struct {
	N   int
	Per time.Duration
	// text is the rate as given ("30/m"), shown back as such.
	text string
}

// ratePeriods are the units of a send rate.
var ratePeriods = map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour}

var rateForm = regexp.MustCompile(`^([0-9]{1,9})/([smh])$`)

// ParseRate reads a send rate, "<n>/s", "<n>/m" or "<n>/h" with n at
// least 1 and at most one send per millisecond; field names it in errors.
func ParseRate(field, text string) (Rate, error) {
	m := rateForm.FindStringSubmatch(text)
	if m == nil {
		return Rate{}, fault.InvalidField(field, `%s must be "<n>/s", "<n>/m" or "<n>/h" with n a whole number of sends (e.g. "30/m"); got %q`, field, fault.Clip(text, fault.QuoteLen))
	}
	n, _ := strconv.Atoi(m[1])
	r := Rate{N: n, Per: ratePeriods[m[2]], text: text}
	if n < 1 {
		return Rate{}, fault.InvalidField(field, "%s must allow at least 1 send per period; got %q", field, text)
	}
	if r.Interval() < MinSendInterval {
		return Rate{}, fault.InvalidField(field, "%s must allow at most one send per %s (1000/s); got %q", field, MinSendInterval, text)
	}
	return r, nil
}

// Interval is the pause between two sends at this rate.
func (r Rate) Interval() time.Duration { return r.Per / time.Duration(r.N) }

// String is the rate as it was given.
func (r Rate) String() string { return r.text }

// ParseJitter reads sendJitter: a duration in Go's form ("1.5s", "500ms"),
// from 0 to MaxJitter.
func ParseJitter(field, text string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(text))
	if err != nil {
		return 0, fault.InvalidField(field, `%s must be a duration such as "0s", "500ms" or "2s"; got %q`, field, fault.Clip(text, fault.QuoteLen))
	}
	if d < 0 || d > MaxJitter {
		return 0, fault.InvalidField(field, "%s must be from 0s to %s; got %s", field, MaxJitter, d)
	}
	return d, nil
}

// FormatJitter is how sendJitter is shown: Go's form of the duration.
func FormatJitter(d time.Duration) string { return d.String() }

// proxySchemes are the proxies a session's connection can go through.
var proxySchemes = map[string]bool{"socks5": true, "http": true, "https": true}

// ParseProxy checks a proxy URL: socks5://[user:pass@]host:port or
// http(s)://[user:pass@]host:port, nothing after the port. The error never
// repeats the URL: it may hold a password.
func ParseProxy(field, text string) (*url.URL, error) {
	if len(text) > maxProxyLen {
		return nil, fault.InvalidField(field, "%s must be at most %d bytes", field, maxProxyLen)
	}
	u, err := url.Parse(text)
	if err != nil || u.Opaque != "" {
		return nil, fault.InvalidField(field, "%s must be a URL: socks5://[user:pass@]host:port or http(s)://[user:pass@]host:port", field)
	}
	if !proxySchemes[u.Scheme] {
		return nil, fault.InvalidField(field, "%s must start with socks5://, http:// or https:// (got scheme %q)", field, fault.Clip(u.Scheme, fault.QuoteLen))
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil || host == "" {
		return nil, fault.InvalidField(field, "%s must name a host and a port (%s://host:port)", field, u.Scheme)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return nil, fault.InvalidField(field, "%s must have a port from 1 to 65535", field)
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return nil, fault.InvalidField(field, "%s must end at the port: no path, query or fragment", field)
	}
	if u.User != nil && u.User.Username() == "" {
		return nil, fault.InvalidField(field, "%s must name a user before its password (user:pass@)", field)
	}
	u.Path = ""
	return u, nil
}

// RedactProxy is a proxy URL as it may be shown or logged: its password
// replaced by ***.
func RedactProxy(u *url.URL) string {
	shown := *u
	if _, has := u.User.Password(); has {
		shown.User = url.UserPassword(u.User.Username(), "***")
	}
	// url.URL escapes the stars in a password; they are shown as written.
	return strings.Replace(shown.String(), ":%2A%2A%2A@", ":***@", 1)
}

// CheckCallRejectMessage checks callRejectMessage: text of at most
// MaxCallRejectMessage characters.
func CheckCallRejectMessage(field, text string) error {
	if n := len([]rune(text)); n > MaxCallRejectMessage {
		return fault.InvalidField(field, "%s must be at most %d characters (got %d)", field, MaxCallRejectMessage, n)
	}
	if strings.ContainsRune(text, 0) {
		return fault.InvalidField(field, "%s must not contain NUL characters", field)
	}
	return nil
}

// TypingTime is how long a text of n characters is shown typed before it
// is sent (simulateTyping): a moment plus a little per character, as a
// person types, capped at MaxTyping.
func TypingTime(n int) time.Duration {
	return min(typingBase+time.Duration(n)*typingPerChar, MaxTyping)
}

// The typing simulation's pace.
const (
	MaxTyping     = 5 * time.Second
	typingBase    = 500 * time.Millisecond
	typingPerChar = 50 * time.Millisecond
)

// errorf wraps a storage failure of a session's settings.
func errorf(sessionID, what string, err error) error {
	return fmt.Errorf("%s the settings of session %s: %w", what, sessionID, err)
}

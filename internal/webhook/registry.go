// Package webhook manages a session's webhooks: their records and the rules a
// record must obey (Registry), the signing and the guarded HTTP client of one
// attempt (Sender), the Dispatcher that delivers the durable outbox (the
// delivery rows the event log writes), and the delivery log clients read and
// redeliver from (DeliveryLog).
package webhook

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wagraph/wagraph/ent"
	entsession "github.com/wagraph/wagraph/ent/session"
	entwebhook "github.com/wagraph/wagraph/ent/webhook"
	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/netguard"
	"github.com/wagraph/wagraph/internal/storage"
)

// Limits of a webhook record.
const (
	MaxURLLen         = 2048
	MaxDisplayNameLen = 100
	MaxHeaders        = 32
	MaxHeaderNameLen  = 128
	MaxHeaderValueLen = 4096
	MaxPageSize       = 100
	secretBytes       = 32
)

// reservedHeaders are set by the delivery itself; a custom header may not
// replace them.
var reservedHeaders = []string{
	"content-type", "content-length", "host", "connection", "transfer-encoding",
	"webhook-id", "webhook-timestamp", "webhook-signature",
}

// hopHeaders describe one connection, not the request (RFC 9110 7.6.1):
// net/http never sends Trailer as a header, its HTTP/2 client (used for
// https) drops Upgrade, Keep-Alive and Proxy-Connection and refuses any TE
// but "trailers", which would fail every delivery. Found by
// FuzzValidateHeaders.
var hopHeaders = []string{"te", "trailer", "upgrade", "keep-alive", "proxy-connection"}

// Spec is the caller's wish for a webhook. A nil field is "not given": on
// creation it takes its default, on update it keeps its value.
type Spec struct {
	URL         *string
	DisplayName *string
	Enabled     *bool
	Events      *[]events.Kind
	Headers     *[]Header
}

// Header is one custom header sent with every delivery.
type Header struct{ Name, Value string }

// Registry stores webhook records. Every method takes the id of a session the
// caller was already authorized for: a webhook id is only ever resolved
// inside that session.
type Registry struct {
	db            *ent.Client
	rand          io.Reader
	now           func() time.Time
	newID         func() string
	allowPrivate  bool
	maxPerSession int // 0: no bound
}

// NewRegistry returns a Registry. With allowPrivate false, a URL whose host
// is, or spells, a non-public address, or names this machine or a metadata
// service, is refused at once (netguard.CheckHost); the addresses other names
// resolve to are checked when a delivery connects.
//
// A session has at most maxPerSession webhooks (0: no bound): each event
// becomes a delivery row per webhook, so the bound is one on the work a
// single event can make.
func NewRegistry(db *ent.Client, random io.Reader, now func() time.Time, newID func() string, allowPrivate bool, maxPerSession int) *Registry {
	if random == nil {
		random = rand.Reader
	}
	return &Registry{db: db, rand: random, now: now, newID: newID, allowPrivate: allowPrivate, maxPerSession: maxPerSession}
}

// NotFound is the error for a webhook that is not in the session.
func NotFound(id string) error {
	return fault.New(fault.NotFound, "webhook %s not found", id)
}

// Create stores a new webhook and returns it with its signing secret, which
// is never shown again.
func (r *Registry) Create(ctx context.Context, sessionID string, s Spec) (*ent.Webhook, string, error) {
	if s.URL == nil {
		return nil, "", fault.InvalidField("url", "url is required")
	}
	if err := r.validate(s); err != nil {
		return nil, "", err
	}
	secret, err := r.newSecret()
	if err != nil {
		return nil, "", err
	}
	kinds := events.Selectable() // no selection given: every kind
	if s.Events != nil {
		kinds = *s.Events
	}
	now := r.now()
	var w *ent.Webhook
	err = ent.WithTx(ctx, r.db, func(tx *ent.Tx) error {
		if err := r.checkQuota(ctx, tx, sessionID); err != nil {
			return err
		}
		c := tx.Webhook.Create().
			SetID(r.newID()).
			SetSessionID(sessionID).
			SetURL(*s.URL).
			SetEvents(normalizeKinds(kinds)).
			SetHeaders(headerMap(s.Headers)).
			SetSecret(secret).
			SetCreatedAt(now).
			SetUpdatedAt(now)
		if s.DisplayName != nil {
			c.SetDisplayName(*s.DisplayName)
		}
		if s.Enabled != nil {
			c.SetEnabled(*s.Enabled)
		}
		var err error
		if w, err = c.Save(ctx); err != nil {
			return fmt.Errorf("create webhook: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	return w, secret, nil
}

// checkQuota refuses a new webhook of a session that has maxPerSession
// already, with the session's row locked so that two creations cannot
// both take the last place.
func (r *Registry) checkQuota(ctx context.Context, tx *ent.Tx, sessionID string) error {
	if r.maxPerSession <= 0 {
		return nil
	}
	if _, err := tx.Session.Query().Where(entsession.ID(sessionID), storage.ForUpdate).Only(ctx); err != nil {
		return fmt.Errorf("lock session %s: %w", sessionID, err)
	}
	n, err := tx.Webhook.Query().Where(entwebhook.SessionID(sessionID)).Count(ctx)
	if err != nil {
		return fmt.Errorf("count the webhooks of session %s: %w", sessionID, err)
	}
	if n >= r.maxPerSession {
		return fault.New(fault.Conflict, "quota reached: session %s has %d webhooks, the most one may have (--max-webhooks-per-session); delete one first", sessionID, n)
	}
	return nil
}

// Update changes the given fields of a webhook; a given events selection
// replaces the old one.
func (r *Registry) Update(ctx context.Context, sessionID, id string, s Spec) (*ent.Webhook, error) {
	if err := r.validate(s); err != nil {
		return nil, err
	}
	w, err := r.Get(ctx, sessionID, id)
	if err != nil {
		return nil, err
	}
	u := w.Update().SetUpdatedAt(r.now())
	if s.URL != nil {
		u.SetURL(*s.URL)
	}
	if s.DisplayName != nil {
		u.SetDisplayName(*s.DisplayName)
	}
	if s.Enabled != nil {
		u.SetEnabled(*s.Enabled)
	}
	if s.Events != nil {
		u.SetEvents(normalizeKinds(*s.Events))
	}
	if s.Headers != nil {
		u.SetHeaders(headerMap(s.Headers))
	}
	w, err = u.Save(ctx)
	if err != nil {
		return nil, fmt.Errorf("update webhook: %w", err)
	}
	return w, nil
}

// Get returns one webhook of the session.
func (r *Registry) Get(ctx context.Context, sessionID, id string) (*ent.Webhook, error) {
	w, err := r.db.Webhook.Query().
		Where(entwebhook.ID(id), entwebhook.SessionID(sessionID)).
		Only(ctx)
	if ent.IsNotFound(err) {
		return nil, NotFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("get webhook: %w", err)
	}
	return w, nil
}

// Page is one page of a session's webhooks, oldest first.
type Page struct {
	Items          []*ent.Webhook
	Page, PageSize int
	Total          int
}

// List returns a page of the session's webhooks. page counts from 1.
func (r *Registry) List(ctx context.Context, sessionID string, page, pageSize int) (*Page, error) {
	if page < 1 {
		return nil, fault.InvalidField("page", "page must be at least 1 (got %d)", page)
	}
	if pageSize < 1 || pageSize > MaxPageSize {
		return nil, fault.InvalidField("pageSize", "pageSize must be between 1 and %d (got %d)", MaxPageSize, pageSize)
	}
	q := r.db.Webhook.Query().Where(entwebhook.SessionID(sessionID))
	offset := (page - 1) * pageSize
	items, err := q.Clone().Order(entwebhook.ByCreatedAt(), entwebhook.ByID()).
		Offset(offset).Limit(pageSize).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list webhooks: %w", err)
	}
	// A page that is not full and not past the end is the last one: the
	// total is known without counting (the common case, a session having
	// fewer webhooks than a page; counting was a tenth of the list's cost).
	// The count, when needed, is a query of its own, as the page is: neither
	// was ever read in one transaction.
	total := offset + len(items)
	if len(items) == pageSize || (len(items) == 0 && page > 1) {
		if total, err = q.Count(ctx); err != nil {
			return nil, fmt.Errorf("count webhooks: %w", err)
		}
	}
	return &Page{Items: items, Page: page, PageSize: pageSize, Total: total}, nil
}

// Delete removes a webhook of the session.
func (r *Registry) Delete(ctx context.Context, sessionID, id string) error {
	n, err := r.db.Webhook.Delete().
		Where(entwebhook.ID(id), entwebhook.SessionID(sessionID)).
		Exec(ctx)
	if err != nil {
		return fmt.Errorf("delete webhook: %w", err)
	}
	if n == 0 {
		return NotFound(id)
	}
	return nil
}

// HeaderList returns a record's headers sorted by name.
func HeaderList(w *ent.Webhook) []Header {
	out := make([]Header, 0, len(w.Headers))
	for k, v := range w.Headers {
		out = append(out, Header{Name: k, Value: v})
	}
	slices.SortFunc(out, func(a, b Header) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func (r *Registry) newSecret() (string, error) {
	b := make([]byte, secretBytes)
	if _, err := io.ReadFull(r.rand, b); err != nil {
		return "", fmt.Errorf("read random bytes: %w", err)
	}
	return secretPrefix + base64.StdEncoding.EncodeToString(b), nil
}

func (r *Registry) validate(s Spec) error {
	if s.URL != nil {
		if err := r.validateURL(*s.URL); err != nil {
			return err
		}
	}
	if s.DisplayName != nil {
		if n := utf8.RuneCountInString(*s.DisplayName); n > MaxDisplayNameLen {
			return fault.InvalidField("displayName", "displayName must be at most %d characters (got %d)", MaxDisplayNameLen, n)
		}
		if !utf8.ValidString(*s.DisplayName) || strings.ContainsFunc(*s.DisplayName, isControl) {
			return fault.InvalidField("displayName", "displayName must not contain control characters")
		}
	}
	if s.Events != nil {
		for _, k := range *s.Events {
			if !k.IsSelectable() {
				return fault.InvalidField("events", "unknown event kind %q; valid kinds: %s", fault.Clip(string(k), fault.QuoteLen), strings.Join(events.SelectableNames(), ", "))
			}
		}
	}
	if s.Headers != nil {
		return validateHeaders(*s.Headers)
	}
	return nil
}

func (r *Registry) validateURL(raw string) error {
	if raw == "" {
		return fault.InvalidField("url", "url must not be empty")
	}
	if len(raw) > MaxURLLen {
		return fault.InvalidField("url", "url must be at most %d characters (got %d)", MaxURLLen, len(raw))
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return fault.InvalidField("url", "url must be an absolute http or https URL, such as https://example.com/hook")
	}
	if u.Fragment != "" {
		return fault.InvalidField("url", "url must not have a #fragment")
	}
	if p := u.Port(); p != "" {
		// url.Parse checks the port is digits; the range is left to us.
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fault.InvalidField("url", "url has an invalid port %q", fault.Clip(p, fault.QuoteLen))
		}
	}
	if !r.allowPrivate {
		// No DNS lookup here: a name's answers can change before any
		// delivery, so the deliveries' dialer (a netguard.Guard) checks every
		// address when it connects. This refuses what the URL's own text
		// rules out, by the same rules that dialer applies.
		var refused *netguard.RefusedError
		if errors.As(netguard.CheckHost(u.Hostname()), &refused) {
			return fault.InvalidField("url", "url points at a loopback, private or link-local address (%s); start the server with --allow-private-urls to allow it", refused)
		}
	}
	return nil
}

func validateHeaders(hs []Header) error {
	if len(hs) > MaxHeaders {
		return fault.InvalidField("headers", "headers must have at most %d entries (got %d)", MaxHeaders, len(hs))
	}
	seen := map[string]bool{}
	for _, h := range hs {
		field := "headers." + fault.Clip(h.Name, 2*fault.QuoteLen)
		if h.Name == "" || len(h.Name) > MaxHeaderNameLen || strings.ContainsFunc(h.Name, notTokenChar) {
			return fault.InvalidField(field, "header name %q must be 1 to %d letters, digits or !#$%%&'*+-.^_`|~", fault.Clip(h.Name, fault.QuoteLen), MaxHeaderNameLen)
		}
		lower := strings.ToLower(h.Name)
		if slices.Contains(reservedHeaders, lower) {
			return fault.InvalidField(field, "header %s is set by the delivery itself and cannot be overridden", h.Name)
		}
		if slices.Contains(hopHeaders, lower) {
			return fault.InvalidField(field, "header %s belongs to the connection, not the request, and cannot be set", h.Name)
		}
		if seen[lower] {
			return fault.InvalidField(field, "header %s is given twice (header names are case-insensitive)", h.Name)
		}
		seen[lower] = true
		if len(h.Value) > MaxHeaderValueLen {
			return fault.InvalidField(field, "header %s value must be at most %d bytes (got %d)", h.Name, MaxHeaderValueLen, len(h.Value))
		}
		if strings.ContainsFunc(h.Value, func(r rune) bool { return r != '\t' && isControl(r) }) {
			return fault.InvalidField(field, "header %s value must not contain control characters", h.Name)
		}
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

func notTokenChar(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return false
	}
	return !strings.ContainsRune("!#$%&'*+-.^_`|~", r)
}

// normalizeKinds stores a selection in contract order without duplicates.
func normalizeKinds(ks []events.Kind) []string {
	out := []string{}
	for _, k := range events.Selectable() {
		if slices.Contains(ks, k) {
			out = append(out, string(k))
		}
	}
	return out
}

func headerMap(hs *[]Header) map[string]string {
	m := map[string]string{}
	if hs != nil {
		for _, h := range *hs {
			m[h.Name] = h.Value
		}
	}
	return m
}

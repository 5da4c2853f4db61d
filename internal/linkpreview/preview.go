package linkpreview

import (
	"context"
	"errors"
	"fmt"
	"image"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"time"

	"github.com/wagraph/wagraph/internal/fairpool"
	"github.com/wagraph/wagraph/internal/netguard"
)

// Preview is what WhatsApp shows under a text with a link.
type Preview struct {
	// URL is the canonical URL: the page's og:url, or the URL the fetch
	// ended at after redirects.
	URL string
	// MatchedText is the URL as it appears in the text.
	MatchedText string
	Title       string
	Description string
	// Thumbnail is a JPEG of at most 100x100 pixels, nil when the page has
	// no usable image.
	Thumbnail                       []byte
	ThumbnailWidth, ThumbnailHeight int
}

// Options configure a Fetcher.
type Options struct {
	AllowPrivate bool              // --allow-private-urls
	Resolver     netguard.Resolver // nil: net.DefaultResolver
	// Timeout bounds a whole preview, page, redirects and thumbnail; 0 means
	// 3s. A send waits for its preview, so this is time added to a send.
	Timeout time.Duration
	// Concurrency is how many previews this Fetcher makes at once; 0 means
	// 8. They are shared between users (the tenant of the call's context,
	// internal/fairpool): a call finding every slot busy takes one back
	// from a user holding more than its share, or fails at once with
	// ErrBusy.
	Concurrency int
	// Images decodes the pages' images, within the process's decode
	// bounds (media.Preparer); nil: previews go without thumbnails.
	Images Decoder
	Logger *slog.Logger // nil: discard
}

// Decoder decodes an image within the process's bounds on decoding
// (media.Preparer.DecodeWithin): refused from its header when decoding it
// would allocate more than limit bytes, decoded in one of the slots every
// image decode of the process shares. release gives the slot back once img
// is no longer used.
type Decoder interface {
	DecodeWithin(ctx context.Context, data []byte, limit int64) (img image.Image, release func(), err error)
}

const (
	defaultTimeout     = 3 * time.Second
	defaultConcurrency = 8
	maxRedirects       = 5
	// userAgent names the gateway honestly; a site that hides its
	// OpenGraph tags from unknown agents gets no preview, not a spoof.
	userAgent = "Mozilla/5.0 (compatible; wagraph-linkpreview; +https://github.com/wagraph/wagraph)"
)

var (
	// ErrBusy says every preview slot was taken: the caller should send
	// without a preview rather than wait for one.
	ErrBusy = errors.New("all link preview slots are busy")
	// ErrNotHTML says the URL answered something other than a web page.
	ErrNotHTML = errors.New("not an HTML page")
	// ErrNoMetadata says the page has neither a title nor a description.
	ErrNoMetadata = errors.New("page has neither title nor description")

	errTooManyRedirects = errors.New("too many redirects")
)

type badRedirectError struct{ scheme string }

func (e *badRedirectError) Error() string {
	return "redirect to scheme " + e.scheme + "; only http and https are followed"
}

// Fetcher makes link previews through one guarded HTTP client. It is safe
// for concurrent use.
type Fetcher struct {
	client  *http.Client
	timeout time.Duration
	// slots are the previews in flight, shared fairly between users.
	slots  *fairpool.Pool
	images Decoder // nil: no thumbnails
	log    *slog.Logger
}

// New returns a Fetcher.
func New(opts Options) *Fetcher { return newFetcher(opts, nil) }

// newFetcher is New whose guard also admits the public destinations: how
// tests put a "public" server on loopback.
func newFetcher(opts Options, public []netip.AddrPort) *Fetcher {
	f := &Fetcher{timeout: opts.Timeout, images: opts.Images, log: opts.Logger}
	if f.timeout <= 0 {
		f.timeout = defaultTimeout
	}
	n := opts.Concurrency
	if n <= 0 {
		n = defaultConcurrency
	}
	f.slots = fairpool.New(n)
	if f.log == nil {
		f.log = slog.New(slog.DiscardHandler)
	}
	guard := netguard.New(netguard.Options{AllowPrivate: opts.AllowPrivate, Resolver: opts.Resolver, Public: public})
	transport := guard.Transport()
	transport.ResponseHeaderTimeout = f.timeout
	// Previews go to ever different hosts, page and image often to two: a
	// kept-alive connection would rarely be reused and would leave idle
	// goroutines behind every preview.
	transport.DisableKeepAlives = true
	f.client = &http.Client{
		Transport: transport,
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
	return f
}

// Preview makes the preview of the first http(s) URL in text: nil, nil when
// there is none. Any error means "send without a preview"; it names the
// host, never the URL. A page whose image cannot be made into a thumbnail
// still gets a preview, without one. While every slot is busy, a slot is
// taken back from a user holding more than its share (its preview ends
// with fairpool.ErrReclaimed); when none does, the answer is ErrBusy at
// once.
func (f *Fetcher) Preview(ctx context.Context, text string) (*Preview, error) {
	matched, ok := FirstURL(text)
	if !ok {
		return nil, nil
	}
	u, err := url.Parse(matched)
	if err != nil { // FirstURL only returns what parses; kept for safety
		return nil, fmt.Errorf("linkpreview: parse URL: %w", err)
	}
	host := u.Hostname()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("linkpreview: %s: %w", host, err)
	}
	lease, err := f.slots.TryAcquire(ctx)
	switch {
	case errors.Is(err, fairpool.ErrBusy):
		return nil, fmt.Errorf("linkpreview: %s: %w", host, ErrBusy)
	case err != nil:
		return nil, fmt.Errorf("linkpreview: %s: %w", host, err)
	}
	defer lease.Release()
	ctx, cancel := context.WithTimeout(lease.Context(), f.timeout)
	defer cancel()

	meta, final, err := f.fetchPage(ctx, u)
	if err != nil {
		if cause := context.Cause(lease.Context()); errors.Is(cause, fairpool.ErrReclaimed) {
			err = cause // not the client's "context canceled"
		}
		return nil, fmt.Errorf("linkpreview: page on %s: %w", host, err)
	}
	p := &Preview{
		URL:         final.String(),
		MatchedText: matched,
		Title:       meta.title,
		Description: meta.description,
	}
	if c := canonical(final, meta.url); c != "" {
		p.URL = c
	}
	if meta.image != "" && f.images != nil {
		f.addThumbnail(ctx, p, final, meta.image)
	}
	f.log.DebugContext(ctx, "link preview made", "host", host, "thumbnail", p.Thumbnail != nil)
	return p, nil
}

// canonical resolves og:url against the page's URL, or returns "" when it
// is no http(s) URL.
func canonical(page *url.URL, ogURL string) string {
	if ogURL == "" {
		return ""
	}
	u, err := page.Parse(ogURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	return u.String()
}

// addThumbnail sets p's thumbnail from the page's image, or logs why not:
// a preview without a thumbnail is still a preview.
func (f *Fetcher) addThumbnail(ctx context.Context, p *Preview, page *url.URL, ref string) {
	u, err := page.Parse(ref)
	if err != nil {
		f.log.DebugContext(ctx, "link preview image URL does not parse", "host", page.Hostname())
		return
	}
	thumb, err := f.thumbnail(ctx, u)
	if err != nil {
		f.log.DebugContext(ctx, "link preview without thumbnail", "host", page.Hostname(), "image_host", u.Hostname(), "err", err)
		return
	}
	p.Thumbnail, p.ThumbnailWidth, p.ThumbnailHeight = thumb.jpeg, thumb.width, thumb.height
}

// do runs req on the guarded client. The error leaves out the *url.Error
// around the cause: its text repeats the URL, whose query may be a secret.
func (f *Fetcher) do(req *http.Request) (*http.Response, error) {
	req.Header.Set("User-Agent", userAgent)
	resp, err := f.client.Do(req)
	if err != nil {
		var urlErr *url.Error
		if errors.As(err, &urlErr) {
			err = urlErr.Err
		}
		return nil, err
	}
	return resp, nil
}

// statusError says a URL answered something other than 2xx. The reason
// phrase is Go's, not the server's: remote text is not echoed.
func statusError(code int) error {
	return fmt.Errorf("answered %d %s", code, http.StatusText(code))
}

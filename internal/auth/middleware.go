package auth

import (
	"context"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/wagraph/wagraph/internal/fault"
)

// Limiter is the per-token rate limit: one token bucket per token (or, for a
// request without a valid token, per client address, so guessing tokens is
// limited too).
type Limiter struct {
	per     rate.Limit
	burst   int
	now     func() time.Time
	trusted []netip.Prefix // reverse proxies whose X-Forwarded-For names the client

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

// maxBuckets is when idle buckets are swept; an idle bucket is full again, so
// forgetting it changes nothing.
const maxBuckets = 10_000

// NewLimiter returns a limiter allowing per requests a second with the given
// burst, for each key.
// Requests without a token are limited by their client's address: the
// peer's, or, when the peer is one of the trusted proxies, the one their
// X-Forwarded-For names.
func NewLimiter(per float64, burst int, now func() time.Time, trusted ...netip.Prefix) *Limiter {
	return &Limiter{per: rate.Limit(per), burst: burst, now: now, trusted: trusted, buckets: map[string]*bucket{}}
}

// Allow takes one request from key's bucket. When the bucket is empty it
// returns false and how long until a request would be allowed.
func (l *Limiter) Allow(key string) (bool, time.Duration) {
	return l.AllowN(key, 1)
}

// AllowN takes n requests from key's bucket at once, or none: when they are
// not all there it returns false and how long until they would be. A cost
// over the burst never fits; the wait is then 0.
func (l *Limiter) AllowN(key string, n int) (bool, time.Duration) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[key]
	if b == nil {
		if len(l.buckets) >= maxBuckets {
			l.sweep(now)
		}
		b = &bucket{lim: rate.NewLimiter(l.per, l.burst)}
		l.buckets[key] = b
	}
	b.seen = now
	r := b.lim.ReserveN(now, n)
	if !r.OK() {
		return false, 0
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// ChargeOperations takes n operations of the caller in ctx from its user's
// bucket. The request that carried them has paid for one already (see
// Middleware), so one operation per request costs nothing more; each
// further one does, so a batch of aliased mutations or a busy websocket
// meets the same limit as as many requests.
func (l *Limiter) ChargeOperations(ctx context.Context, n int) error {
	p, err := Require(ctx)
	if err != nil {
		return nil // the resolvers refuse the caller themselves
	}
	charge := n
	if paid, _ := ctx.Value(prepaidKey{}).(*prepaid); paid != nil && paid.take() {
		charge--
	}
	if charge <= 0 {
		return nil
	}
	ok, wait := l.AllowN(userKey(p), charge)
	switch {
	case ok:
		return nil
	case wait == 0:
		return fault.New(fault.RateLimited, "rate limit exceeded: this request holds %d operations, more than the burst of %d the rate limit allows at once; send fewer per request", n, l.burst)
	default:
		return fault.New(fault.RateLimited, "rate limit exceeded: this request holds %d operations; retry in %d s", n, seconds(wait))
	}
}

// prepaid is the one operation an HTTP request paid for by being let in.
// A websocket's operations all arrive over its one upgrade request, which
// paid for none of them.
type prepaid struct{ used atomic.Bool }

type prepaidKey struct{}

func (p *prepaid) take() bool { return p.used.CompareAndSwap(false, true) }

func seconds(d time.Duration) int { return max(1, int(math.Ceil(d.Seconds()))) }

func (l *Limiter) sweep(now time.Time) {
	full := time.Duration(float64(l.burst)/float64(l.per)*float64(time.Second)) + time.Minute
	for k, b := range l.buckets {
		if now.Sub(b.seen) > full {
			delete(l.buckets, k)
		}
	}
}

// Refuse answers a request the middleware will not let in, in the
// transport's own format.
type Refuse func(w http.ResponseWriter, r *http.Request, err error)

// refusedBodyGrace is how long a refused request's body may take to be
// discarded before its connection is closed.
const refusedBodyGrace = time.Second

// Middleware lets in only requests with a valid token, within its rate
// limit. It runs before anything reads the body: a request without a valid
// token is answered through refuse at the cost of one indexed look-up,
// whatever it sends after its headers, and requests without a valid token
// are limited per client address, so guessing costs as much as asking.
// A token's requests are charged to its user: every token of one user,
// session tokens included, draws on one bucket, so minting tokens buys no
// rate. A websocket upgrade may come without a token: it authenticates in
// its connection_init and is charged there (ChargeConnection), to the
// user its token names; charged to its address at the upgrade, a browser's
// socket behind a proxy would share the anonymous bucket of everyone
// there.
func (s *Service) Middleware(l *Limiter, log *slog.Logger, refuse Refuse) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := r.Context()
			raw := FromHeader(r.Header.Get("Authorization"))
			var (
				p   *Principal
				err error = errMissing
			)
			if raw != "" {
				p, err = s.Authenticate(ctx, raw)
			}
			upgrade := isUpgrade(r)
			key := "addr:" + l.clientAddr(r)
			if err == nil {
				key = userKey(p)
			}
			if upgrade && raw == "" {
				ctx = context.WithValue(ctx, unpaidKey{}, key)
			} else if ok, wait := l.Allow(key); !ok {
				w.Header().Set("Retry-After", strconv.Itoa(seconds(wait)))
				err = fault.New(fault.RateLimited, "rate limit exceeded: retry in %d s", seconds(wait))
			}
			switch {
			case err == nil:
				ctx = WithPrincipal(ctx, p)
			case upgrade && fault.CodeOf(err) != fault.RateLimited:
				// No body to protect: the socket closes with 4403 at
				// its connection_init unless that carries a valid token.
				// (A refused request's failure is logged by refuse.)
				if fault.From(err) == nil {
					log.ErrorContext(ctx, "authenticate", "err", err)
				}
				ctx = withFailure(ctx, err)
			default:
				refuseUnread(w, r, err, refuse)
				return
			}
			if !upgrade {
				ctx = context.WithValue(ctx, prepaidKey{}, &prepaid{})
			}
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}

// unpaidKey marks the context of a websocket upgrade that came without a
// token and so was not charged: its value is the key of the address it
// came from.
type unpaidKey struct{}

// ChargeConnection charges a socket's connection_init when its upgrade
// came without a token: to the user of the token the init names (p), or,
// with none valid (p nil), to the address the upgrade came from, so that
// guessing tokens over sockets costs as much as over requests. A socket
// whose upgrade carried a token paid there, and is not charged again.
func (l *Limiter) ChargeConnection(ctx context.Context, p *Principal) error {
	key, unpaid := ctx.Value(unpaidKey{}).(string)
	if !unpaid {
		return nil
	}
	if p != nil {
		key = userKey(p)
	}
	if ok, wait := l.Allow(key); !ok {
		return fault.New(fault.RateLimited, "rate limit exceeded: retry in %d s", seconds(wait))
	}
	return nil
}

// userKey is the bucket of a principal's requests: its user's.
func userKey(p *Principal) string { return "user:" + p.UserID }

// refuseUnread answers a request whose body nobody will read. Its
// connection is closed after the answer, and whatever of the body is still
// to come gets refusedBodyGrace to arrive: a slow or huge body is cut off
// without being read into memory.
func refuseUnread(w http.ResponseWriter, r *http.Request, err error, refuse Refuse) {
	if r.ContentLength != 0 {
		w.Header().Set("Connection", "close")
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(refusedBodyGrace))
	}
	refuse(w, r, err)
}

func isUpgrade(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// clientAddr is the address a request without a token is limited by: its
// peer's, unless the peer is a trusted proxy. Then it is the right-most
// address of X-Forwarded-For that is not a trusted proxy (what each proxy
// appended; anything left of it the client may have written itself), or
// the left-most when all are.
func (l *Limiter) clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if len(l.trusted) == 0 || !l.isTrusted(host) {
		return host
	}
	var hops []string
	for _, h := range r.Header.Values("X-Forwarded-For") {
		for _, hop := range strings.Split(h, ",") {
			hops = append(hops, strings.TrimSpace(hop))
		}
	}
	client := host
	for i := len(hops) - 1; i >= 0; i-- {
		addr, err := netip.ParseAddr(hops[i])
		if err != nil {
			break // a hop that is not an address: trust nothing left of it
		}
		client = addr.Unmap().String()
		if !l.isTrusted(client) {
			break
		}
	}
	return client
}

func (l *Limiter) isTrusted(host string) bool {
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	addr = addr.Unmap()
	for _, p := range l.trusted {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

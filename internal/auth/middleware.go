package auth

import (
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/wagraph/wagraph/internal/fault"
)

// Limiter is the per-token rate limit: one token bucket per token (or, for a
// request without a valid token, per client address, so guessing tokens is
// limited too).
type Limiter struct {
	per   rate.Limit
	burst int
	now   func() time.Time

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
func NewLimiter(per float64, burst int, now func() time.Time) *Limiter {
	return &Limiter{per: rate.Limit(per), burst: burst, now: now, buckets: map[string]*bucket{}}
}

// Allow takes one request from key's bucket. When the bucket is empty it
// returns false and how long until a request would be allowed.
func (l *Limiter) Allow(key string) (bool, time.Duration) {
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
	r := b.lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

func (l *Limiter) sweep(now time.Time) {
	full := time.Duration(float64(l.burst)/float64(l.per)*float64(time.Second)) + time.Minute
	for k, b := range l.buckets {
		if now.Sub(b.seen) > full {
			delete(l.buckets, k)
		}
	}
}

// Middleware finds the caller of every request: it reads the Authorization
// header, authenticates the token, takes one request from its rate-limit
// bucket and leaves the outcome in the request context for the resolvers'
// Require. It answers nothing itself, so REST and GraphQL classify the
// failure through their own tables; it only adds Retry-After when limited.
func (s *Service) Middleware(l *Limiter, log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			raw := FromHeader(r.Header.Get("Authorization"))
			if raw == "" {
				// No token: nothing to look up. A websocket may still
				// authenticate in its connection_init.
				next.ServeHTTP(w, r)
				return
			}
			ctx := r.Context()
			p, err := s.Authenticate(ctx, raw)
			key := "addr:" + clientAddr(r)
			if err == nil {
				key = "token:" + p.TokenID
			} else if fault.From(err) == nil {
				log.ErrorContext(ctx, "authenticate", "err", err)
			}
			if ok, wait := l.Allow(key); !ok {
				secs := int(math.Ceil(wait.Seconds()))
				w.Header().Set("Retry-After", strconv.Itoa(secs))
				err = fault.New(fault.RateLimited, "rate limit exceeded: retry in %d s", secs)
			}
			if err != nil {
				ctx = withFailure(ctx, err)
			} else {
				ctx = WithPrincipal(ctx, p)
			}
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}

func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

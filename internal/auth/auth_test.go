package auth

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/wagraph/wagraph/ent/token"
	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/internal/fairpool"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/testclient"
)

func TestFromHeader(t *testing.T) {
	const tok = "wgu_abcDEF0123456789abcDEF0123456789abcDEF01"
	tests := []struct {
		name, header, want string
	}{
		{"bare token", tok, tok},
		{"Bearer", "Bearer " + tok, tok},
		{"lower-case bearer", "bearer " + tok, tok},
		{"upper-case BEARER", "BEARER " + tok, tok},
		{"mixed-case bEaReR", "bEaReR " + tok, tok},
		{"surrounding spaces", "  " + tok + "\t ", tok},
		{"spaces around Bearer and token", "  Bearer    " + tok + "  ", tok},
		{"empty", "", ""},
		{"only spaces", "   ", ""},
		{"Bearer alone", "Bearer", "Bearer"},
		{"Bearer and spaces only", "Bearer   ", "Bearer"},
		{"Bearer without space is not a scheme", "Bearer" + tok, "Bearer" + tok},
		{"other scheme kept whole", "Basic abc", "Basic abc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FromHeader(tt.header); got != tt.want {
				t.Errorf("FromHeader(%q) = %q, want %q", tt.header, got, tt.want)
			}
		})
	}
}

func isBase62(s string) bool {
	for _, c := range []byte(s) {
		if !strings.ContainsRune(base62, rune(c)) {
			return false
		}
	}
	return true
}

func TestNewToken(t *testing.T) {
	for _, prefix := range []string{UserPrefix, SessionPrefix} {
		t.Run(prefix, func(t *testing.T) {
			a, err := newToken(rand.Reader, prefix)
			if err != nil {
				t.Fatal(err)
			}
			b, err := newToken(rand.Reader, prefix)
			if err != nil {
				t.Fatal(err)
			}
			for _, tok := range []string{a, b} {
				if !strings.HasPrefix(tok, prefix) {
					t.Errorf("token %q does not start with %q", tok, prefix)
				}
				if len(tok) != 4+40 {
					t.Errorf("token %q has length %d, want 44", tok, len(tok))
				}
				if secret := strings.TrimPrefix(tok, prefix); !isBase62(secret) {
					t.Errorf("token secret %q has a character outside base62", secret)
				}
			}
			if a == b {
				t.Errorf("two tokens are equal: %q", a)
			}
		})
	}
}

// Bytes at or above 248 are rejected so every character is equally likely;
// the token is still complete when the source hands out many of them.
func TestNewTokenRejectsBiasedBytes(t *testing.T) {
	// 64 bytes per read: the first read is all rejected, the second gives
	// 0..63, i.e. base62[0..61] then base62[0..1].
	src := bytes.NewReader(append(bytes.Repeat([]byte{255}, 64), seq(0, 64)...))
	tok, err := newToken(src, UserPrefix)
	if err != nil {
		t.Fatal(err)
	}
	want := UserPrefix + base62[:40]
	if tok != want {
		t.Errorf("newToken = %q, want %q", tok, want)
	}

	// 248 maps nowhere; 247 is the last byte kept (247 % 62 = 61, "z").
	src = bytes.NewReader(append(bytes.Repeat([]byte{248, 247}, 32), bytes.Repeat([]byte{247}, 64)...))
	tok, err = newToken(src, SessionPrefix)
	if err != nil {
		t.Fatal(err)
	}
	if want := SessionPrefix + strings.Repeat("z", 40); tok != want {
		t.Errorf("newToken = %q, want %q", tok, want)
	}
}

func seq(from, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(from + i)
	}
	return b
}

func TestNewTokenRandomFailure(t *testing.T) {
	_, err := newToken(bytes.NewReader(make([]byte, 10)), UserPrefix)
	if err == nil {
		t.Fatal("newToken succeeded with a short random source")
	}
}

func TestHash(t *testing.T) {
	for _, tok := range []string{"", "wgu_x", "wgs_" + strings.Repeat("a", 40)} {
		h := Hash(tok)
		if len(h) != 32 {
			t.Errorf("Hash(%q) has %d bytes, want 32", tok, len(h))
		}
		want := sha256.Sum256([]byte(tok))
		if !bytes.Equal(h, want[:]) {
			t.Errorf("Hash(%q) = %x, want sha256 %x", tok, h, want)
		}
	}
	if bytes.Equal(Hash("wgu_a"), Hash("wgu_b")) {
		t.Error("different tokens hash alike")
	}
}

// clock is a settable time source for the limiter.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newClock() *clock { return &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func TestLimiterBurstThenRefusal(t *testing.T) {
	tests := []struct {
		per      float64
		burst    int
		wantWait time.Duration
	}{
		{20, 100, 50 * time.Millisecond},
		{1, 3, time.Second},
		{0.5, 1, 2 * time.Second},
	}
	for _, tt := range tests {
		c := newClock()
		l := NewLimiter(tt.per, tt.burst, c.Now)
		for i := range tt.burst {
			if ok, wait := l.Allow("k"); !ok || wait != 0 {
				t.Fatalf("per=%v burst=%d: request %d refused (wait %v) within the burst", tt.per, tt.burst, i+1, wait)
			}
		}
		ok, wait := l.Allow("k")
		if ok {
			t.Fatalf("per=%v burst=%d: request past the burst allowed", tt.per, tt.burst)
		}
		if wait <= 0 {
			t.Errorf("per=%v burst=%d: refusal with wait %v, want positive", tt.per, tt.burst, wait)
		}
		if wait != tt.wantWait {
			t.Errorf("per=%v burst=%d: wait %v, want %v", tt.per, tt.burst, wait, tt.wantWait)
		}
		// A refusal takes nothing from the bucket: asking again at the same
		// instant reports the same wait.
		if ok, again := l.Allow("k"); ok || again != wait {
			t.Errorf("per=%v burst=%d: second refusal ok=%v wait %v, want false %v", tt.per, tt.burst, ok, again, wait)
		}
	}
}

func TestLimiterRefill(t *testing.T) {
	c := newClock()
	l := NewLimiter(10, 5, c.Now) // one request per 100ms
	for range 5 {
		if ok, _ := l.Allow("k"); !ok {
			t.Fatal("refused within the burst")
		}
	}
	ok, wait := l.Allow("k")
	if ok || wait != 100*time.Millisecond {
		t.Fatalf("empty bucket: ok=%v wait=%v, want false 100ms", ok, wait)
	}

	c.Advance(wait / 2)
	if ok, wait := l.Allow("k"); ok || wait != 50*time.Millisecond {
		t.Errorf("half way: ok=%v wait=%v, want false 50ms", ok, wait)
	}

	c.Advance(wait / 2)
	if ok, _ := l.Allow("k"); !ok {
		t.Error("refused after the announced wait")
	}
	if ok, _ := l.Allow("k"); ok {
		t.Error("allowed twice after one refill")
	}

	// Idle long enough, the bucket is full again but never above its burst.
	c.Advance(time.Hour)
	for i := range 5 {
		if ok, _ := l.Allow("k"); !ok {
			t.Fatalf("after an hour: request %d refused", i+1)
		}
	}
	if ok, _ := l.Allow("k"); ok {
		t.Error("the bucket held more than its burst after idling")
	}
}

func TestLimiterKeysAreIndependent(t *testing.T) {
	c := newClock()
	l := NewLimiter(1, 2, c.Now)
	for range 2 {
		if ok, _ := l.Allow("token:a"); !ok {
			t.Fatal("a refused within its burst")
		}
	}
	if ok, _ := l.Allow("token:a"); ok {
		t.Fatal("a allowed past its burst")
	}
	for i := range 2 {
		if ok, _ := l.Allow("token:b"); !ok {
			t.Errorf("b refused (request %d) because a is empty", i+1)
		}
	}
	if ok, _ := l.Allow("addr:10.0.0.1"); !ok {
		t.Error("a third key refused")
	}
	if ok, _ := l.Allow("token:a"); ok {
		t.Error("a refilled by other keys' requests")
	}
}

func TestLimiterConcurrent(t *testing.T) {
	c := newClock()
	l := NewLimiter(1, 50, c.Now)
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				if ok, _ := l.Allow("k"); ok {
					mu.Lock()
					allowed++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if allowed != 50 {
		t.Errorf("%d of 100 concurrent requests allowed, want exactly the burst of 50", allowed)
	}
}

func TestPrincipalReaches(t *testing.T) {
	user := &Principal{TokenID: "t1", UserID: "u1", UserName: "alice"}
	admin := &Principal{TokenID: "t2", UserID: "u2", UserName: "admin", Admin: true}
	sess := &Principal{TokenID: "t3", UserID: "u1", UserName: "alice", SessionID: "s1"}
	// A session token never reaches beyond its session, even if Admin were
	// set on it.
	adminSess := &Principal{TokenID: "t4", UserID: "u2", Admin: true, SessionID: "s9"}
	tests := []struct {
		name             string
		p                *Principal
		session, ownerID string
		want             bool
	}{
		{"user owns it", user, "s1", "u1", true},
		{"user's other session", user, "s2", "u1", true},
		{"user, another owner", user, "s3", "u9", false},
		{"admin, any owner", admin, "s3", "u9", true},
		{"admin, own", admin, "s4", "u2", true},
		{"session token, its session", sess, "s1", "u1", true},
		{"session token, same owner's other session", sess, "s2", "u1", false},
		{"session token, another owner", sess, "s3", "u9", false},
		{"admin's session token, its session", adminSess, "s9", "u2", true},
		{"admin's session token, other session", adminSess, "s3", "u9", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.Reaches(tt.session, tt.ownerID); got != tt.want {
				t.Errorf("Reaches(%q, %q) = %v, want %v", tt.session, tt.ownerID, got, tt.want)
			}
		})
	}
}

func TestPrincipalRequire(t *testing.T) {
	user := &Principal{TokenID: "t1", UserID: "u1"}
	admin := &Principal{TokenID: "t2", UserID: "u2", Admin: true}
	sess := &Principal{TokenID: "t3", UserID: "u1", SessionID: "s1"}
	adminSess := &Principal{TokenID: "t4", UserID: "u2", Admin: true, SessionID: "s9"}
	tests := []struct {
		name                 string
		p                    *Principal
		userTokenOK, adminOK bool
	}{
		{"user token", user, true, false},
		{"admin user token", admin, true, true},
		{"session token", sess, false, false},
		{"admin's session token", adminSess, false, false},
	}
	check := func(t *testing.T, what string, err error, wantOK bool, inMsg string) {
		t.Helper()
		if wantOK {
			if err != nil {
				t.Errorf("%s: %v, want nil", what, err)
			}
			return
		}
		if err == nil {
			t.Fatalf("%s: nil, want FORBIDDEN", what)
		}
		var f *fault.Error
		if !errors.As(err, &f) || f.Code != fault.Forbidden {
			t.Errorf("%s: %v (%T), want a fault with code FORBIDDEN", what, err, err)
		}
		if !strings.Contains(err.Error(), inMsg) {
			t.Errorf("%s: message %q does not say what was refused (%q)", what, err, inMsg)
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check(t, "RequireUserToken", tt.p.RequireUserToken("create sessions"), tt.userTokenOK, "create sessions")
			check(t, "RequireAdmin", tt.p.RequireAdmin("create users"), tt.adminOK, "create users")
			if got := tt.p.IsSessionToken(); got != (tt.p.SessionID != "") {
				t.Errorf("IsSessionToken = %v", got)
			}
		})
	}
}

// TestBindForgets: a binding goes away with its context, and Disconnect
// ends only the bindings of the tokens it names.
func TestBindForgets(t *testing.T) {
	db := dbtest.Open(t).Ent
	defer db.Close()
	n := 0
	s := NewService(db, rand.Reader, time.Now, func() string { n++; return fmt.Sprint("id", n) }, Options{})
	u, _, err := s.CreateUser(context.Background(), "u", false)
	if err != nil {
		t.Fatal(err)
	}
	tokA, err := db.Token.Query().Where(token.UserID(u.ID)).OnlyID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	pA := &Principal{TokenID: tokA, UserID: u.ID}

	ctx1, cancel1 := context.WithCancel(context.Background())
	b1, err := s.Bind(ctx1, pA)
	if err != nil {
		t.Fatal(err)
	}
	b2, err := s.Bind(context.Background(), pA)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.bound(); got != 2 {
		t.Fatalf("%d bound, want 2", got)
	}
	cancel1()
	<-b1.Done()
	testclient.Until(t, 5*time.Second, `s.bound() == 1`, func() bool { return s.bound() == 1 })
	s.Disconnect("some-other-token")
	if b2.Err() != nil {
		t.Fatal("Disconnect of another token ended this binding")
	}
	s.Disconnect(tokA)
	<-b2.Done()
	if !errors.Is(context.Cause(b2), ErrTokenGone) {
		t.Errorf("cause %v, want ErrTokenGone", context.Cause(b2))
	}
	testclient.Until(t, 5*time.Second, `s.bound() == 0`, func() bool { return s.bound() == 0 })

	// A revoked token cannot be bound.
	if err := s.Revoke(context.Background(), &Principal{UserID: u.ID, TokenID: tokA}, "unknown"); err == nil {
		t.Fatal("revoking an unknown token succeeded")
	}
	if _, err := db.Token.UpdateOneID(tokA).SetRevokedAt(time.Now()).Save(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Bind(context.Background(), pA); err == nil {
		t.Error("a revoked token was bound")
	}
	testclient.Until(t, 5*time.Second, `s.bound() == 0`, func() bool { return s.bound() == 0 })
}

// TestPrincipalIsTheTenant: the user of the principal in a context is the
// tenant the fair pools share their slots by; a failed authentication's
// context carries none.
func TestPrincipalIsTheTenant(t *testing.T) {
	cases := []struct {
		name string
		p    *Principal
		want string
	}{
		{"user token", &Principal{TokenID: "t1", UserID: "u1"}, "u1"},
		{"session token: its owner", &Principal{TokenID: "t2", UserID: "u2", SessionID: "s1"}, "u2"},
		{"no principal", nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := fairpool.Tenant(WithPrincipal(context.Background(), c.p)); got != c.want {
				t.Errorf("tenant %q, want %q", got, c.want)
			}
		})
	}
}

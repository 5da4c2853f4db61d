package media

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/netguard/netguardtest"
)

// newTestLoader builds a Loader that, besides what opts allow, treats the
// given addresses as public: how a test puts a "public" server on loopback.
func newTestLoader(opts LoaderOptions, public ...netip.AddrPort) *Loader {
	return newLoader(opts, public)
}

func wantFault(t *testing.T, err error, code fault.Code, field string, parts ...string) {
	t.Helper()
	f := fault.From(err)
	if f == nil {
		t.Fatalf("error %v (%T) is not classified; want %s", err, err, code)
	}
	if f.Code != code || f.Field != field {
		t.Fatalf("error %q is %s on field %q; want %s on %q", f.Message, f.Code, f.Field, code, field)
	}
	for _, p := range parts {
		if !strings.Contains(f.Message, p) {
			t.Errorf("message %q does not contain %q", f.Message, p)
		}
	}
}

const refusedTail = "; private addresses are refused unless --allow-private-urls"

func TestLoadRefusesNonPublicDestinations(t *testing.T) {
	trap := netguardtest.NewServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "secret") })
	port := trap.Port(t)
	trapAddr := trap.AddrPort(t).Addr()
	resolver := netguardtest.Resolver{
		"evil.example": {netip.MustParseAddr("127.0.0.1")},
		// One public-looking answer does not save a name with a private one.
		"mixed.example": {netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("10.1.2.3")},
		"lan.example":   {netip.MustParseAddr("192.168.1.10")},
		"v6.example":    {netip.MustParseAddr("fd12::1")},
	}
	cases := []struct {
		name   string
		source string
		want   string
	}{
		{"loopback literal", "http://127.0.0.1:" + port + "/x", "source URL resolves to 127.0.0.1, a loopback address" + refusedTail},
		{"ipv6 loopback", "http://[::1]:" + port + "/", "resolves to ::1, a loopback address" + refusedTail},
		{"metadata address", "http://169.254.169.254/latest/meta-data/", "resolves to 169.254.169.254, the cloud metadata address"},
		{"private 10/8", "http://10.0.0.1/", "resolves to 10.0.0.1, a private address"},
		{"private 172.16/12", "https://172.20.0.5/", "resolves to 172.20.0.5, a private address"},
		{"link-local", "http://169.254.10.1/", "169.254.10.1, a link-local address"},
		{"ipv6 link-local", "http://[fe80::1]/", "fe80::1, a link-local address"},
		{"unique local v6", "http://v6.example/", "host v6.example resolves to fd12::1, a private address"},
		{"cgnat", "http://100.64.0.1/", "100.64.0.1, a carrier-grade NAT address"},
		{"unspecified", "http://0.0.0.0:" + port + "/", "0.0.0.0, an unspecified address"},
		{"multicast", "http://224.0.0.1/", "224.0.0.1, a multicast address"},
		{"ipv4-mapped loopback", "http://[::ffff:127.0.0.1]:" + port + "/", "::ffff:127.0.0.1, a loopback address"},
		{"ipv4-mapped metadata", "http://[::ffff:169.254.169.254]/", "the cloud metadata address"},
		{"nat64 loopback", "http://[64:ff9b::7f00:1]:" + port + "/", "64:ff9b::7f00:1, a loopback address"},
		{"name resolving to loopback", "http://evil.example:" + port + "/", "source URL host evil.example resolves to 127.0.0.1, a loopback address" + refusedTail},
		{"name with one private answer", "http://mixed.example/", "host mixed.example resolves to 10.1.2.3, a private address"},
		{"name resolving to LAN", "http://lan.example/", "192.168.1.10, a private address"},
		{"metadata name", "http://metadata.google.internal/computeMetadata/v1/", "host metadata.google.internal is a cloud metadata name" + refusedTail},
		{"localhost", "http://localhost:" + port + "/", "host localhost is a loopback name"},
		{"localhost subdomain", "http://a.localhost:" + port + "/", "host a.localhost is a loopback name"},
		{"localhost with trailing dot", "http://localhost.:" + port + "/", "host localhost. is a loopback name"},
		// Numeric forms a C resolver reads as addresses are dialled as the
		// address they stand for, and judged by it.
		{"decimal", "http://2130706433:" + port + "/", "source URL host 2130706433 stands for 127.0.0.1, a loopback address" + refusedTail},
		{"hex", "http://0x7f000001:" + port + "/", "host 0x7f000001 stands for 127.0.0.1, a loopback address"},
		{"octal", "http://0177.0.0.1:" + port + "/", "host 0177.0.0.1 stands for 127.0.0.1, a loopback address"},
		{"shorthand", "http://127.1:" + port + "/", "host 127.1 stands for 127.0.0.1, a loopback address"},
		{"trailing dot address", "http://127.0.0.1.:" + port + "/", "host 127.0.0.1. stands for 127.0.0.1, a loopback address"},
		{"name spelling loopback", "http://127.0.0.1.nip.io:" + port + "/", "host 127.0.0.1.nip.io stands for 127.0.0.1, a loopback address"},
		{"dashed name spelling private", "http://app-10-0-0-1.sslip.io/", "host app-10-0-0-1.sslip.io stands for 10.0.0.1, a private address"},
	}
	l := NewLoader(LoaderOptions{Resolver: resolver, Timeout: 5 * time.Second})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := l.Load(t.Context(), "source", c.source)
			wantFault(t, err, fault.Invalid, "source", c.want)
		})
	}
	if n := trap.Hits(); n != 0 {
		t.Fatalf("the loopback server (%s) was reached %d times", trapAddr, n)
	}
}

func TestLoadRedirects(t *testing.T) {
	trap := netguardtest.NewServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "secret") })
	trapPort := trap.Port(t)
	public := netguardtest.NewServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case p == "/ok":
			fmt.Fprint(w, "hello")
		case p == "/to-loopback":
			http.Redirect(w, r, "http://127.0.0.1:"+trapPort+"/", http.StatusFound)
		case p == "/to-evil":
			http.Redirect(w, r, "http://evil.example:"+trapPort+"/", http.StatusMovedPermanently)
		case p == "/to-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusTemporaryRedirect)
		case p == "/to-ftp":
			http.Redirect(w, r, "ftp://public.example/file", http.StatusFound)
		case p == "/to-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case strings.HasPrefix(p, "/hops/"):
			n, _ := strconv.Atoi(strings.TrimPrefix(p, "/hops/"))
			if n == 0 {
				fmt.Fprint(w, "arrived")
				return
			}
			http.Redirect(w, r, "/hops/"+strconv.Itoa(n-1), http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	})
	base := "http://public.example:" + public.Port(t)
	resolver := netguardtest.Resolver{
		"public.example": {public.AddrPort(t).Addr()},
		"evil.example":   {netip.MustParseAddr("127.0.0.1")},
	}
	l := newTestLoader(LoaderOptions{Resolver: resolver, Timeout: 5 * time.Second}, public.AddrPort(t))

	ok := []struct{ path, want string }{
		{"/ok", "hello"},
		{"/hops/5", "arrived"}, // five redirects are followed
	}
	for _, c := range ok {
		data, err := l.Load(t.Context(), "source", base+c.path)
		if err != nil || string(data) != c.want {
			t.Fatalf("%s: got %q, %v; want %q", c.path, data, err, c.want)
		}
	}
	refused := []struct{ path, want string }{
		{"/to-loopback", "resolves to 127.0.0.1, a loopback address" + refusedTail},
		{"/to-evil", "host evil.example resolves to 127.0.0.1, a loopback address"},
		{"/to-metadata", "169.254.169.254, the cloud metadata address"},
		{"/to-ftp", "source URL redirected to a URL of scheme ftp; only http and https are followed"},
		{"/to-file", "redirected to a URL of scheme file"},
		{"/hops/6", "source URL redirected more than 5 times"},
	}
	for _, c := range refused {
		t.Run(c.path, func(t *testing.T) {
			_, err := l.Load(t.Context(), "source", base+c.path)
			wantFault(t, err, fault.Invalid, "source", c.want)
		})
	}
	if n := trap.Hits(); n != 0 {
		t.Fatalf("a redirect reached the loopback server %d times", n)
	}
}

// recordingResolver is a netguardtest.Resolver that remembers the names it was asked.
type recordingResolver struct {
	netguardtest.Resolver
	mu    sync.Mutex
	asked []string
}

func (r *recordingResolver) LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error) {
	r.mu.Lock()
	r.asked = append(r.asked, host)
	r.mu.Unlock()
	return r.Resolver.LookupIPAddr(ctx, host)
}

// TestLoadNumericHostsAreAddresses: a host in a numeric notation is dialled
// as the address it stands for and never asked of the resolver, which might
// read it differently (here: as a name of a public server). Refused without
// --allow-private-urls, it reaches the loopback server with it.
func TestLoadNumericHostsAreAddresses(t *testing.T) {
	local := netguardtest.NewServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "loopback") })
	decoy := netguardtest.NewServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "decoy") })
	port := local.Port(t)
	hosts := []string{"2130706433", "0x7f000001", "0x7f.1", "0177.0.0.1", "127.1", "127.0.0.1."}
	r := &recordingResolver{Resolver: netguardtest.Resolver{}}
	for _, h := range hosts {
		r.Resolver[h] = []netip.Addr{decoy.AddrPort(t).Addr()}
	}
	strict := newTestLoader(LoaderOptions{Resolver: r, Timeout: 5 * time.Second}, decoy.AddrPort(t))
	open := NewLoader(LoaderOptions{AllowPrivate: true, Resolver: r, Timeout: 5 * time.Second})
	for _, h := range hosts {
		t.Run(h, func(t *testing.T) {
			source := "http://" + h + ":" + port + "/"
			_, err := strict.Load(t.Context(), "source", source)
			wantFault(t, err, fault.Invalid, "source", "source URL host "+h+" stands for 127.0.0.1, a loopback address"+refusedTail)
			data, err := open.Load(t.Context(), "source", source)
			if err != nil || string(data) != "loopback" {
				t.Fatalf("with AllowPrivate: got %q, %v; want the loopback server", data, err)
			}
		})
	}
	if r.asked != nil || decoy.Hits() != 0 {
		t.Fatalf("the resolver was asked %q and the decoy reached %d times; numeric hosts are addresses", r.asked, decoy.Hits())
	}
	if n := local.Hits(); n != int64(len(hosts)) {
		t.Fatalf("the loopback server was reached %d times, want %d (only with AllowPrivate)", n, len(hosts))
	}
}

func TestLoadAllowPrivate(t *testing.T) {
	srv := netguardtest.NewServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "local media") })
	for _, host := range []string{"127.0.0.1", "evil.example"} {
		l := NewLoader(LoaderOptions{AllowPrivate: true, Resolver: netguardtest.Resolver{"evil.example": {netip.MustParseAddr("127.0.0.1")}}})
		data, err := l.Load(t.Context(), "source", "http://"+host+":"+srv.Port(t)+"/")
		if err != nil || string(data) != "local media" {
			t.Fatalf("%s with AllowPrivate: got %q, %v", host, data, err)
		}
	}
}

func TestLoadFetchFailures(t *testing.T) {
	const limit = 1 << 10
	var srv *netguardtest.Server
	srv = netguardtest.NewServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/exact":
			w.Write(make([]byte, limit))
		case "/declared-over":
			// Declares more than the cap, sends a little, then hangs: a
			// client that read the body instead of trusting the header
			// would wait for the timeout and report that instead.
			w.Header().Set("Content-Length", strconv.Itoa(limit+1))
			w.Write([]byte("abc"))
			w.(http.Flusher).Flush()
			srv.Hang(r)
		case "/streamed-over":
			for range 8 {
				w.Write(make([]byte, 256)) // chunked: no Content-Length
				w.(http.Flusher).Flush()
			}
		case "/hang":
			srv.Hang(r)
		case "/gone":
			http.Error(w, "custom words", http.StatusGone)
		default:
			http.NotFound(w, r)
		}
	})
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := netip.MustParseAddrPort(closed.Addr().String())
	closed.Close()

	resolver := netguardtest.Resolver{"public.example": {srv.AddrPort(t).Addr()}, "closed.example": {closedAddr.Addr()}}
	base := "http://public.example:" + srv.Port(t)
	cases := []struct {
		name, source string
		timeout      time.Duration
		code         fault.Code
		want         string
	}{
		{"content-length over the cap", base + "/declared-over", 10 * time.Second, fault.TooLarge, "source is larger than the 1 KiB limit (--max-body)"},
		{"streamed body over the cap", base + "/streamed-over", 10 * time.Second, fault.TooLarge, "source is larger than the 1 KiB limit (--max-body)"},
		{"not found", base + "/missing", 10 * time.Second, fault.Invalid, "source URL answered 404 Not Found"},
		{"remote reason phrase not echoed", base + "/gone", 10 * time.Second, fault.Invalid, "source URL answered 410 Gone"},
		{"timeout", base + "/hang", 300 * time.Millisecond, fault.Invalid, "source URL could not be fetched: no complete answer within 300ms"},
		{"connection refused", "http://closed.example:" + strconv.Itoa(int(closedAddr.Port())) + "/", 10 * time.Second, fault.Invalid, "source URL could not be fetched: connection refused"},
		{"unknown host", "http://nowhere.example/", 10 * time.Second, fault.Invalid, "source URL could not be fetched: host nowhere.example not found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := newTestLoader(LoaderOptions{MaxBytes: limit, Timeout: c.timeout, Resolver: resolver}, srv.AddrPort(t), closedAddr)
			_, err := l.Load(t.Context(), "input.source", c.source)
			field := "" // a TooLarge fault names no field
			if c.code == fault.Invalid {
				field = "input.source"
			}
			wantFault(t, err, c.code, field, c.want)
		})
	}
	l := newTestLoader(LoaderOptions{MaxBytes: limit, Resolver: resolver}, srv.AddrPort(t))
	data, err := l.Load(t.Context(), "source", base+"/exact")
	if err != nil || len(data) != limit {
		t.Fatalf("body of exactly the cap: %d bytes, %v", len(data), err)
	}
}

func TestLoadIgnoresProxyEnvironment(t *testing.T) {
	proxy := netguardtest.NewServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "from proxy") })
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("http_proxy", proxy.URL)
	t.Setenv("HTTPS_PROXY", proxy.URL)
	srv := netguardtest.NewServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "direct") })
	l := newTestLoader(LoaderOptions{Resolver: netguardtest.Resolver{"public.example": {srv.AddrPort(t).Addr()}}}, srv.AddrPort(t))
	data, err := l.Load(t.Context(), "source", "http://public.example:"+srv.Port(t)+"/")
	if err != nil || string(data) != "direct" || proxy.Hits() != 0 {
		t.Fatalf("got %q, %v, proxy hits %d; want a direct fetch", data, err, proxy.Hits())
	}
}

func TestLoadBase64(t *testing.T) {
	payload := []byte{0xfb, 0xff, 0xbf, 'w', 'a', 0x00, 0xfe, 0x3f, 0x01, 0x02}
	std := base64.StdEncoding.EncodeToString(payload)
	url := base64.URLEncoding.EncodeToString(payload)
	if !strings.ContainsAny(std, "+/") || !strings.ContainsAny(url, "-_") || !strings.HasSuffix(std, "=") {
		t.Fatalf("payload does not exercise both alphabets and padding: %s %s", std, url)
	}
	spaced := ""
	for i := 0; i < len(std); i += 4 {
		spaced += std[i:min(i+4, len(std))] + "\r\n \t"
	}
	good := []struct{ name, source string }{
		{"standard padded", std},
		{"standard unpadded", strings.TrimRight(std, "=")},
		{"url padded", url},
		{"url unpadded", strings.TrimRight(url, "=")},
		{"whitespace inside and around", "  \n" + spaced + "\n"},
		{"data URI", "data:image/png;base64," + std},
		{"data URI upper case", "DATA:image/png;BASE64," + url},
		{"data URI without type", "data:;base64," + strings.TrimRight(url, "=")},
		{"data URI with parameters and whitespace", "data:image/png;name=a.png;base64,\n" + spaced},
	}
	l := NewLoader(LoaderOptions{MaxBytes: 64})
	for _, c := range good {
		t.Run(c.name, func(t *testing.T) {
			data, err := l.Load(t.Context(), "source", c.source)
			if err != nil || string(data) != string(payload) {
				t.Fatalf("got %x, %v; want %x", data, err, payload)
			}
		})
	}
	bad := []struct{ name, source string }{
		{"empty", ""},
		{"blank", " \n\t"},
		{"not base64", "!!!!"},
		{"one character", "a"},
		{"both alphabets", "ab+c-def"},
		{"other URL scheme", "ftp://example.com/a.png"},
		{"data URI not base64", "data:text/plain,hello"},
		{"empty data URI", "data:image/png;base64,"},
		{"only padding", "===="},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := l.Load(t.Context(), "input.source", c.source)
			wantFault(t, err, fault.Invalid, "input.source", "source must be an http(s) URL or base64 data")
		})
	}
	_, err := l.Load(t.Context(), "source", base64.StdEncoding.EncodeToString(make([]byte, 65)))
	wantFault(t, err, fault.TooLarge, "", "source is larger than the 64 bytes limit (--max-body)")
	if _, err := l.Load(t.Context(), "source", base64.StdEncoding.EncodeToString(make([]byte, 64))); err != nil {
		t.Fatalf("exactly the cap: %v", err)
	}
}

func TestSizeOver(t *testing.T) {
	if got := sizeOver(16<<20 + 1); got != "16.1 MiB" {
		t.Errorf("sizeOver(16 MiB + 1) = %q", got)
	}
}

package sessionsettings

import (
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/fault"
)

func TestParseRate(t *testing.T) {
	for _, tc := range []struct {
		in    string
		every time.Duration
		err   string // a part of the error; "" for none
	}{
		{"2/s", 500 * time.Millisecond, ""},
		{"30/m", 2 * time.Second, ""},
		{"1/h", time.Hour, ""},
		{"1000/s", time.Millisecond, ""},
		{"1001/s", 0, "at most one send per 1ms"},
		{"0/s", 0, "at least 1 send"},
		{"2/d", 0, `"<n>/s", "<n>/m" or "<n>/h"`},
		{"2 / s", 0, `"<n>/s"`},
		{"-1/s", 0, `"<n>/s"`},
		{"1.5/s", 0, `"<n>/s"`},
		{"", 0, `"<n>/s"`},
		{"9999999999/h", 0, `"<n>/s"`},
	} {
		r, err := ParseRate("sendRate", tc.in)
		if tc.err == "" {
			if err != nil {
				t.Errorf("%q: %v", tc.in, err)
				continue
			}
			if r.Interval() != tc.every || r.String() != tc.in {
				t.Errorf("%q: every %s shown %q, want %s and as given", tc.in, r.Interval(), r.String(), tc.every)
			}
			continue
		}
		f := fault.From(err)
		if f == nil || f.Code != fault.Invalid || f.Field != "sendRate" || !strings.Contains(f.Message, tc.err) {
			t.Errorf("%q: %v, want BAD_USER_INPUT on sendRate saying %q", tc.in, err, tc.err)
		}
	}
}

func TestParseJitter(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"0s", 0, true}, {"500ms", 500 * time.Millisecond, true}, {"1m", time.Minute, true},
		{"61s", 0, false}, {"-1s", 0, false}, {"soon", 0, false}, {"5", 0, false},
	} {
		d, err := ParseJitter("sendJitter", tc.in)
		if tc.ok != (err == nil) || d != tc.want {
			t.Errorf("%q: %s, %v", tc.in, d, err)
		}
		if err != nil && fault.From(err).Field != "sendJitter" {
			t.Errorf("%q: error names %q", tc.in, fault.From(err).Field)
		}
	}
}

func TestParseProxy(t *testing.T) {
	for _, tc := range []struct {
		in, shown string
		err       string
	}{
		{"socks5://127.0.0.1:1080", "socks5://127.0.0.1:1080", ""},
		{"socks5://bob:s3cret@proxy.example:1080", "socks5://bob:***@proxy.example:1080", ""},
		{"http://bob:p%40ss@proxy.example:3128/", "http://bob:***@proxy.example:3128", ""},
		{"https://proxy.example:443", "https://proxy.example:443", ""},
		{"socks5://bob@proxy.example:1080", "socks5://bob@proxy.example:1080", ""},
		{"ftp://proxy.example:21", "", "socks5://, http:// or https://"},
		{"socks5://proxy.example", "", "host and a port"},
		{"socks5://proxy.example:0", "", "port from 1 to 65535"},
		{"socks5://proxy.example:1080/x", "", "end at the port"},
		{"socks5://:pw@proxy.example:1080", "", "name a user"},
		{"proxy.example:1080", "", "must be a URL"},
	} {
		u, err := ParseProxy("proxy", tc.in)
		if tc.err == "" {
			if err != nil {
				t.Errorf("%q: %v", tc.in, err)
			} else if got := RedactProxy(u); got != tc.shown {
				t.Errorf("%q shown as %q, want %q", tc.in, got, tc.shown)
			}
			continue
		}
		f := fault.From(err)
		if f == nil || f.Field != "proxy" || !strings.Contains(f.Message, tc.err) {
			t.Errorf("%q: %v, want an error on proxy saying %q", tc.in, err, tc.err)
		}
		if f != nil && strings.Contains(f.Message, "pw") {
			t.Errorf("%q: the error repeats the password: %s", tc.in, f.Message)
		}
	}
}

func TestTypingTime(t *testing.T) {
	if a, b := TypingTime(5), TypingTime(50); !(a < b) {
		t.Errorf("typing grows with the text: %s for 5, %s for 50", a, b)
	}
	if d := TypingTime(100000); d != MaxTyping {
		t.Errorf("a long text is typed %s, want the cap %s", d, MaxTyping)
	}
}

package netguard

import (
	"errors"
	"net/netip"
	"testing"
)

// TestCheckHost is the save-time view of the rules: every host a URL may
// carry, judged without DNS.
func TestCheckHost(t *testing.T) {
	tests := []struct {
		host string
		want string // the refusal's text; "" for a host that passes
	}{
		// Public addresses and names pass.
		{"93.184.216.34", ""},
		{"8.8.8.8", ""},
		{"example.com", ""},
		{"EXAMPLE.com.", ""},
		{"[2001:4860::8888]", ""},
		{"2001:4860::8888", ""},
		{"::ffff:8.8.8.8", ""},
		{"64:ff9b::808:808", ""},   // NAT64 of 8.8.8.8
		{"2002:808:808::1", ""},    // 6to4 of 8.8.8.8
		{"134744072", ""},          // 8.8.8.8 in decimal
		{"0x08080808", ""},         // 8.8.8.8 in hex
		{"8.8.8.8.nip.io", ""},     // spells a public address
		{"1-1-1-1.sslip.io", ""},   // likewise
		{"v1.2.3.example.com", ""}, // three numbers are no address
		{"2024-10-0-1.example.com", ""},
		{"api-v2.example.com", ""},
		{"bücher.example", ""},
		{"100.128.0.1", ""},
		{"172.32.0.1", ""},

		// Standard notation.
		{"127.0.0.1", "127.0.0.1 is a loopback address"},
		{"127.0.0.2", "127.0.0.2 is a loopback address"},
		{"::1", "::1 is a loopback address"},
		{"[::1]", "::1 is a loopback address"},
		{"0.0.0.0", "0.0.0.0 is an unspecified address"},
		{"0.1.2.3", "0.1.2.3 is an unspecified address"},
		{"::", ":: is an unspecified address"},
		{"10.0.0.1", "10.0.0.1 is a private address"},
		{"172.16.5.4", "172.16.5.4 is a private address"},
		{"192.168.1.1", "192.168.1.1 is a private address"},
		{"fd12::1", "fd12::1 is a private address"},
		{"fec0::1", "fec0::1 is a private address"},
		{"169.254.10.1", "169.254.10.1 is a link-local address"},
		{"fe80::1%eth0", "fe80::1%eth0 is a link-local address"},
		{"169.254.169.254", "169.254.169.254 is the cloud metadata address"},
		{"fd00:ec2::254", "fd00:ec2::254 is the cloud metadata address"},
		{"100.64.0.1", "100.64.0.1 is a carrier-grade NAT address"},
		{"100.127.255.255", "100.127.255.255 is a carrier-grade NAT address"},
		{"224.0.0.1", "224.0.0.1 is a multicast address"},
		{"ff02::1", "ff02::1 is a multicast address"},
		{"255.255.255.255", "255.255.255.255 is a reserved address"},
		{"240.0.0.1", "240.0.0.1 is a reserved address"},
		{"198.18.0.1", "198.18.0.1 is a reserved address"},
		{"192.0.0.8", "192.0.0.8 is a reserved address"},

		// IPv6 forms that carry an IPv4 address are judged by it.
		{"::ffff:127.0.0.1", "::ffff:127.0.0.1 is a loopback address"},
		{"[::ffff:7f00:1]", "::ffff:127.0.0.1 is a loopback address"},
		{"::ffff:169.254.169.254", "::ffff:169.254.169.254 is the cloud metadata address"},
		{"::ffff:10.0.0.1", "::ffff:10.0.0.1 is a private address"},
		{"64:ff9b::7f00:1", "64:ff9b::7f00:1 is a loopback address"}, // NAT64
		{"64:ff9b::a9fe:a9fe", "64:ff9b::a9fe:a9fe is the cloud metadata address"},
		{"64:ff9b:1::a00:1", "64:ff9b:1::a00:1 is a private address"},                                          // local-use NAT64
		{"2002:7f00:1::1", "2002:7f00:1::1 is a loopback address"},                                             // 6to4
		{"2002:a9fe:a9fe::", "2002:a9fe:a9fe:: is the cloud metadata address"},                                 // 6to4
		{"2001:0:4136:e378:8000:63bf:80ff:fffe", "2001:0:4136:e378:8000:63bf:80ff:fffe is a loopback address"}, // Teredo, client 127.0.0.1
		{"::7f00:1", "::7f00:1 is a reserved address"},                                                         // IPv4-compatible, deprecated

		// The notations inet_aton accepts stand for the address they spell.
		{"127.1", "host 127.1 stands for 127.0.0.1, a loopback address"},
		{"10.1.2", "host 10.1.2 stands for 10.1.0.2, a private address"},
		{"2130706433", "host 2130706433 stands for 127.0.0.1, a loopback address"},
		{"0177.0.0.1", "host 0177.0.0.1 stands for 127.0.0.1, a loopback address"},
		{"0x7f000001", "host 0x7f000001 stands for 127.0.0.1, a loopback address"},
		{"0X7F000001", "host 0X7F000001 stands for 127.0.0.1, a loopback address"},
		{"0x7f.1", "host 0x7f.1 stands for 127.0.0.1, a loopback address"},
		{"0x7f.0.0.0x1", "host 0x7f.0.0.0x1 stands for 127.0.0.1, a loopback address"},
		{"012.0.0.1", "host 012.0.0.1 stands for 10.0.0.1, a private address"},
		{"0xa9fea9fe", "host 0xa9fea9fe stands for 169.254.169.254, the cloud metadata address"},
		{"0", "host 0 stands for 0.0.0.0, an unspecified address"},
		{"127.0.0.1.", "host 127.0.0.1. stands for 127.0.0.1, a loopback address"},
		{"2130706433.", "host 2130706433. stands for 127.0.0.1, a loopback address"},
		{"１２７.０.０.１", "host １２７.０.０.１ stands for 127.0.0.1, a loopback address"}, // fullwidth: the HTTP client dials its IDNA form
		// Not addresses in any notation: names, left to DNS and the dialer.
		{"256.0.0.1", ""},
		{"4294967296", ""},
		{"0x100000000", ""},
		{"09.0.0.1", ""},

		// Names of this machine and of metadata services.
		{"localhost", "host localhost is a loopback name"},
		{"LocalHost", "host LocalHost is a loopback name"},
		{"localhost.", "host localhost. is a loopback name"},
		{"a.localhost", "host a.localhost is a loopback name"},
		{"a.b.localhost.", "host a.b.localhost. is a loopback name"},
		{"localhost.localdomain", "host localhost.localdomain is a loopback name"},
		{"ip6-localhost", "host ip6-localhost is a loopback name"},
		{"metadata.google.internal", "host metadata.google.internal is a cloud metadata name"},
		{"metadata.google.internal.", "host metadata.google.internal. is a cloud metadata name"},
		{"metadata", "host metadata is a cloud metadata name"},
		{"instance-data.ec2.internal", "host instance-data.ec2.internal is a cloud metadata name"},

		// Names whose labels spell a non-public address.
		{"127.0.0.1.nip.io", "host 127.0.0.1.nip.io stands for 127.0.0.1, a loopback address"},
		{"app.10.0.0.1.nip.io", "host app.10.0.0.1.nip.io stands for 10.0.0.1, a private address"},
		{"127-0-0-1.sslip.io", "host 127-0-0-1.sslip.io stands for 127.0.0.1, a loopback address"},
		{"www-192-168-0-1.sslip.io", "host www-192-168-0-1.sslip.io stands for 192.168.0.1, a private address"},
		{"169-254-169-254.nip.io", "host 169-254-169-254.nip.io stands for 169.254.169.254, the cloud metadata address"},
		{"100.64.0.1.example.com", "host 100.64.0.1.example.com stands for 100.64.0.1, a carrier-grade NAT address"},
		{"--1.sslip.io", "host --1.sslip.io stands for ::1, a loopback address"},
		{"fe80--1.sslip.io", "host fe80--1.sslip.io stands for fe80::1, a link-local address"},
		{"127.0.0.1.2", "host 127.0.0.1.2 stands for 127.0.0.1, a loopback address"},
		{"8.8.8.8.10.0.0.1.nip.io", "host 8.8.8.8.10.0.0.1.nip.io stands for 10.0.0.1, a private address"}, // any spelled address counts
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			err := CheckHost(tt.host)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("CheckHost(%q) = %v; want it to pass", tt.host, err)
				}
				return
			}
			var refused *RefusedError
			if !errors.As(err, &refused) {
				t.Fatalf("CheckHost(%q) = %v; want a refusal %q", tt.host, err, tt.want)
			}
			if refused.Error() != tt.want {
				t.Fatalf("CheckHost(%q) = %q; want %q", tt.host, refused.Error(), tt.want)
			}
			if refused.Resolved {
				t.Errorf("CheckHost(%q) claims a DNS answer", tt.host)
			}
		})
	}
}

func TestParseNumericIPv4(t *testing.T) {
	tests := map[string]string{ // "" for no address
		"1":              "0.0.0.1",
		"1.2":            "1.0.0.2",
		"1.2.3":          "1.2.0.3",
		"1.2.3.4":        "1.2.3.4",
		"1.16777215":     "1.255.255.255",
		"1.16777216":     "",
		"1.2.65535":      "1.2.255.255",
		"1.2.65536":      "",
		"1.2.3.256":      "",
		"256.1":          "",
		"4294967295":     "255.255.255.255",
		"0xffffffff":     "255.255.255.255",
		"037777777777":   "255.255.255.255",
		"0x":             "0.0.0.0",
		"0x1g":           "",
		"09":             "",
		"1..2":           "",
		"1.2.3.4.5":      "",
		"":               "",
		"+1":             "",
		"-1":             "",
		"1_000":          "",
		"example":        "",
		"0x7f.0x0.0.01":  "127.0.0.1",
		"0300.0250.1.1":  "192.168.1.1",
		"3232235777":     "192.168.1.1",
		"0xc0a80101":     "192.168.1.1",
		"192.168.257":    "192.168.1.1",
		"192.11010305":   "192.168.1.1",
		"0x0000000001.1": "1.0.0.1",
	}
	for in, want := range tests {
		a, ok := parseNumericIPv4(in)
		got := ""
		if ok {
			got = a.String()
		}
		if got != want {
			t.Errorf("parseNumericIPv4(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestAddrClass(t *testing.T) {
	public := []string{"93.184.215.14", "8.8.8.8", "2606:4700::1111", "100.128.0.1", "172.32.0.1",
		"::ffff:8.8.8.8", "2002:0808:0808::1", "2001:4860::8888", "64:ff9b::808:808"}
	for _, s := range public {
		if c := AddrClass(netip.MustParseAddr(s)); c != "" {
			t.Errorf("%s classed %q, want public", s, c)
		}
	}
	private := map[string]string{
		"127.0.0.2":         "a loopback address",
		"::":                "an unspecified address",
		"0.1.2.3":           "an unspecified address",
		"fc00::1":           "a private address",
		"fd00:ec2::254":     "the cloud metadata address",
		"ff02::1":           "a multicast address",
		"255.255.255.255":   "a reserved address",
		"2002:7f00:0001::1": "a loopback address", // 6to4 of 127.0.0.1
		"fe80::1%eth0":      "a link-local address",
		"100.127.255.255":   "a carrier-grade NAT address",
	}
	for s, want := range private {
		if c := AddrClass(netip.MustParseAddr(s)); c != want {
			t.Errorf("%s classed %q, want %q", s, c, want)
		}
	}
}

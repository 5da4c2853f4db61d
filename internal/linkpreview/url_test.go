package linkpreview

import "testing"

func TestFirstURL(t *testing.T) {
	cases := []struct {
		name, text, want string
	}{
		{"plain", "see https://example.com/a?b=c", "https://example.com/a?b=c"},
		{"http", "http://example.com", "http://example.com"},
		{"sentence stop", "Look at https://example.com/page.", "https://example.com/page"},
		{"comma", "https://example.com/x, and more", "https://example.com/x"},
		{"exclamation and question", "wow https://example.com/!?!", "https://example.com/"},
		{"ellipsis", "https://example.com/a...", "https://example.com/a"},
		{"quoted", `he said "https://example.com/q" twice`, "https://example.com/q"},
		{"single quoted", "'https://example.com/q'", "https://example.com/q"},
		{"in parentheses", "(see https://example.com/a)", "https://example.com/a"},
		{"balanced parentheses", "https://en.wikipedia.org/wiki/Go_(programming_language)", "https://en.wikipedia.org/wiki/Go_(programming_language)"},
		{"balanced inside unbalanced", "(https://en.wikipedia.org/wiki/Go_(programming_language)).", "https://en.wikipedia.org/wiki/Go_(programming_language)"},
		{"brackets", "[https://example.com/a]", "https://example.com/a"},
		{"whatsapp bold", "*https://example.com/a*", "https://example.com/a"},
		{"angle brackets", "<https://example.com/a>", "https://example.com/a"},
		{"uppercase scheme", "HTTPS://EXAMPLE.COM/Path", "HTTPS://EXAMPLE.COM/Path"},
		{"mixed case scheme", "Http://example.com", "Http://example.com"},
		{"two URLs", "https://first.example/1 and https://second.example/2", "https://first.example/1"},
		{"first is hostless", "http:// then https://real.example", "https://real.example"},
		{"port and fragment", "go to https://example.com:8443/x#frag now", "https://example.com:8443/x#frag"},
		{"ipv6", "http://[2001:db8::1]:80/x", "http://[2001:db8::1]:80/x"},
		{"unicode host", "https://bücher.example/straße", "https://bücher.example/straße"},
		{"unicode before", "Ünïcödé https://example.com", "https://example.com"},
		{"newline ends", "https://example.com/a\nnext line", "https://example.com/a"},
		{"after colon", "link:https://example.com", "https://example.com"},
		{"glued to a word", "xhttps://example.com https://ok.example", "https://ok.example"},
		{"no scheme", "example.com and www.example.com", ""},
		{"ftp", "ftp://example.com/file", ""},
		{"other scheme", "mailto:someone@example.com javascript:alert(1)", ""},
		{"scheme only", "https://", ""},
		{"no host", "https:///path", ""},
		{"empty", "", ""},
		{"bad host", "https://exa mple.com", "https://exa"},
		{"dotted nothing", "http://./", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := FirstURL(c.text)
			if got != c.want || ok != (c.want != "") {
				t.Fatalf("FirstURL(%q) = %q, %v; want %q", c.text, got, ok, c.want)
			}
		})
	}
}

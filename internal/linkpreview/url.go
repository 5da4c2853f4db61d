package linkpreview

import (
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// FirstURL returns the first http:// or https:// URL in text as WhatsApp
// matches it: the scheme in any case, starting a word, running to the next
// space or character no URL holds, without the punctuation that ends the
// sentence around it (a closing bracket stays when it closes one opened
// inside the URL, as in Wikipedia's Go_(programming_language)). A candidate
// without a host is skipped for the next one.
func FirstURL(text string) (matched string, ok bool) {
	lower := asciiLower(text)
	for i := 0; i < len(text); {
		start := schemeAt(text, lower, i)
		if start < 0 {
			return "", false
		}
		end := start
		for end < len(text) {
			r, size := utf8.DecodeRuneInString(text[end:])
			if endsURL(r) {
				break
			}
			end += size
		}
		candidate := trimTrailing(text[start:end])
		if hasHost(candidate) {
			return candidate, true
		}
		i = start + 1
	}
	return "", false
}

// schemeAt returns where the first "http://" or "https://" at or after from
// begins a word, or -1; lower is text folded by asciiLower. A scheme glued
// to a preceding letter or digit ("xhttp://") is part of another word, not a
// link.
func schemeAt(text, lower string, from int) int {
	for i := from; i < len(text); {
		j := strings.Index(lower[i:], "http")
		if j < 0 {
			return -1
		}
		j += i
		rest := lower[j+4:]
		if strings.HasPrefix(rest, "://") || strings.HasPrefix(rest, "s://") {
			prev, _ := utf8.DecodeLastRuneInString(text[:j])
			if j == 0 || !(unicode.IsLetter(prev) || unicode.IsDigit(prev)) {
				return j
			}
		}
		i = j + 1
	}
	return -1
}

// asciiLower folds A-Z only: strings.ToLower may change the length of other
// runes, and offsets found in the folded text must hold in the original.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// endsURL says r cannot be in a URL as people write them in a message.
func endsURL(r rune) bool {
	switch r {
	case '<', '>', '"', '`', utf8.RuneError:
		return true
	}
	return unicode.IsSpace(r) || unicode.IsControl(r)
}

// trimTrailing drops what ends the sentence rather than the URL: stops,
// commas, quotes, WhatsApp's *bold* _italic_ ~strike~ markers, and closing
// brackets that close nothing opened inside the URL.
func trimTrailing(s string) string {
	for s != "" {
		r, size := utf8.DecodeLastRuneInString(s)
		switch r {
		case '.', ',', ':', ';', '!', '?', '\'', '*', '_', '~', '…':
		case ')':
			if strings.Count(s, "(") >= strings.Count(s, ")") {
				return s
			}
		case ']':
			if strings.Count(s, "[") >= strings.Count(s, "]") {
				return s
			}
		case '}':
			if strings.Count(s, "{") >= strings.Count(s, "}") {
				return s
			}
		default:
			return s
		}
		s = s[:len(s)-size]
	}
	return s
}

// hasHost says s parses as an http(s) URL naming a host that could exist.
func hasHost(s string) bool {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	host := u.Hostname()
	if host == "" || strings.HasPrefix(host, ".") || strings.HasPrefix(host, "-") || strings.Contains(host, "..") {
		return false
	}
	if strings.HasPrefix(u.Host, "[") { // an IPv6 literal; url.Parse checked its brackets
		return true
	}
	for _, r := range host {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '.' || r == '_') {
			return false
		}
	}
	return true
}

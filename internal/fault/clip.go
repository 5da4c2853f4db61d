package fault

import "unicode/utf8"

// QuoteLen is how much of a client's value a message quotes.
const QuoteLen = 32

// Clip keeps at most n bytes of s, cut at a character boundary, and marks
// the cut. A message quotes a client's bad value through it (Clip(v,
// QuoteLen)), so a 1 MB value is answered with its first bytes, never
// echoed whole.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

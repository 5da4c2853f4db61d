package textrule

import (
	"slices"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/wagraph/wagraph/internal/fault"
)

// Names a reader tells apart (session names, the options of a poll) are
// compared by what they look like, not by their code points: a fullwidth
// "Ｓｈｏｐ", "Sh\u200bop" with a zero-width space, "Café" composed or
// decomposed (NFC, NFD) all read as "Shop" or "Café", so Key makes them
// equal. What normalising cannot make equal is refused by CheckName:
// bidirectional formatting characters, which reorder what is shown, and a
// word that mixes scripts (a Cyrillic "а" in a Latin "pаypal").
//
// Whole-script look-alikes (a name written all in Cyrillic letters that
// look Latin, "Рор" for "Pop") are not caught: that needs the confusables
// skeleton of Unicode's UTS #39, and no maintained Go implementation of
// it is available (golang.org/x/text has none; PRECIS leaves confusables
// out on purpose).

// Key is the form in which two names that read the same are equal: the
// default-ignorable code points (zero-width spaces and joiners, soft
// hyphens, variation selectors, bidirectional marks) dropped, then NFKC
// (compatibility forms such as fullwidth letters and ligatures to their
// plain letters, composed and decomposed accents to one form), each run
// of white space as one space, trimmed. It is for comparing, never
// stored: a name is kept as it was given. Case is kept: callers that
// ignore it compare keys with strings.EqualFold.
func Key(s string) string {
	s = norm.NFKC.String(dropIgnorable(s))
	// NFKC maps a few characters to ignorable ones (U+FFA0, a halfwidth
	// filler, to U+1160).
	s = dropIgnorable(s)
	return strings.Join(strings.Fields(s), " ")
}

func dropIgnorable(s string) string {
	if strings.IndexFunc(s, defaultIgnorable) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if defaultIgnorable(r) {
			return -1
		}
		return r
	}, s)
}

// defaultIgnorable reports Unicode's Default_Ignorable_Code_Point, derived
// as DerivedCoreProperties.txt derives it from the properties the unicode
// package has: Other_Default_Ignorable_Code_Point, format characters (Cf)
// and variation selectors, less white space, the interlinear annotation
// characters, the Egyptian hieroglyph format controls and the prepended
// concatenation marks (format characters that are visible).
func defaultIgnorable(r rune) bool {
	if !unicode.In(r, unicode.Other_Default_Ignorable_Code_Point, unicode.Cf, unicode.Variation_Selector) {
		return false
	}
	return !unicode.In(r, unicode.White_Space, unicode.Prepended_Concatenation_Mark, unicode.Egyptian_Hieroglyphs) &&
		(r < 0xFFF9 || r > 0xFFFB)
}

// bidiFormatting reports the explicit bidirectional formatting characters:
// the embeddings and overrides (U+202A–U+202E) and the isolates
// (U+2066–U+2069). Each reorders the text after it: "\u202Egnp.exe" shows
// as "exe.png". The marks (U+200E, U+200F, U+061C) only nudge neutral
// characters; they are ignorable, dropped by Key.
func bidiFormatting(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}

// CheckName refuses, naming field, a name (or poll option) a reader could
// take for another or see other than it is: one holding bidirectional
// formatting characters, one with nothing visible (only ignorable
// characters, which Key drops), or one with a word that mixes scripts
// beyond those written together (mixedScripts). An empty s passes: whether
// a name may be empty is the caller's rule.
func CheckName(field, s string) error {
	if i := strings.IndexFunc(s, bidiFormatting); i >= 0 {
		r := []rune(s[i:])[0]
		return fault.InvalidField(field, "%s must not contain bidirectional formatting characters (U+%04X; U+202A to U+202E and U+2066 to U+2069 reorder what is shown)", field, r)
	}
	key := Key(s)
	if s != "" && key == "" {
		return fault.InvalidField(field, "%s must hold a visible character (it holds only white space or invisible characters)", field)
	}
	for _, word := range strings.FieldsFunc(key, func(r rune) bool { return !unicode.In(r, unicode.L, unicode.M, unicode.N) }) {
		if scripts := mixedScripts(word); scripts != nil {
			return fault.InvalidField(field, "%s mixes scripts in one word (%q: %s): a word must be written in one script, so that it cannot pass for another",
				field, fault.Clip(word, fault.QuoteLen), strings.Join(scripts, " and "))
		}
	}
	return nil
}

// writtenTogether are the sets of scripts one word may mix: UTS #39's
// Highly Restrictive level (Japanese writes Han, Hiragana, Katakana and
// Latin in one word; Chinese Han with Bopomofo, Korean Han with Hangul,
// each with Latin). A word in any one script passes; Common (digits,
// punctuation) and Inherited (combining marks) belong to none.
var writtenTogether = [][]string{
	{"Latin", "Han", "Hiragana", "Katakana"},
	{"Latin", "Han", "Bopomofo"},
	{"Latin", "Han", "Hangul"},
}

// mixedScripts returns the scripts of word, sorted, when they are more
// than one and not a set written together; nil otherwise.
func mixedScripts(word string) []string {
	var scripts []string
	for _, r := range word {
		if s := scriptOf(r); s != "" && !slices.Contains(scripts, s) {
			scripts = append(scripts, s)
		}
	}
	if len(scripts) < 2 {
		return nil
	}
	for _, set := range writtenTogether {
		if !slices.ContainsFunc(scripts, func(s string) bool { return !slices.Contains(set, s) }) {
			return nil
		}
	}
	slices.Sort(scripts)
	return scripts
}

// scriptOf is the name of r's script, "" for Common, Inherited and
// unassigned code points.
func scriptOf(r rune) string {
	if r < 0x80 {
		if unicode.IsLetter(r) {
			return "Latin"
		}
		return ""
	}
	for name, table := range unicode.Scripts {
		if name != "Common" && name != "Inherited" && unicode.Is(table, r) {
			return name
		}
	}
	return ""
}

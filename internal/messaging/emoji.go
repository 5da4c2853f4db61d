package messaging

// The one-emoji rule of reactions. WhatsApp's apps react with one emoji
// as a person sees it: one grapheme cluster that is an emoji, which may be
// several code points (a skin tone, a ZWJ sequence such as a family, a
// flag, a keycap, a subdivision flag's tags). Unicode's emoji grammar
// (UTS #51, "possible emoji") is what is checked, so two emoji side by
// side (👍👍), a letter or a digit alone are refused.

import (
	"unicode"
	"unicode/utf8"
)

// The code points emoji sequences are built with (UTS #51).
const (
	zwj               = '\u200D'     // joins the elements of a ZWJ sequence
	emojiPresentation = '\uFE0F'     // VS16: shown as an emoji
	textPresentation  = '\uFE0E'     // VS15: shown as text
	keycapMark        = '\u20E3'     // COMBINING ENCLOSING KEYCAP
	modifierFirst     = '\U0001F3FB' // skin tones 1-2 ..
	modifierLast      = '\U0001F3FF' // .. 6
	riFirst           = '\U0001F1E6' // regional indicator A ..
	riLast            = '\U0001F1FF' // .. Z: two make a flag
	tagFirst          = '\U000E0020' // tag characters ..
	tagLast           = '\U000E007E' // .. of a subdivision flag
	cancelTag         = '\U000E007F' // ends the tags
)

// maxEmojiRunes bounds a reaction: the longest emoji Unicode recommends
// (a kiss of two people with skin tones) are 10 code points.
const maxEmojiRunes = 10

// isOneEmoji reports whether s is exactly one emoji: an element, or
// elements joined by ZWJ. An element is a flag (two regional indicators),
// a keycap ([0-9#*], VS16 optional, U+20E3), or an Extended_Pictographic
// code point with an optional variation selector, skin tone and tags.
func isOneEmoji(s string) bool {
	if s == "" || !utf8.ValidString(s) || utf8.RuneCountInString(s) > maxEmojiRunes {
		return false
	}
	rs := []rune(s)
	i := 0
	for {
		n := emojiElement(rs[i:])
		if n == 0 {
			return false
		}
		i += n
		if i == len(rs) {
			return true
		}
		if rs[i] != zwj {
			return false
		}
		i++
		if i == len(rs) {
			return false // a ZWJ joins two elements
		}
	}
}

// emojiElement is the length in runes of the emoji element rs starts
// with; 0 when it starts with none.
func emojiElement(rs []rune) int {
	switch r := rs[0]; {
	case riFirst <= r && r <= riLast:
		if len(rs) >= 2 && riFirst <= rs[1] && rs[1] <= riLast {
			return 2
		}
		return 0
	case r == '#' || r == '*' || '0' <= r && r <= '9':
		n := 1
		if n < len(rs) && rs[n] == emojiPresentation {
			n++
		}
		if n < len(rs) && rs[n] == keycapMark {
			return n + 1
		}
		return 0
	case !unicode.Is(extendedPictographic, r):
		return 0
	}
	n := 1
	if n < len(rs) && (rs[n] == emojiPresentation || rs[n] == textPresentation) {
		n++
	}
	if n < len(rs) && modifierFirst <= rs[n] && rs[n] <= modifierLast {
		n++
	}
	if n < len(rs) && tagFirst <= rs[n] && rs[n] <= tagLast {
		for n < len(rs) && tagFirst <= rs[n] && rs[n] <= tagLast {
			n++
		}
		if n == len(rs) || rs[n] != cancelTag {
			return 0
		}
		n++
	}
	return n
}

// extendedPictographic is Unicode 15.0's Extended_Pictographic property
// (emoji-data.txt): the code points an emoji starts with. Go's unicode
// package has no emoji properties.
var extendedPictographic = &unicode.RangeTable{
	R16: []unicode.Range16{
		{Lo: 0x00A9, Hi: 0x00A9, Stride: 1},
		{Lo: 0x00AE, Hi: 0x00AE, Stride: 1},
		{Lo: 0x203C, Hi: 0x203C, Stride: 1},
		{Lo: 0x2049, Hi: 0x2049, Stride: 1},
		{Lo: 0x2122, Hi: 0x2122, Stride: 1},
		{Lo: 0x2139, Hi: 0x2139, Stride: 1},
		{Lo: 0x2194, Hi: 0x2199, Stride: 1},
		{Lo: 0x21A9, Hi: 0x21AA, Stride: 1},
		{Lo: 0x231A, Hi: 0x231B, Stride: 1},
		{Lo: 0x2328, Hi: 0x2328, Stride: 1},
		{Lo: 0x2388, Hi: 0x2388, Stride: 1},
		{Lo: 0x23CF, Hi: 0x23CF, Stride: 1},
		{Lo: 0x23E9, Hi: 0x23F3, Stride: 1},
		{Lo: 0x23F8, Hi: 0x23FA, Stride: 1},
		{Lo: 0x24C2, Hi: 0x24C2, Stride: 1},
		{Lo: 0x25AA, Hi: 0x25AB, Stride: 1},
		{Lo: 0x25B6, Hi: 0x25B6, Stride: 1},
		{Lo: 0x25C0, Hi: 0x25C0, Stride: 1},
		{Lo: 0x25FB, Hi: 0x25FE, Stride: 1},
		{Lo: 0x2600, Hi: 0x2605, Stride: 1},
		{Lo: 0x2607, Hi: 0x2612, Stride: 1},
		{Lo: 0x2614, Hi: 0x2685, Stride: 1},
		{Lo: 0x2690, Hi: 0x2705, Stride: 1},
		{Lo: 0x2708, Hi: 0x2712, Stride: 1},
		{Lo: 0x2714, Hi: 0x2714, Stride: 1},
		{Lo: 0x2716, Hi: 0x2716, Stride: 1},
		{Lo: 0x271D, Hi: 0x271D, Stride: 1},
		{Lo: 0x2721, Hi: 0x2721, Stride: 1},
		{Lo: 0x2728, Hi: 0x2728, Stride: 1},
		{Lo: 0x2733, Hi: 0x2734, Stride: 1},
		{Lo: 0x2744, Hi: 0x2744, Stride: 1},
		{Lo: 0x2747, Hi: 0x2747, Stride: 1},
		{Lo: 0x274C, Hi: 0x274C, Stride: 1},
		{Lo: 0x274E, Hi: 0x274E, Stride: 1},
		{Lo: 0x2753, Hi: 0x2755, Stride: 1},
		{Lo: 0x2757, Hi: 0x2757, Stride: 1},
		{Lo: 0x2763, Hi: 0x2767, Stride: 1},
		{Lo: 0x2795, Hi: 0x2797, Stride: 1},
		{Lo: 0x27A1, Hi: 0x27A1, Stride: 1},
		{Lo: 0x27B0, Hi: 0x27B0, Stride: 1},
		{Lo: 0x27BF, Hi: 0x27BF, Stride: 1},
		{Lo: 0x2934, Hi: 0x2935, Stride: 1},
		{Lo: 0x2B05, Hi: 0x2B07, Stride: 1},
		{Lo: 0x2B1B, Hi: 0x2B1C, Stride: 1},
		{Lo: 0x2B50, Hi: 0x2B50, Stride: 1},
		{Lo: 0x2B55, Hi: 0x2B55, Stride: 1},
		{Lo: 0x3030, Hi: 0x3030, Stride: 1},
		{Lo: 0x303D, Hi: 0x303D, Stride: 1},
		{Lo: 0x3297, Hi: 0x3297, Stride: 1},
		{Lo: 0x3299, Hi: 0x3299, Stride: 1},
	},
	R32: []unicode.Range32{
		{Lo: 0x1F000, Hi: 0x1F0FF, Stride: 1},
		{Lo: 0x1F10D, Hi: 0x1F10F, Stride: 1},
		{Lo: 0x1F12F, Hi: 0x1F12F, Stride: 1},
		{Lo: 0x1F16C, Hi: 0x1F171, Stride: 1},
		{Lo: 0x1F17E, Hi: 0x1F17F, Stride: 1},
		{Lo: 0x1F18E, Hi: 0x1F18E, Stride: 1},
		{Lo: 0x1F191, Hi: 0x1F19A, Stride: 1},
		{Lo: 0x1F1AD, Hi: 0x1F1E5, Stride: 1},
		{Lo: 0x1F201, Hi: 0x1F20F, Stride: 1},
		{Lo: 0x1F21A, Hi: 0x1F21A, Stride: 1},
		{Lo: 0x1F22F, Hi: 0x1F22F, Stride: 1},
		{Lo: 0x1F232, Hi: 0x1F23A, Stride: 1},
		{Lo: 0x1F23C, Hi: 0x1F23F, Stride: 1},
		{Lo: 0x1F249, Hi: 0x1F3FA, Stride: 1},
		{Lo: 0x1F400, Hi: 0x1F53D, Stride: 1},
		{Lo: 0x1F546, Hi: 0x1F64F, Stride: 1},
		{Lo: 0x1F680, Hi: 0x1F6FF, Stride: 1},
		{Lo: 0x1F774, Hi: 0x1F77F, Stride: 1},
		{Lo: 0x1F7D5, Hi: 0x1F7FF, Stride: 1},
		{Lo: 0x1F80C, Hi: 0x1F80F, Stride: 1},
		{Lo: 0x1F848, Hi: 0x1F84F, Stride: 1},
		{Lo: 0x1F85A, Hi: 0x1F85F, Stride: 1},
		{Lo: 0x1F888, Hi: 0x1F88F, Stride: 1},
		{Lo: 0x1F8AE, Hi: 0x1F8FF, Stride: 1},
		{Lo: 0x1F90C, Hi: 0x1F93A, Stride: 1},
		{Lo: 0x1F93C, Hi: 0x1F945, Stride: 1},
		{Lo: 0x1F947, Hi: 0x1FAFF, Stride: 1},
		{Lo: 0x1FC00, Hi: 0x1FFFD, Stride: 1},
	},
	LatinOffset: 2,
}

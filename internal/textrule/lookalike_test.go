package textrule

import (
	"strings"
	"testing"
	"unicode"

	"github.com/wagraph/wagraph/internal/fault"
)

// TestKey: names that read the same have one key; names that read
// differently keep different keys.
func TestKey(t *testing.T) {
	for _, tt := range []struct {
		name, a, b string
		same       bool
	}{
		{"fullwidth", "Ｓｈｏｐ", "Shop", true},
		{"zero-width space", "Sh\u200bop", "Shop", true},
		{"zero-width joiner and non-joiner", "S\u200dh\u200cop", "Shop", true},
		{"word joiner, BOM", "\ufeffSh\u2060op", "Shop", true},
		{"soft hyphen", "Sh\u00adop", "Shop", true},
		{"NFD and NFC", "Cafe\u0301", "Caf\u00e9", true},
		{"a zero-width space inside a decomposed accent", "Cafe\u200b\u0301", "Caf\u00e9", true},
		{"ligature", "\ufb01le", "file", true},
		{"left-to-right and right-to-left marks", "\u200eShop\u200f", "Shop", true},
		{"variation selector", "\u2764\ufe0f", "\u2764", true},
		{"no-break and ideographic spaces", "Shop\u00a0one\u3000two", "Shop one two", true},
		{"runs of white space, around it", "  Shop \t one ", "Shop one", true},
		{"halfwidth Hangul filler", "a\uffa0b", "ab", true},
		{"math bold", "\U0001d412\U0001d421\U0001d428\U0001d429", "Shop", true},
		{"case is kept", "Shop", "shop", false},
		{"other letters", "Shop", "Ship", false},
		{"Cyrillic look-alike (not a skeleton)", "Рор", "Pop", false},
		{"an accent is not dropped", "Café", "Cafe", false},
		{"a visible format character", "\u0600\u0661", "\u0661", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ka, kb := Key(tt.a), Key(tt.b)
			if (ka == kb) != tt.same {
				t.Errorf("Key(%q) = %q, Key(%q) = %q; same %v, want %v", tt.a, ka, tt.b, kb, ka == kb, tt.same)
			}
		})
	}
}

// TestDefaultIgnorable: the derivation agrees with
// DerivedCoreProperties.txt's Default_Ignorable_Code_Point on the
// characters that decide it.
func TestDefaultIgnorable(t *testing.T) {
	for _, tt := range []struct {
		r    rune
		want bool
	}{
		{0x00AD, true}, {0x034F, true}, {0x061C, true}, {0x115F, true}, {0x1160, true},
		{0x17B4, true}, {0x180B, true}, {0x180E, true}, {0x200B, true}, {0x200F, true},
		{0x202A, true}, {0x2060, true}, {0x206F, true}, {0x3164, true}, {0xFE00, true},
		{0xFEFF, true}, {0xFFA0, true}, {0xFFF0, true}, {0x1BCA0, true}, {0x1D173, true},
		{0xE0001, true}, {0xE0100, true}, {0xE0FFF, true},
		{' ', false}, {'a', false}, {0x0600, false}, {0x06DD, false}, {0x110BD, false},
		{0xFFF9, false}, {0xFFFB, false}, {0x13430, false}, {0x00A0, false}, {0x2028, false},
	} {
		if got := defaultIgnorable(tt.r); got != tt.want {
			t.Errorf("defaultIgnorable(%U) = %v, want %v", tt.r, got, tt.want)
		}
	}
}

// TestCheckName: what could pass for another name, or show other than it
// is, is refused naming the field; names in any script, and scripts
// written together, pass.
func TestCheckName(t *testing.T) {
	for _, tt := range []struct {
		name, s string
		want    string // "" when it passes; else part of the message
	}{
		{"Latin", "Shop", ""},
		{"empty (the caller's rule)", "", ""},
		{"Cyrillic alone", "Москва 2024", ""},
		{"Greek alone", "Αθήνα", ""},
		{"scripts in separate words", "iPhone или Android", ""},
		{"digits and punctuation with Cyrillic", "Магазин-2", ""},
		{"Japanese: Latin, Katakana, Han, Hiragana", "Tシャツ 東京タワーへ", ""},
		{"Korean with Han", "한국語", ""},
		{"Arabic", "متجر", ""},
		{"Hebrew with marks", "\u05e9\u05b8\u05c1\u05dc\u05d5\u05b9\u05dd", ""},
		{"emoji", "Shop 👨‍👩‍👧", ""},
		{"combining accents", "Cafe\u0301", ""},
		{"right-to-left override", "invoice\u202egnp.exe", "must not contain bidirectional formatting characters (U+202E;"},
		{"left-to-right embedding", "\u202aShop", "(U+202A;"},
		{"pop directional formatting", "Shop\u202c", "(U+202C;"},
		{"right-to-left isolate", "a\u2067b\u2069", "(U+2067;"},
		{"first strong isolate", "\u2068x", "(U+2068;"},
		{"a Cyrillic а in a Latin word", "p\u0430ypal", `mixes scripts in one word ("pаypal": Cyrillic and Latin)`},
		{"a Greek Alpha in a Latin word", "\u0391lpha", "Greek and Latin"},
		{"Cyrillic and Greek", "\u043c\u03b1", "Cyrillic and Greek"},
		{"mixed behind a zero-width space", "p\u200b\u0430ypal", "Cyrillic and Latin"},
		{"fullwidth Latin with Cyrillic", "ｐ\u0430y", "Cyrillic and Latin"},
		{"Hangul with Katakana", "한カ", "Hangul and Katakana"},
		{"only a zero-width space", "\u200b", "must hold a visible character"},
		{"only marks and spaces", " \u200e\u00a0\ufe0f ", "must hold a visible character"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckName("options[1]", tt.s)
			if tt.want == "" {
				if err != nil {
					t.Errorf("CheckName(%q): %v, want it to pass", tt.s, err)
				}
				return
			}
			f := fault.From(err)
			if f == nil || f.Code != fault.Invalid || f.Field != "options[1]" || !strings.HasPrefix(f.Message, "options[1] ") || !strings.Contains(f.Message, tt.want) {
				t.Errorf("CheckName(%q): %#v, want an invalid options[1] saying %q", tt.s, err, tt.want)
			}
		})
	}
}

// TestBidiFormattingIsBidiControl: the characters refused are the
// bidirectional controls less the marks, which Key drops as ignorable.
func TestBidiFormattingIsBidiControl(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		control := unicode.Is(unicode.Bidi_Control, r)
		mark := r == 0x200E || r == 0x200F || r == 0x061C
		if bidiFormatting(r) != (control && !mark) {
			t.Errorf("bidiFormatting(%U) = %v; Bidi_Control %v", r, bidiFormatting(r), control)
		}
		if mark && !defaultIgnorable(r) {
			t.Errorf("the mark %U is not ignorable: Key would keep it", r)
		}
	}
}

package whatsapp

import (
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/fault"
)

func TestParseRecipient(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want, wantErr string
	}{
		{"491701234567", "491701234567@s.whatsapp.net", ""},
		{" 1234567 ", "1234567@s.whatsapp.net", ""},
		{"+491701234567", "491701234567@s.whatsapp.net", ""},
		{"49 170 1234567", "491701234567@s.whatsapp.net", ""},
		{"0049 170 1234567", "491701234567@s.whatsapp.net", ""},
		{"491701234567@s.whatsapp.net", "491701234567@s.whatsapp.net", ""},
		{"120363025246125888@g.us", "120363025246125888@g.us", ""},
		{"491701234567-1611234567@g.us", "491701234567-1611234567@g.us", ""},
		{"98765432101234@lid", "98765432101234@lid", ""},
		{"", "", "must not be empty"},
		{"123456", "", "7 to 15 digits"},
		{"1234567890123456", "", "7 to 15 digits"},
		{"015550654321", "", "number: use the international format: country code then number, e.g. 491551234567 (got \"015550654321\")"},
		{"abc@s.whatsapp.net", "", "7 to 15 digits"},
		{"+491701234567@s.whatsapp.net", "", "7 to 15 digits"},
		{"12345678@example.com", "", "server must be"},
		{"abc@g.us", "", "not a group JID"},
		{"4915550012222@s.whatsapp.net@g.us", "", "more than one '@'"},
		{"4915550012222@@s.whatsapp.net", "", "more than one '@'"},
		// As long as a recipient may be, and one character more.
		{strings.Repeat(" ", 200) + "49" + strings.Repeat("-", MaxRecipientLen-12) + "1701234567", "491701234567@s.whatsapp.net", ""},
		{"49" + strings.Repeat("-", MaxRecipientLen-11) + "1701234567", "", "number must be at most 128 characters (got 129)"},
		{"491701234567@s.whatsapp.net" + strings.Repeat("x", 16<<10), "", "number must be at most 128 characters (got 16411)"},
		{strings.Repeat("é", MaxRecipientLen), "", "7 to 15 digits"},
		{strings.Repeat("é", MaxRecipientLen+1), "", "number must be at most 128 characters (got 129)"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			jid, err := ParseRecipient("number", tt.in)
			if tt.wantErr != "" {
				f := fault.From(err)
				if f == nil || f.Code != fault.Invalid || f.Field != "number" || !strings.Contains(f.Message, tt.wantErr) {
					t.Fatalf("ParseRecipient(%q) = %v, %v; want a number error containing %q", tt.in, jid, err, tt.wantErr)
				}
				return
			}
			if err != nil || jid.String() != tt.want {
				t.Fatalf("ParseRecipient(%q) = %v, %v; want %s", tt.in, jid, err, tt.want)
			}
		})
	}
}

// TestParsePhone: the ways people write one number reach the same digits;
// a national number (one leading 0) and anything that is not a number are
// refused with a message naming the field it was given.
func TestParsePhone(t *testing.T) {
	t.Parallel()
	const want = "4915550654321"
	tests := []struct {
		field, in, want, wantErr string
	}{
		{"number", "4915550654321", want, ""},
		{"number", "+49 1555 0654321", want, ""},
		{"number", "0049 1555 0654321", want, ""},
		{"number", "(49) 1555-0654321", want, ""},
		{"number", "49.1555.0654321", want, ""},
		{"number", "(+49) 1555 065-43-21", want, ""},
		{"number", "\t+49\u00a01555\u00a00654321 ", want, ""},
		{"number", "004915550654321", want, ""},
		{"number", "1234567", "1234567", ""},
		{"number", "123456789012345", "123456789012345", ""},
		{"number", "+1 (555) 000-8888", "15550008888", ""},
		{"number", "015550654321", "", `number: use the international format: country code then number, e.g. 491551234567 (got "015550654321")`},
		{"number", "0 1555 0654321", "", "use the international format"},
		{"number", "+0049 1555 0654321", "", "use the international format"},
		{"number", "000491555065432", "", "use the international format"},
		{"contact.phoneNumber", "01555 0654321", "", `contact.phoneNumber: use the international format`},
		{"participants[2]", "(0)1555 0654321", "", `participants[2]: use the international format`},
		{"number", "", "", "number must not be empty"},
		{"number", "   ", "", "number must not be empty"},
		{"number", "+", "", "number must be a phone number of 7 to 15 digits"},
		{"number", "123456", "", "7 to 15 digits"},
		{"number", "00123456", "", "7 to 15 digits"},
		{"number", "1234567890123456", "", "7 to 15 digits"},
		{"number", "++491555065432", "", "7 to 15 digits"},
		{"number", "49+1555065432", "", "7 to 15 digits"},
		{"number", "49 1555 abc", "", `(got "49 1555 abc")`},
		{"number", "49/1555/0654321", "", "7 to 15 digits"},
		{"number", "١٢٣٤٥٦٧٨", "", "7 to 15 digits"},
		{"number", "4915550654321@s.whatsapp.net", "", "number must be a phone number, not a JID"},
		{"number", strings.Repeat("9", 100), "", `(got "` + strings.Repeat("9", fault.QuoteLen) + `…")`},
		{"participants[2]", "+49" + strings.Repeat(" ", 200) + "1701234567", "", "participants[2] must be at most 128 characters (got 213)"},
	}
	for _, tt := range tests {
		t.Run(tt.field+"/"+tt.in, func(t *testing.T) {
			got, err := ParsePhone(tt.field, tt.in)
			if tt.wantErr != "" {
				f := fault.From(err)
				if f == nil || f.Code != fault.Invalid || f.Field != tt.field || !strings.Contains(f.Message, tt.wantErr) {
					t.Fatalf("ParsePhone(%q) = %q, %v; want a %s error containing %q", tt.in, got, err, tt.field, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParsePhone(%q) = %q, %v; want %s", tt.in, got, err, tt.want)
			}
		})
	}
}

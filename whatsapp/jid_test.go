package whatsapp

import (
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/fault"
)

func TestParseRecipient(t *testing.T) {
	tests := []struct {
		in, want, wantErr string
	}{
		{"491701234567", "491701234567@s.whatsapp.net", ""},
		{" 1234567 ", "1234567@s.whatsapp.net", ""},
		{"491701234567@s.whatsapp.net", "491701234567@s.whatsapp.net", ""},
		{"120363025246125888@g.us", "120363025246125888@g.us", ""},
		{"491701234567-1611234567@g.us", "491701234567-1611234567@g.us", ""},
		{"98765432101234@lid", "98765432101234@lid", ""},
		{"", "", "must not be empty"},
		{"123456", "", "7 to 15 digits"},
		{"1234567890123456", "", "7 to 15 digits"},
		{"+491701234567", "", "without '+'"},
		{"49 170 1234567", "", "7 to 15 digits"},
		{"abc@s.whatsapp.net", "", "7 to 15 digits"},
		{"12345678@example.com", "", "server must be"},
		{"abc@g.us", "", "not a group JID"},
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

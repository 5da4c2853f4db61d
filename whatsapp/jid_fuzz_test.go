package whatsapp

import (
	"strings"
	"testing"

	"go.mau.fi/whatsmeow/types"

	"github.com/wagraph/wagraph/internal/fault"
)

// FuzzParseRecipient: whatever the input, ParseRecipient never panics; a
// refusal is a BAD_USER_INPUT fault naming the field; an accepted user is
// 7 to 15 digits on s.whatsapp.net or lid, an accepted group one or two
// runs of digits on g.us; and the JID it returns, written out, parses back
// to itself.
func FuzzParseRecipient(f *testing.F) {
	for _, s := range []string{
		"491701234567", " 1234567 ", "+491701234567", "123456", "1234567890123456",
		"491701234567@s.whatsapp.net", "491701234567:3@s.whatsapp.net", "491701234567.1:2@s.whatsapp.net",
		"120363025246125888@g.us", "491701234567-1611234567@g.us", "1-2-3@g.us", "-1@g.us",
		"98765432101234@lid", "1234567@broadcast", "status@broadcast", "@s.whatsapp.net", "a@b@c", "١٢٣٤٥٦٧",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		jid, err := ParseRecipient("number", s)
		if err != nil {
			if e := fault.From(err); e == nil || e.Code != fault.Invalid || e.Field != "number" {
				t.Fatalf("%q: refusal %#v is not a BAD_USER_INPUT fault on number", s, err)
			}
			return
		}
		switch jid.Server {
		case types.DefaultUserServer, types.HiddenUserServer:
			if !digits(jid.User) || len(jid.User) < minNumberDigits || len(jid.User) > maxNumberDigits {
				t.Fatalf("%q accepted as user %q: not 7 to 15 digits", s, jid.User)
			}
		case types.GroupServer:
			parts := strings.Split(jid.User, "-")
			if len(parts) > 2 || !digits(parts[0]) || len(parts) == 2 && !digits(parts[1]) {
				t.Fatalf("%q accepted as group %q", s, jid.User)
			}
		default:
			t.Fatalf("%q accepted on server %q", s, jid.Server)
		}
		again, err := ParseRecipient("number", jid.String())
		if err != nil {
			t.Fatalf("%q gave %s, which is refused: %v", s, jid, err)
		}
		if again != jid {
			t.Fatalf("%q gave %#v, which parses back as %#v", s, jid, again)
		}
	})
}

func digits(s string) bool { return s != "" && !strings.ContainsFunc(s, notDigit) }

package whatsapp

import (
	"strings"
	"testing"

	"go.mau.fi/whatsmeow/types"

	"github.com/wagraph/wagraph/internal/fault"
)

// FuzzParseRecipient: whatever the input, ParseRecipient and ParsePhone
// never panic; a refusal is a BAD_USER_INPUT fault naming the field; an
// accepted user is 7 to 15 digits on s.whatsapp.net or lid, an accepted
// group one or two runs of digits on g.us; the JID it returns, written out,
// parses back to itself. ParsePhone's digits are 7 to 15 ASCII digits not
// starting with 0, read back as themselves (also with a '+' or the "00"
// prefix before them), and they are the user ParseRecipient addresses for
// the same input.
func FuzzParseRecipient(f *testing.F) {
	for _, s := range []string{
		"491701234567", " 1234567 ", "+491701234567", "123456", "1234567890123456",
		"491701234567@s.whatsapp.net", "491701234567:3@s.whatsapp.net", "491701234567.1:2@s.whatsapp.net",
		"120363025246125888@g.us", "491701234567-1611234567@g.us", "1-2-3@g.us", "-1@g.us",
		"98765432101234@lid", "1234567@broadcast", "status@broadcast", "@s.whatsapp.net", "a@b@c", "١٢٣٤٥٦٧",
		"+49 1555 0654321", "0049 1555 0654321", "(49) 1555-0654321", "49.1555.0654321", "015550654321",
		"+0049 1555", "(+1) 555-000.8888", "\u00a0+49\t1555", "++49", "49+1", "4915550012222@s.whatsapp.net@g.us",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkParsePhone(t, s)
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

// checkParsePhone holds ParsePhone's properties for one input.
func checkParsePhone(t *testing.T, s string) {
	t.Helper()
	num, err := ParsePhone("contact.phoneNumber", s)
	if err != nil {
		if e := fault.From(err); e == nil || e.Code != fault.Invalid || e.Field != "contact.phoneNumber" {
			t.Fatalf("%q: refusal %#v is not a BAD_USER_INPUT fault on contact.phoneNumber", s, err)
		}
		return
	}
	if !digits(num) || len(num) < minNumberDigits || len(num) > maxNumberDigits || num[0] == '0' {
		t.Fatalf("%q accepted as %q: not 7 to 15 digits with a country code first", s, num)
	}
	for _, again := range []string{num, "+" + num, "00" + num} {
		if got, err := ParsePhone("contact.phoneNumber", again); err != nil || got != num {
			t.Fatalf("%q gave %q, but %q reads as %q, %v", s, num, again, got, err)
		}
	}
	jid, err := ParseRecipient("number", s)
	if err != nil || jid.User != num || jid.Server != types.DefaultUserServer {
		t.Fatalf("%q: ParsePhone gives %q, ParseRecipient %v, %v", s, num, jid, err)
	}
}

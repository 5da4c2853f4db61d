package restcompat_test

import (
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
)

// TestNumberFields: every number field of the REST API reads numbers the
// same way, and refuses a national number (a single leading 0) or two
// servers with 400 naming the field as the REST body calls it — never
// the GraphQL path ("input.…") behind it. The checks come before the
// session must be connected, so an unlinked session shows them; the
// numbers that are accepted are sent in internal/e2e (TestNumbersReachOneAccount).
func TestNumberFields(t *testing.T) {
	srv := apptest.Start(t, apptest.Config(t))
	admin := apptest.AdminToken
	sid := data(t, srv.REST(t, "POST", "/session", admin, `{"name":"numbers"}`))["id"].(string)
	base := "/session/" + sid
	const group = "/group/120363025246125888@g.us"
	tests := []struct {
		name, method, path, body string
		want                     string
	}{
		{"text_national", "POST", base + "/message/text", `{"number":"015550654321","text":"hi"}`,
			`number: use the international format: country code then number, e.g. 491551234567 (got "015550654321")`},
		{"text_national_spaced", "POST", base + "/message/text", `{"number":"0155 5065 4321","text":"hi"}`,
			`number: use the international format`},
		{"text_plus_zero", "POST", base + "/message/text", `{"number":"+0049 1555 0654321","text":"hi"}`,
			`number: use the international format`},
		{"text_two_servers", "POST", base + "/message/text", `{"number":"4915550012222@s.whatsapp.net@g.us","text":"hi"}`,
			`has more than one '@': give a number or one JID`},
		{"text_letters", "POST", base + "/message/text", `{"number":"49 1555 CALL ME","text":"hi"}`,
			`number must be a phone number of 7 to 15 digits in international format`},
		{"image_national", "POST", base + "/message/image", `{"number":"015550654321","source":"aGVsbG8="}`,
			`number: use the international format`},
		{"mention_national", "POST", base + "/message/text", `{"number":"4915550654321","text":"hi","mentions":["+49 1555 0654322","01555 0654323"]}`,
			`mentions[1]: use the international format`},
		{"contact_national", "POST", base + "/message/contact", `{"number":"4915550654321","contact":{"phoneNumber":"01555 0654321","firstName":"Ada"}}`,
			`contact.phoneNumber: use the international format`},
		{"contact_jid", "POST", base + "/message/contact", `{"number":"4915550654321","contact":{"phoneNumber":"4915550654321@s.whatsapp.net","firstName":"Ada"}}`,
			`contact.phoneNumber must be a phone number, not a JID`},
		{"group_participant_national", "POST", base + "/group", `{"subject":"Team","participants":["4915550654321","+49 1555 0654322","015550654323"]}`,
			`participants[2]: use the international format`},
		{"group_participant_twice", "POST", base + "/group", `{"subject":"Team","participants":["+49 1555 0654321","0049 1555 0654321"]}`,
			`participants[1] names 4915550654321 again`},
		{"group_subject_empty", "POST", base + "/group", `{"subject":" ","participants":[]}`,
			`subject must not be empty`},
		{"demote_national", "POST", base + group + "/demote", `["4915550654321","015550654321"]`,
			`participants[1]: use the international format`},
		{"invite_national", "POST", base + group + "/send-invite", `{"number":"015550654321","message":"join us"}`,
			`number: use the international format`},
		{"pair_phone_national", "POST", base + "/pair-phone", `{"number":"015550654321"}`,
			`number: use the international format`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := srv.REST(t, tt.method, tt.path, admin, tt.body)
			if res.Status != 400 {
				t.Fatalf("status %d, want 400: %s", res.Status, res.Body)
			}
			msg := res.Message(t)
			if !strings.Contains(msg, tt.want) || strings.Contains(msg, "input.") {
				t.Errorf("message %q: want it to contain %q and no GraphQL path", msg, tt.want)
			}
			checkGolden(t, "number_"+tt.name, res)
		})
	}
}

package graph_test

import (
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
)

// TestNumberErrors: a refused number is BAD_USER_INPUT whose
// extensions.field is the GraphQL path and whose message names the field
// as the REST body calls it, so the one message serves both APIs.
func TestNumberErrors(t *testing.T) {
	srv := apptest.Start(t, apptest.Config(t))
	sid := srv.CreateSession(t, "numbers")
	vars := map[string]any{"s": sid}
	tests := []struct {
		name, query, field, msg string
	}{
		{"send", `mutation($s: ID!) { sendText(sessionId: $s, input: {number: "015550654321", text: "hi"}) { messageId } }`,
			"input.number", `number: use the international format: country code then number, e.g. 491551234567 (got "015550654321")`},
		{"mention", `mutation($s: ID!) { sendText(sessionId: $s, input: {number: "+49 1555 0654321", text: "hi", mentions: ["0155 50654321"]}) { messageId } }`,
			"input.mentions[0]", `mentions[0]: use the international format`},
		{"contact card", `mutation($s: ID!) { sendContact(sessionId: $s, input: {number: "4915550654321", contact: {phoneNumber: "01555 0654321", firstName: "Ada"}}) { messageId } }`,
			"input.contact.phoneNumber", `contact.phoneNumber: use the international format`},
		{"group participant", `mutation($s: ID!) { createGroup(sessionId: $s, input: {subject: "Team", participants: ["4915550654321", "(49) 1555 0654322", "015550654323"]}) { id } }`,
			"input.participants[2]", `participants[2]: use the international format`},
		{"group participant twice", `mutation($s: ID!) { createGroup(sessionId: $s, input: {subject: "Team", participants: ["+49 1555 0654321", "0049 1555 0654321"]}) { id } }`,
			"input.participants[1]", `participants[1] names 4915550654321 again`},
		{"group subject", `mutation($s: ID!) { createGroup(sessionId: $s, input: {subject: " "}) { id } }`,
			"input.subject", `subject must not be empty`},
		{"demote", `mutation($s: ID!) { demoteGroupParticipants(sessionId: $s, jid: "120363025246125888@g.us", participants: ["015550654321"]) { ok } }`,
			"participants[0]", `participants[0]: use the international format`},
		{"invite", `mutation($s: ID!) { sendGroupInvite(sessionId: $s, jid: "120363025246125888@g.us", number: "015550654321", message: "join") { messageId } }`,
			"number", `number: use the international format`},
		{"pairing phone", `mutation($s: ID!) { pairPhone(sessionId: $s, number: "015550654321") }`,
			"number", `number: use the international format`},
		{"two servers", `mutation($s: ID!) { sendText(sessionId: $s, input: {number: "4915550012222@s.whatsapp.net@g.us", text: "hi"}) { messageId } }`,
			"input.number", `has more than one '@'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := srv.GraphQL(t, apptest.AdminToken, tt.query, vars)
			if len(res.Errors) == 0 {
				t.Fatalf("no error; data %s", res.Data)
			}
			e := res.Errors[0]
			field, _ := e.Extensions["field"].(string)
			if e.Code() != "BAD_USER_INPUT" || field != tt.field || !strings.Contains(e.Message, tt.msg) || strings.Contains(e.Message, "input.") {
				t.Errorf("%s %q (field %q), want BAD_USER_INPUT on %s saying %q", e.Code(), e.Message, field, tt.field, tt.msg)
			}
		})
	}
}

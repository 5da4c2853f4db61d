package lookup_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/lookup"
	"github.com/wagraph/wagraph/whatsapp"
)

// runner is a whatsapp.Runner that records the operations it is asked to
// run and runs none.
type runner struct{ ops []string }

func (r *runner) Run(_ context.Context, _ string, c whatsapp.Call) error {
	r.ops = append(r.ops, c.Op)
	return fault.New(fault.NotConnected, "session s is not connected (status: DISCONNECTED)")
}

func numbers(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("4917012%05d", i)
	}
	return out
}

// TestRules: bad input is refused with BAD_USER_INPUT naming the field and
// the rule, before anything is asked of WhatsApp; good input reaches the
// session (here: not connected).
func TestRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		call        func(*lookup.Service) error
		field, rule string // rule: part of the message; "" for good input
	}{
		{"no numbers", func(s *lookup.Service) error { _, err := s.CheckNumbers(t.Context(), "s", nil); return err }, "numbers", "1 to 50"},
		{"51 numbers", func(s *lookup.Service) error { _, err := s.CheckNumbers(t.Context(), "s", numbers(51)); return err }, "numbers", "1 to 50 entries (got 51)"},
		{"50 numbers", func(s *lookup.Service) error { _, err := s.CheckNumbers(t.Context(), "s", numbers(50)); return err }, "", ""},
		{"a bad number", func(s *lookup.Service) error {
			_, err := s.CheckNumbers(t.Context(), "s", []string{"491701234567", "12ab"})
			return err
		}, "numbers[1]", "phone number"},
		{"a LID to check", func(s *lookup.Service) error {
			_, err := s.CheckNumbers(t.Context(), "s", []string{"200000000000001@lid"})
			return err
		}, "numbers[0]", "is a LID"},
		{"a group to check", func(s *lookup.Service) error {
			_, err := s.CheckNumbers(t.Context(), "s", []string{"120363025246125888@g.us"})
			return err
		}, "numbers[0]", "not a group"},
		{"a national number", func(s *lookup.Service) error { _, err := s.UserInfo(t.Context(), "s", "01701234567"); return err }, "number", "international format"},
		{"user info of a group", func(s *lookup.Service) error {
			_, err := s.UserInfo(t.Context(), "s", "120363025246125888@g.us")
			return err
		}, "number", "not a group"},
		{"user info of a device", func(s *lookup.Service) error {
			_, err := s.UserInfo(t.Context(), "s", "491701234567:3@s.whatsapp.net")
			return err
		}, "number", "not one of its devices"},
		{"user info by LID", func(s *lookup.Service) error {
			_, err := s.UserInfo(t.Context(), "s", "200000000000001@lid")
			return err
		}, "", ""},
		{"picture of nothing", func(s *lookup.Service) error { _, err := s.ProfilePicture(t.Context(), "s", " ", false); return err }, "chat", "must not be empty"},
		{"picture of another server", func(s *lookup.Service) error {
			_, err := s.ProfilePicture(t.Context(), "s", "491701234567@example.com", false)
			return err
		}, "chat", "server must be"},
		{"picture of a group", func(s *lookup.Service) error {
			_, err := s.ProfilePicture(t.Context(), "s", "120363025246125888@g.us", true)
			return err
		}, "", ""},
		{"picture JPEG of a bad chat", func(s *lookup.Service) error {
			_, err := s.ProfilePictureJPEG(t.Context(), "s", "abc", false)
			return err
		}, "chat", "phone number"},
		{"no ids", func(s *lookup.Service) error { _, err := s.Identities(t.Context(), "s", []string{}); return err }, "ids", "1 to 50"},
		{"51 ids", func(s *lookup.Service) error { _, err := s.Identities(t.Context(), "s", numbers(51)); return err }, "ids", "(got 51)"},
		{"a group id", func(s *lookup.Service) error {
			_, err := s.Identities(t.Context(), "s", []string{"491701234567", "200000000000001@lid", "120363025246125888@g.us"})
			return err
		}, "ids[2]", "not a group"},
		{"ids of every kind", func(s *lookup.Service) error {
			_, err := s.Identities(t.Context(), "s", []string{"+49 170 1234567", "491701234567@s.whatsapp.net", "200000000000001@lid"})
			return err
		}, "", ""},
		{"block a group", func(s *lookup.Service) error {
			return s.SetBlocked(t.Context(), "s", "120363025246125888@g.us", true)
		}, "number", "not a group"},
		{"unblock nothing", func(s *lookup.Service) error { return s.SetBlocked(t.Context(), "s", "", false) }, "number", "must not be empty"},
		{"block a LID", func(s *lookup.Service) error { return s.SetBlocked(t.Context(), "s", "200000000000001@lid", true) }, "", ""},
		{"the blocklist", func(s *lookup.Service) error { _, err := s.Blocklist(t.Context(), "s"); return err }, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &runner{}
			err := tt.call(lookup.NewService(r))
			f := fault.From(err)
			if tt.field == "" {
				if len(r.ops) != 1 || fault.CodeOf(err) != fault.NotConnected {
					t.Errorf("good input: ran %v, got %v; want one operation answering NOT_CONNECTED", r.ops, err)
				}
				return
			}
			if f == nil || f.Code != fault.Invalid || f.Field != tt.field || !strings.Contains(f.Message, tt.rule) {
				t.Errorf("got %v, want BAD_USER_INPUT naming %s saying %q", err, tt.field, tt.rule)
			}
			if len(r.ops) != 0 {
				t.Errorf("bad input ran %v", r.ops)
			}
		})
	}
}

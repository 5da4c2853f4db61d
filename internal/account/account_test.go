package account

import (
	"context"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp"
)

// recorder is the WhatsApp side: it records the operations that reach it
// and answers each with its zero result.
type recorder struct {
	ops   []string
	calls []any
}

func (r *recorder) Run(_ context.Context, _ string, c whatsapp.Call) error {
	r.ops = append(r.ops, c.Op)
	r.calls = append(r.calls, c.Request)
	return nil
}

func (r *recorder) Status(context.Context, string) (whatsapp.SessionState, error) {
	return whatsapp.SessionState{Status: whatsapp.StatusConnected, Phone: "4915550001111"}, nil
}

// TestRulesBeforeOperations: every rule refuses its bad input with a fault
// naming the field and the rule, before any operation reaches WhatsApp;
// good input reaches it as the operation the rule guards.
func TestRulesBeforeOperations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	str := func(s string) *string { return &s }
	tests := []struct {
		name      string
		do        func(s *Service) error
		wantField string // "": allowed
		wantMsg   string
		wantOp    string // the operation the rule guards
	}{
		{"profile name empty", func(s *Service) error { return s.SetProfileName(ctx, "s", "  ") }, "name", "name must not be empty", ""},
		{"profile name too long", func(s *Service) error { return s.SetProfileName(ctx, "s", strings.Repeat("n", 26)) },
			"name", "name must be at most 25 characters (got 26)", ""},
		{"profile name", func(s *Service) error { return s.SetProfileName(ctx, "s", strings.Repeat("ñ", 25)) }, "", "", "setProfileName"},
		{"privacy value", func(s *Service) error { _, err := s.SetPrivacy(ctx, "s", ReadReceipts(), "contacts"); return err },
			"privacy", `privacy must be one of all, none; got "contacts"`, ""},
		{"privacy", func(s *Service) error { _, err := s.SetPrivacy(ctx, "s", GroupsAdd(), "contact_blacklist"); return err }, "", "", "setPrivacy"},
		{"disappearing mode", func(s *Service) error { _, err := s.SetDefaultDisappearingMode(ctx, "s", "ONE_HOUR"); return err },
			"mode", "mode must be one of OFF, ONE_DAY, ONE_WEEK, NINETY_DAYS", ""},
		{"disappearing alias", func(s *Service) error { _, err := s.SetDefaultDisappearingMode(ctx, "s", " three_months "); return err }, "", "", "setDefaultDisappearingTimer"},
		{"picture of another number", func(s *Service) error { _, err := s.PictureTarget(ctx, "s", "+49 1555 0002222"); return err },
			"identifier", "identifier must be this session's own number (4915550001111) or a group id", ""},
		{"picture of a national number", func(s *Service) error { _, err := s.PictureTarget(ctx, "s", "015550001111"); return err },
			"identifier", "international format", ""},
		{"empty picture", func(s *Service) error { return s.SetPicture(ctx, "s", whatsapp.JID{}, nil) }, "source", "the picture is empty", ""},
		{"subject blank", func(s *Service) error { _, err := s.CreateGroup(ctx, "s", NewGroup{Subject: " "}); return err },
			"subject", "subject must not be empty", ""},
		{"subject too long", func(s *Service) error {
			_, err := s.CreateGroup(ctx, "s", NewGroup{Subject: strings.Repeat("x", 101)})
			return err
		},
			"subject", "subject must be at most 100 characters (got 101)", ""},
		{"description too long", func(s *Service) error {
			_, err := s.CreateGroup(ctx, "s", NewGroup{Subject: "x", Description: str(strings.Repeat("d", 2049))})
			return err
		}, "description", "description must be at most 2048 characters (got 2049)", ""},
		{"participant twice", func(s *Service) error {
			_, err := s.CreateGroup(ctx, "s", NewGroup{Subject: "x", Participants: []string{"4915550002222", "+49 1555 0002222"}})
			return err
		}, "participants[1]", "participants[1] names 4915550002222 again", ""},
		{"participant a group", func(s *Service) error {
			_, err := s.CreateGroup(ctx, "s", NewGroup{Subject: "x", Participants: []string{"120363025246125888@g.us"}})
			return err
		}, "participants[0]", "participants[0] must be a user, not a group", ""},
		{"group", func(s *Service) error {
			_, err := s.CreateGroup(ctx, "s", NewGroup{Subject: "x", Participants: []string{"4915550002222"}})
			return err
		}, "", "", "createGroup"},
		{"update subject blank", func(s *Service) error {
			_, err := s.UpdateGroup(ctx, "s", "120363025246125888", whatsapp.GroupUpdate{Name: str("")})
			return err
		}, "subject", "subject must not be empty", ""},
		{"update of no group", func(s *Service) error {
			_, err := s.UpdateGroup(ctx, "s", "", whatsapp.GroupUpdate{})
			return err
		}, "jid", "jid must not be empty", ""},
		{"demote nobody", func(s *Service) error {
			_, err := s.DemoteParticipants(ctx, "s", "120363025246125888", nil)
			return err
		},
			"participants", "participants must name at least one number", ""},
		{"invite text too long", func(s *Service) error {
			_, err := s.InviteText(ctx, "s", "120363025246125888", "4915550002222", strings.Repeat("m", 4097))
			return err
		}, "message", "message must be at most 4096 characters", ""},
		{"invite", func(s *Service) error {
			_, err := s.InviteText(ctx, "s", "120363025246125888", "4915550002222", "join us")
			return err
		}, "", "", "groupInviteLink"},
		// Issue 34: the rest of the groups.
		{"add nobody", func(s *Service) error {
			_, err := s.ChangeParticipants(ctx, "s", "120363025246125888", whatsapp.ParticipantsAdd, nil)
			return err
		}, "participants", "participants must name at least one number", ""},
		{"remove a group", func(s *Service) error {
			_, err := s.ChangeParticipants(ctx, "s", "120363025246125888", whatsapp.ParticipantsRemove, []string{"120363025246125889@g.us"})
			return err
		}, "participants[0]", "participants[0] must be a user, not a group", ""},
		{"promote twice", func(s *Service) error {
			_, err := s.ChangeParticipants(ctx, "s", "120363025246125888", whatsapp.ParticipantsPromote, []string{"4915550002222", "4915550002222@s.whatsapp.net"})
			return err
		}, "participants[1]", "names 4915550002222 again", ""},
		{"approve in no group", func(s *Service) error {
			_, err := s.ChangeParticipants(ctx, "s", "4915550002222@s.whatsapp.net", whatsapp.RequestsApprove, []string{"4915550002222"})
			return err
		}, "jid", "is not a group id", ""},
		{"add", func(s *Service) error {
			_, err := s.ChangeParticipants(ctx, "s", "120363025246125888@g.us", whatsapp.ParticipantsAdd, []string{"4915550002222"})
			return err
		}, "", "", "changeParticipants"},
		{"member-add mode unknown", func(s *Service) error {
			_, err := s.UpdateGroup(ctx, "s", "120363025246125888", whatsapp.GroupUpdate{MemberAddMode: str("EVERYONE")})
			return err
		}, "memberAddMode", "memberAddMode must be ADMINS or ALL", ""},
		{"timer WhatsApp does not offer", func(s *Service) error {
			secs := uint32(3600)
			_, err := s.UpdateGroup(ctx, "s", "120363025246125888", whatsapp.GroupUpdate{EphemeralSeconds: &secs})
			return err
		}, "ephemeralSeconds", "ephemeralSeconds must be 0 (off), 86400", ""},
		{"timer of 90 days", func(s *Service) error {
			secs := uint32(7776000)
			_, err := s.UpdateGroup(ctx, "s", "120363025246125888", whatsapp.GroupUpdate{EphemeralSeconds: &secs, MemberAddMode: str("ALL")})
			return err
		}, "", "", "updateGroup"},
		{"join by no link", func(s *Service) error {
			_, err := s.JoinGroup(ctx, "s", "  ")
			return err
		}, "link", "link must be an invite link", ""},
		{"join by a link of another site", func(s *Service) error {
			_, err := s.JoinGroup(ctx, "s", "https://example.com/AbCd")
			return err
		}, "link", "is not an invite link", ""},
		{"join by link", func(s *Service) error {
			_, err := s.JoinGroup(ctx, "s", "https://chat.whatsapp.com/AbCdEfGhIjKlMnOpQrStUv")
			return err
		}, "", "", "joinGroup"},
		{"invite info by code", func(s *Service) error {
			_, err := s.InviteInfo(ctx, "s", "AbCdEfGhIjKlMnOpQrStUv")
			return err
		}, "", "", "groupInviteInfo"},
		{"invite info of a code too long", func(s *Service) error {
			_, err := s.InviteInfo(ctx, "s", strings.Repeat("a", 65))
			return err
		}, "link", "is not an invite link", ""},
		{"leave no group", func(s *Service) error {
			return s.LeaveGroup(ctx, "s", "nonsense")
		}, "jid", "is not a group id", ""},
		{"join requests of no group", func(s *Service) error {
			_, err := s.JoinRequests(ctx, "s", "")
			return err
		}, "jid", "jid must not be empty", ""},
		{"reset the link of no group", func(s *Service) error {
			_, err := s.InviteLink(ctx, "s", "x@g.us", true)
			return err
		}, "jid", "is not a group id", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			err := tt.do(NewService(rec))
			if tt.wantField == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if len(rec.ops) == 0 || rec.ops[0] != tt.wantOp {
					t.Errorf("operations %v, want %s first", rec.ops, tt.wantOp)
				}
				return
			}
			f := fault.From(err)
			if f == nil || f.Code != fault.Invalid || f.Field != tt.wantField || !strings.Contains(f.Message, tt.wantMsg) {
				t.Fatalf("error %v (%+v), want %s on %q saying %q", err, f, fault.Invalid, tt.wantField, tt.wantMsg)
			}
			if len(rec.ops) != 0 {
				t.Errorf("refused input reached WhatsApp: %v", rec.ops)
			}
		})
	}
}

// TestProfileNameTrimmed: the name WhatsApp gets is the one given without
// the spaces around it.
func TestProfileNameTrimmed(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	if err := NewService(rec).SetProfileName(context.Background(), "s", "  Ada  "); err != nil {
		t.Fatal(err)
	}
	if len(rec.calls) != 1 || rec.calls[0] != "Ada" {
		t.Errorf("requests %v, want the name Ada", rec.calls)
	}
}

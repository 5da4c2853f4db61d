package account

import (
	"context"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp"
)

// WhatsApp's limits of group texts.
const (
	maxSubjectLen     = 100
	maxDescriptionLen = 2048
	maxParticipants   = 1024
	maxInviteTextLen  = 4096 // leaves room for the link within a text's limit
)

// NewGroup is a group to create: its subject, maybe a description, and the
// numbers (or user JIDs) of its first members.
type NewGroup struct {
	Subject      string
	Description  *string
	Participants []string
}

// CreateGroup creates a group. WhatsApp may leave out members it refused
// (Group.NotAdded).
func (s *Service) CreateGroup(ctx context.Context, sessionID string, g NewGroup) (whatsapp.Group, error) {
	if err := checkText("subject", &g.Subject, maxSubjectLen, true); err != nil {
		return whatsapp.Group{}, err
	}
	if err := checkText("description", g.Description, maxDescriptionLen, false); err != nil {
		return whatsapp.Group{}, err
	}
	members, err := parseUsers("participants", g.Participants)
	if err != nil {
		return whatsapp.Group{}, err
	}
	req := whatsapp.NewGroup{Name: g.Subject, Participants: members}
	if g.Description != nil {
		req.Description = *g.Description
	}
	return whatsapp.OpCreateGroup().Do(ctx, s.wa, sessionID, req)
}

// UpdateGroup changes the given fields of group jid.
func (s *Service) UpdateGroup(ctx context.Context, sessionID, jid string, u whatsapp.GroupUpdate) (whatsapp.Group, error) {
	gj, err := whatsapp.ParseGroupJID("jid", jid)
	if err != nil {
		return whatsapp.Group{}, err
	}
	if err := checkText("subject", u.Name, maxSubjectLen, true); err != nil {
		return whatsapp.Group{}, err
	}
	if err := checkText("description", u.Description, maxDescriptionLen, false); err != nil {
		return whatsapp.Group{}, err
	}
	if m := u.MemberAddMode; m != nil && *m != whatsapp.MemberAddAdmins && *m != whatsapp.MemberAddAll {
		return whatsapp.Group{}, fault.InvalidField("memberAddMode", "memberAddMode must be %s or %s; got %q",
			whatsapp.MemberAddAdmins, whatsapp.MemberAddAll, fault.Clip(*m, fault.QuoteLen))
	}
	if e := u.EphemeralSeconds; e != nil && !slices.Contains(groupTimers, *e) {
		return whatsapp.Group{}, fault.InvalidField("ephemeralSeconds", "ephemeralSeconds must be 0 (off), 86400 (a day), 604800 (a week) or 7776000 (90 days), the timers WhatsApp offers; got %d", *e)
	}
	return whatsapp.OpUpdateGroup().Do(ctx, s.wa, sessionID, whatsapp.GroupChange{JID: gj, Update: u})
}

// Groups lists the account's groups.
func (s *Service) Groups(ctx context.Context, sessionID string) ([]whatsapp.Group, error) {
	return whatsapp.OpGroups().Do(ctx, s.wa, sessionID, whatsapp.None{})
}

// InviteText is the text that invites number to group jid: message, a
// blank line and the group's invite link (the link alone without one).
// Only an admin may read the link.
func (s *Service) InviteText(ctx context.Context, sessionID, jid, number, message string) (string, error) {
	gj, err := whatsapp.ParseGroupJID("jid", jid)
	if err != nil {
		return "", err
	}
	if _, err := whatsapp.ParseRecipient("number", number); err != nil {
		return "", err
	}
	if err := checkText("message", &message, maxInviteTextLen, false); err != nil {
		return "", err
	}
	link, err := whatsapp.OpGroupInviteLink().Do(ctx, s.wa, sessionID, whatsapp.InviteLinkRequest{JID: gj})
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(message) == "" {
		return link, nil
	}
	return message + "\n\n" + link, nil
}

// DemoteParticipants takes the admin role from participants of group jid:
// one outcome per participant, in their order.
func (s *Service) DemoteParticipants(ctx context.Context, sessionID, jid string, participants []string) ([]whatsapp.ParticipantOutcome, error) {
	return s.ChangeParticipants(ctx, sessionID, jid, whatsapp.ParticipantsDemote, participants)
}

// ChangeParticipants adds, removes, promotes or demotes participants of
// group jid, or approves or rejects their requests to join (action, one of
// whatsapp's ParticipantsAdd, …, RequestsReject): one outcome per
// participant, in their order.
func (s *Service) ChangeParticipants(ctx context.Context, sessionID, jid, action string, participants []string) ([]whatsapp.ParticipantOutcome, error) {
	gj, err := whatsapp.ParseGroupJID("jid", jid)
	if err != nil {
		return nil, err
	}
	if len(participants) == 0 {
		return nil, fault.InvalidField("participants", "participants must name at least one number")
	}
	users, err := parseUsers("participants", participants)
	if err != nil {
		return nil, err
	}
	return whatsapp.OpChangeParticipants().Do(ctx, s.wa, sessionID, whatsapp.GroupMembers{JID: gj, Participants: users, Action: action})
}

// groupTimers are the disappearing timers WhatsApp offers a group, in
// seconds (0: off).
var groupTimers = []uint32{0, 86400, 7 * 86400, 90 * 86400}

// Group reads group jid fresh from WhatsApp.
func (s *Service) Group(ctx context.Context, sessionID, jid string) (whatsapp.Group, error) {
	gj, err := whatsapp.ParseGroupJID("jid", jid)
	if err != nil {
		return whatsapp.Group{}, err
	}
	return whatsapp.OpGroup().Do(ctx, s.wa, sessionID, gj)
}

// InviteLink is the invite link of group jid; reset revokes the old one
// and makes a new one. Only an admin may.
func (s *Service) InviteLink(ctx context.Context, sessionID, jid string, reset bool) (string, error) {
	gj, err := whatsapp.ParseGroupJID("jid", jid)
	if err != nil {
		return "", err
	}
	return whatsapp.OpGroupInviteLink().Do(ctx, s.wa, sessionID, whatsapp.InviteLinkRequest{JID: gj, Reset: reset})
}

// maxInviteCodeLen bounds an invite code (WhatsApp's are 22 characters).
const maxInviteCodeLen = 64

// inviteCode reads an invite link (https://chat.whatsapp.com/<code>) or its
// bare code: letters and digits.
func inviteCode(field, link string) (string, error) {
	code := whatsapp.InviteCode(link)
	if code == "" {
		return "", fault.InvalidField(field, "%s must be an invite link such as https://chat.whatsapp.com/AbCdEfGhIjKlMnOpQrStUv or its code", field)
	}
	if len(code) > maxInviteCodeLen || strings.ContainsFunc(code, func(r rune) bool {
		return !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) {
		return "", fault.InvalidField(field, "%s %q is not an invite link: https://chat.whatsapp.com/ followed by a code of letters and digits (or the code alone)", field, fault.Clip(link, fault.QuoteLen))
	}
	return code, nil
}

// InviteInfo is the group an invite link leads to, without joining it.
func (s *Service) InviteInfo(ctx context.Context, sessionID, link string) (whatsapp.Group, error) {
	code, err := inviteCode("link", link)
	if err != nil {
		return whatsapp.Group{}, err
	}
	return whatsapp.OpGroupInviteInfo().Do(ctx, s.wa, sessionID, code)
}

// JoinGroup joins the group of an invite link; where its admins approve
// who joins, the answer has JoinPending set.
func (s *Service) JoinGroup(ctx context.Context, sessionID, link string) (whatsapp.Group, error) {
	code, err := inviteCode("link", link)
	if err != nil {
		return whatsapp.Group{}, err
	}
	return whatsapp.OpJoinGroup().Do(ctx, s.wa, sessionID, code)
}

// LeaveGroup has the account leave group jid.
func (s *Service) LeaveGroup(ctx context.Context, sessionID, jid string) error {
	gj, err := whatsapp.ParseGroupJID("jid", jid)
	if err != nil {
		return err
	}
	_, err = whatsapp.OpLeaveGroup().Do(ctx, s.wa, sessionID, gj)
	return err
}

// JoinRequests lists the requests to join group jid, oldest first. Only
// an admin may.
func (s *Service) JoinRequests(ctx context.Context, sessionID, jid string) ([]whatsapp.JoinRequest, error) {
	gj, err := whatsapp.ParseGroupJID("jid", jid)
	if err != nil {
		return nil, err
	}
	return whatsapp.OpJoinRequests().Do(ctx, s.wa, sessionID, gj)
}

// parseUsers reads a list of numbers or user JIDs, each named by its
// place in field.
func parseUsers(field string, in []string) ([]whatsapp.JID, error) {
	if len(in) > maxParticipants {
		return nil, fault.InvalidField(field, "%s must name at most %d users (got %d)", field, maxParticipants, len(in))
	}
	out := make([]whatsapp.JID, 0, len(in))
	seen := make(map[string]bool, len(in))
	for i, s := range in {
		f := fieldAt(field, i)
		jid, err := whatsapp.ParseRecipient(f, s)
		if err != nil {
			return nil, err
		}
		if jid.Server == "g.us" {
			return nil, fault.InvalidField(f, "%s must be a user, not a group", f)
		}
		if seen[jid.String()] {
			return nil, fault.InvalidField(f, "%s names %s again (got %q)", f, jid.User, fault.Clip(s, fault.QuoteLen))
		}
		seen[jid.String()] = true
		out = append(out, jid)
	}
	return out, nil
}

// checkText bounds a given text (nil: not given) in characters; a nonBlank
// one must not be blank.
func checkText(field string, v *string, max int, nonBlank bool) error {
	if v == nil {
		return nil
	}
	if nonBlank && strings.TrimSpace(*v) == "" {
		return fault.InvalidField(field, "%s must not be empty", field)
	}
	if !utf8.ValidString(*v) {
		return fault.InvalidField(field, "%s must be valid UTF-8", field)
	}
	if n := utf8.RuneCountInString(*v); n > max {
		return fault.InvalidField(field, "%s must be at most %d characters (got %d)", field, max, n)
	}
	return nil
}

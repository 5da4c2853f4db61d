package account

import (
	"context"
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
	link, err := whatsapp.OpGroupInviteLink().Do(ctx, s.wa, sessionID, gj)
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
	return whatsapp.OpDemoteParticipants().Do(ctx, s.wa, sessionID, whatsapp.GroupMembers{JID: gj, Participants: users})
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

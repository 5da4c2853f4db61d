package graph

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/wagraph/wagraph/graph/model"
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

func toGroup(g whatsapp.Group) *model.Group {
	m := &model.Group{
		ID: g.JID.String(), Name: g.Name, Description: g.Description,
		OnlyAdminsCanPost: g.OnlyAdminsCanPost, OnlyAdminsCanEditInfo: g.OnlyAdminsCanEditInfo,
		Participants: make([]*model.Participant, len(g.Participants)),
	}
	for i, p := range g.Participants {
		m.Participants[i] = &model.Participant{Jid: p.JID.String(), Phone: p.Phone, Role: p.Role}
	}
	return m
}

// parseUsers reads a list of numbers or user JIDs.
func parseUsers(field string, in []string) ([]whatsapp.JID, error) {
	if len(in) > maxParticipants {
		return nil, fault.InvalidField(field, "%s must name at most %d users (got %d)", field, maxParticipants, len(in))
	}
	out := make([]whatsapp.JID, 0, len(in))
	seen := make(map[string]bool, len(in))
	for i, s := range in {
		f := fmt.Sprintf("%s[%d]", field, i)
		jid, err := whatsapp.ParseRecipient(f, s)
		if err != nil {
			return nil, err
		}
		if jid.Server == "g.us" {
			return nil, fault.InvalidField(f, "%s must be a user, not a group", f)
		}
		if seen[jid.String()] {
			return nil, fault.InvalidField(f, "%s repeats %s", f, s)
		}
		seen[jid.String()] = true
		out = append(out, jid)
	}
	return out, nil
}

// checkGroupText bounds a subject or description; a given subject must not
// be blank.
func checkGroupText(field string, v *string, max int, nonBlank bool) error {
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

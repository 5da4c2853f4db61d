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

// parseUsers reads a list of numbers or user JIDs. field is the input's
// GraphQL path ("input.participants"): errors carry it in Field, and their
// message names the REST body's field ("participants[2]"), which a REST
// client reads.
func parseUsers(field string, in []string) ([]whatsapp.JID, error) {
	name := restField(field)
	if len(in) > maxParticipants {
		return nil, fault.InvalidField(field, "%s must name at most %d users (got %d)", name, maxParticipants, len(in))
	}
	out := make([]whatsapp.JID, 0, len(in))
	seen := make(map[string]bool, len(in))
	for i, s := range in {
		f := fmt.Sprintf("%s[%d]", name, i)
		jid, err := whatsapp.ParseRecipient(f, s)
		if err != nil {
			return nil, inGraphQLPath(field, name, err)
		}
		if jid.Server == "g.us" {
			return nil, fault.InvalidField(fmt.Sprintf("%s[%d]", field, i), "%s must be a user, not a group", f)
		}
		if seen[jid.String()] {
			return nil, fault.InvalidField(fmt.Sprintf("%s[%d]", field, i), "%s names %s again (got %q)", f, jid.User, fault.Clip(s, fault.QuoteLen))
		}
		seen[jid.String()] = true
		out = append(out, jid)
	}
	return out, nil
}

// restField is the REST body's name of an input's GraphQL path: the same
// name without the argument that wraps it ("input.subject" → "subject").
func restField(path string) string { return strings.TrimPrefix(path, "input.") }

// inGraphQLPath moves a fault about the REST field name (a prefix of its
// Field) to the GraphQL path, keeping the message that names the REST
// field.
func inGraphQLPath(path, name string, err error) error {
	f := fault.From(err)
	if f == nil || path == name {
		return err
	}
	c := *f
	if rest, ok := strings.CutPrefix(c.Field, name); ok {
		c.Field = path + rest
	}
	return &c
}

// checkGroupText bounds a subject or description; a given subject must not
// be blank. field is the GraphQL path; the message names the REST field.
func checkGroupText(field string, v *string, max int, nonBlank bool) error {
	if v == nil {
		return nil
	}
	name := restField(field)
	if nonBlank && strings.TrimSpace(*v) == "" {
		return fault.InvalidField(field, "%s must not be empty", name)
	}
	if !utf8.ValidString(*v) {
		return fault.InvalidField(field, "%s must be valid UTF-8", name)
	}
	if n := utf8.RuneCountInString(*v); n > max {
		return fault.InvalidField(field, "%s must be at most %d characters (got %d)", name, max, n)
	}
	return nil
}

package graph

import (
	"slices"
	"strings"

	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp"
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

// underInput moves a fault about one of the input object's fields (named
// as the REST body names it, "subject", "participants[2]") under the
// argument ("input.subject"); a fault about another argument ("jid") stays.
func underInput(err error, fields ...string) error {
	f := fault.From(err)
	if f != nil && slices.ContainsFunc(fields, func(name string) bool {
		return f.Field == name || strings.HasPrefix(f.Field, name+"[")
	}) {
		return inArgument("input", err)
	}
	return err
}

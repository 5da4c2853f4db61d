package graph

import (
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
// as the REST body names it, "subject", "participants[2]") to its GraphQL
// path under the argument ("input.subject"), keeping the message, which a
// REST client reads.
func underInput(err error, fields ...string) error {
	f := fault.From(err)
	if f == nil {
		return err
	}
	for _, name := range fields {
		if f.Field == name || strings.HasPrefix(f.Field, name+"[") {
			c := *f
			c.Field = "input." + f.Field
			return &c
		}
	}
	return err
}

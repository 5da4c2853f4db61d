package graph

import (
	"context"
	"fmt"
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
		Owner:        optionalJID(g.Owner), ApprovalMode: g.ApprovalMode,
		MemberAddMode: model.MemberAddMode(g.MemberAddMode), EphemeralSeconds: int(g.EphemeralSeconds),
		JoinRequestPending: g.JoinPending,
	}
	if m.MemberAddMode == "" {
		m.MemberAddMode = model.MemberAddModeAdmins
	}
	if !g.Created.IsZero() {
		created := g.Created
		m.CreatedAt = &created
	}
	for i, p := range g.Participants {
		m.Participants[i] = &model.Participant{Jid: p.JID.String(), Phone: p.Phone, Lid: optionalJID(p.LID), Role: p.Role}
	}
	return m
}

// optionalJID is nil for the empty JID.
func optionalJID(j whatsapp.JID) *string {
	if j.IsEmpty() {
		return nil
	}
	s := j.String()
	return &s
}

// changeParticipants runs a per-participant change and answers each
// participant keyed exactly as it was sent, as demote always has.
func (r *mutationResolver) changeParticipants(ctx context.Context, sessionID, jid, action string, participants []string) ([]*model.ParticipantResult, error) {
	if _, err := r.reachSessionID(ctx, sessionID); err != nil {
		return nil, err
	}
	outcomes, err := r.Account.ChangeParticipants(ctx, sessionID, jid, action, participants)
	if err != nil {
		return nil, err
	}
	if len(outcomes) != len(participants) {
		return nil, fmt.Errorf("%s: %d outcomes for %d participants", action, len(outcomes), len(participants))
	}
	out := make([]*model.ParticipantResult, len(participants))
	for i, o := range outcomes {
		res := &model.ParticipantResult{Participant: participants[i], Ok: o.OK, InviteLink: optional(o.InviteLink)}
		if !o.OK {
			code, msg := o.Code, o.Message
			res.Code, res.Message = &code, &msg
		}
		out[i] = res
	}
	return out, nil
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

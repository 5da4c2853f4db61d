package whatsapp

// Groups' members: adding, removing, promoting and demoting them, invite
// links, joining by link, leaving, and the requests to join a group whose
// admins approve who joins.

import (
	"context"
	"errors"
	"strings"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"

	"github.com/wagraph/wagraph/internal/fault"
)

// The participant changes of ChangeParticipants.
const (
	ParticipantsAdd     = "add"
	ParticipantsRemove  = "remove"
	ParticipantsPromote = "promote"
	ParticipantsDemote  = "demote"
	RequestsApprove     = "approve" // join requests
	RequestsReject      = "reject"
)

// JoinRequest is a request to join a group whose admins approve who joins.
type JoinRequest struct {
	JID         types.JID // as WhatsApp names the requester
	Phone       string    // "" when WhatsApp hides it
	LID         types.JID // empty when unknown
	RequestedAt time.Time
}

// ChangeParticipants adds, removes, promotes or demotes participants
// (action: ParticipantsAdd, …), or approves or rejects their requests to
// join (RequestsApprove, RequestsReject). WhatsApp answers each
// participant on its own: the outcomes come one per participant, in the
// order given, and a participant WhatsApp refused is a failed outcome
// (404 "not a participant", 403 not allowed, …), not an error. An add that
// a person's privacy settings refused offers the group's invite link in
// that outcome (when the account may read it). The error is for the
// request as a whole: not connected, the group unknown, and so on.
func (m *Manager) ChangeParticipants(ctx context.Context, sessionID string, jid types.JID, participants []types.JID, action string) ([]ParticipantOutcome, error) {
	cli, err := m.client(sessionID)
	if err != nil {
		return nil, err
	}
	var results []types.GroupParticipant
	switch action {
	case ParticipantsAdd, ParticipantsRemove, ParticipantsPromote, ParticipantsDemote:
		results, err = cli.UpdateGroupParticipants(ctx, jid, participants, whatsmeow.ParticipantChange(action))
	case RequestsApprove, RequestsReject:
		results, err = cli.UpdateGroupRequestParticipants(ctx, jid, participants, whatsmeow.ParticipantRequestChange(action))
	default:
		return nil, fault.New(fault.Internal, "unknown participant change %q", action)
	}
	if err != nil {
		return nil, groupFault(sessionID, jid, action+" participants", err)
	}
	out := make([]ParticipantOutcome, len(participants))
	link := ""
	for i, p := range participants {
		out[i] = ParticipantOutcome{JID: p, Message: "WhatsApp did not answer about this participant"}
		for _, r := range results {
			if !sameUser(p, r) {
				continue
			}
			out[i] = changeOutcome(p, r, action)
			if r.AddRequest != nil {
				if link == "" {
					link, _ = cli.GetGroupInviteLink(ctx, jid, false)
				}
				out[i].InviteLink = link
				if link != "" {
					out[i].Message += ": invite them with the group's link " + link
				}
			}
			break
		}
	}
	return out, nil
}

// DemoteParticipants takes the admin role from participants
// (ChangeParticipants with ParticipantsDemote).
func (m *Manager) DemoteParticipants(ctx context.Context, sessionID string, jid types.JID, participants []types.JID) ([]ParticipantOutcome, error) {
	return m.ChangeParticipants(ctx, sessionID, jid, participants, ParticipantsDemote)
}

// changeOutcome is WhatsApp's answer r about participant p of a change.
func changeOutcome(p types.JID, r types.GroupParticipant, action string) ParticipantOutcome {
	o := outcome(p, r.Error, false)
	switch {
	case r.Error == 403 && r.AddRequest != nil:
		o.Message = "their privacy settings do not allow the account to add them to groups"
	case r.Error == 500 && (action == ParticipantsAdd || action == RequestsApprove):
		o.Message = "the group is full"
	case r.Error == 404 && (action == RequestsApprove || action == RequestsReject):
		o.Message = "has not asked to join the group"
	}
	return o
}

// GroupInviteLink returns the group's invite link
// (https://chat.whatsapp.com/<code>); with reset the old one is revoked
// and a new one made. Only admins may.
func (m *Manager) GroupInviteLink(ctx context.Context, sessionID string, jid types.JID) (string, error) {
	return m.InviteLink(ctx, sessionID, InviteLinkRequest{JID: jid})
}

// InviteLinkRequest asks for a group's invite link, a new one with Reset.
type InviteLinkRequest struct {
	JID   types.JID
	Reset bool
}

// InviteLink returns the group's invite link, a new one after a reset.
func (m *Manager) InviteLink(ctx context.Context, sessionID string, req InviteLinkRequest) (string, error) {
	cli, err := m.client(sessionID)
	if err != nil {
		return "", err
	}
	action := "read the group's invite link"
	if req.Reset {
		action = "reset the group's invite link"
	}
	link, err := cli.GetGroupInviteLink(ctx, req.JID, req.Reset)
	if err != nil {
		return "", groupFault(sessionID, req.JID, action, err)
	}
	return link, nil
}

// InviteCode is the code of an invite link: the link itself
// (https://chat.whatsapp.com/<code>) or the bare code.
func InviteCode(link string) string {
	return strings.TrimPrefix(strings.TrimSpace(link), whatsmeow.InviteLinkPrefix)
}

// GroupInviteInfo is the group an invite code leads to, without joining.
func (m *Manager) GroupInviteInfo(ctx context.Context, sessionID, code string) (Group, error) {
	cli, err := m.client(sessionID)
	if err != nil {
		return Group{}, err
	}
	info, err := cli.GetGroupInfoFromLink(ctx, code)
	if err != nil {
		return Group{}, inviteFault(sessionID, "read the invite link", err)
	}
	return groupOf(ctx, cli, info), nil
}

// JoinGroup joins the group of an invite code. Where admins approve who
// joins, the account is not a member yet: the group is what the link
// shows, with JoinPending set.
func (m *Manager) JoinGroup(ctx context.Context, sessionID, code string) (Group, error) {
	cli, err := m.client(sessionID)
	if err != nil {
		return Group{}, err
	}
	before, err := cli.GetGroupInfoFromLink(ctx, code)
	if err != nil {
		return Group{}, inviteFault(sessionID, "join the group", err)
	}
	jid, err := cli.JoinGroupWithLink(ctx, code)
	if err != nil {
		return Group{}, inviteFault(sessionID, "join the group", err)
	}
	g, err := m.group(ctx, cli, sessionID, jid)
	if err == nil {
		return g, nil
	}
	if fault.From(err) != nil && fault.From(err).Code == fault.WhatsAppRefused && before.IsJoinApprovalRequired {
		// Not a member: the request waits for the admins.
		g := groupOf(ctx, cli, before)
		g.JoinPending = true
		return g, nil
	}
	return Group{}, err
}

// inviteFault classifies a failed use of an invite link: revoked, or no
// such link, get their own messages.
func inviteFault(id, action string, err error) error {
	switch {
	case errors.Is(err, whatsmeow.ErrInviteLinkRevoked):
		return fault.Wrap(err, fault.WhatsAppRefused, "session %s could not %s: the invite link was revoked", id, action)
	case errors.Is(err, whatsmeow.ErrInviteLinkInvalid):
		return fault.Wrap(err, fault.NotFound, "session %s could not %s: no group has this invite link", id, action)
	}
	var iq *whatsmeow.IQError
	if errors.As(err, &iq) && iq.Code == 419 {
		return fault.Wrap(err, fault.WhatsAppRefused, "session %s could not %s: the group is full", id, action)
	}
	return classify(id, action, err)
}

// LeaveGroup has the account leave the group.
func (m *Manager) LeaveGroup(ctx context.Context, sessionID string, jid types.JID) error {
	cli, err := m.client(sessionID)
	if err != nil {
		return err
	}
	if err := cli.LeaveGroup(ctx, jid); err != nil {
		return groupFault(sessionID, jid, "leave the group", err)
	}
	return nil
}

// JoinRequests lists the pending requests to join the group, oldest first;
// only admins may.
func (m *Manager) JoinRequests(ctx context.Context, sessionID string, jid types.JID) ([]JoinRequest, error) {
	cli, err := m.client(sessionID)
	if err != nil {
		return nil, err
	}
	reqs, err := cli.GetGroupRequestParticipants(ctx, jid)
	if err != nil {
		return nil, groupFault(sessionID, jid, "list the requests to join", err)
	}
	out := make([]JoinRequest, len(reqs))
	for i, r := range reqs {
		p := personOf(ctx, cli, r.JID)
		out[i] = JoinRequest{JID: r.JID, Phone: string(p.phoneText()), LID: p.lid, RequestedAt: r.RequestedAt}
	}
	return out, nil
}

package wafake

import (
	"slices"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"
)

// Groups whose admins approve who joins: joining by link while approval is
// on is a request, told to the requester's devices
// (membership_approval_request) and to the admins'
// (created_membership_requests); the requester may withdraw it and an admin
// approve or reject it (revoked_membership_requests). whatsmeow reports
// these notifications as GroupInfo's unknown changes.

// requestMethod is how the network's requests are made.
const requestMethod = "invite_link"

// approvalNode is the approval setting as WhatsApp renders it, in a group's
// description and in the notification of a change.
func approvalNode(on bool) waBinary.Node {
	state := "off"
	if on {
		state = "on"
	}
	return waBinary.Node{Tag: "membership_approval_mode", Content: []waBinary.Node{{Tag: "group_join", Attrs: waBinary.Attrs{"state": state}}}}
}

// setApprovalMode takes SetGroupJoinApprovalMode's
// <membership_approval_mode><group_join state="on|off"/>: admins only.
func setApprovalMode(g *group, actor string, req waBinary.Node) (groupChange, *iqError) {
	if !g.isAdmin(actor) {
		return groupChange{}, errNotAdmin
	}
	join, ok := req.GetOptionalChildByTag("group_join")
	state := join.AttrGetter().OptionalString("state")
	if !ok || (state != "on" && state != "off") {
		return groupChange{}, errBadRequest
	}
	if on := state == "on"; on != g.approval {
		g.approval = on
		return groupChange{notify: []waBinary.Node{approvalNode(on)}}, nil
	}
	return groupChange{}, nil
}

// adminPhones lists the group's admins.
func (g *group) adminPhones() []string {
	var out []string
	for _, m := range g.members {
		if m.role != RoleMember {
			out = append(out, m.phone)
		}
	}
	return out
}

// requestToJoin records actor's request to join g and answers the join as
// WhatsApp does: <membership_approval_request jid=group> (whatsmeow's
// JoinGroupWithLink returns that JID). A repeated request changes nothing.
func (n *Network) requestToJoin(g *group, actor string) ([]waBinary.Node, *iqError) {
	reply := []waBinary.Node{{Tag: "membership_approval_request", Attrs: waBinary.Attrs{"jid": g.jid()}}}
	n.mu.Lock()
	if slices.Contains(g.requests, actor) {
		n.mu.Unlock()
		return reply, nil
	}
	g.requests = append(g.requests, actor)
	own := n.devicesLocked([]string{actor})
	admins := n.devicesLocked(g.adminPhones())
	p := n.participantNodeLocked(groupMember{phone: actor})
	n.mu.Unlock()
	n.notifyGroup(own, g.jid(), actor, []waBinary.Node{{Tag: "membership_approval_request", Attrs: waBinary.Attrs{"request_method": requestMethod}}})
	n.notifyGroup(admins, g.jid(), actor, []waBinary.Node{{
		Tag: "created_membership_requests", Attrs: waBinary.Attrs{"request_method": requestMethod}, Content: []waBinary.Node{p},
	}})
	return reply, nil
}

// endJoinRequest ends the request of requester to join jid: withdrawn by
// the requester (answer false, actor the requester), or answered by the
// admin actor, approve adding it as a member. The admins and the requester
// are told.
func (n *Network) endJoinRequest(actor string, jid types.JID, requester string, answer, approve bool) error {
	n.mu.Lock()
	g := n.groups.byID[jid.User]
	switch {
	case g == nil || jid.Server != types.GroupServer:
		n.mu.Unlock()
		return &GroupError{Code: 404, Text: "item-not-found"}
	case !slices.Contains(g.requests, requester):
		n.mu.Unlock()
		return &GroupError{Code: 404, Text: "item-not-found"}
	case answer && !g.isAdmin(actor), !answer && actor != requester:
		n.mu.Unlock()
		return &GroupError{Code: 401, Text: "not-authorized"}
	}
	g.requests = slices.DeleteFunc(g.requests, func(p string) bool { return p == requester })
	p := n.participantNodeLocked(groupMember{phone: requester})
	change := waBinary.Node{Tag: "revoked_membership_requests", Content: []waBinary.Node{p}}
	to := append(g.adminPhones(), requester)
	if approve {
		g.members = append(g.members, groupMember{phone: requester, role: RoleMember})
		change = waBinary.Node{Tag: "add", Attrs: waBinary.Attrs{"reason": "approval"}, Content: []waBinary.Node{p}}
		to = g.phones()
	}
	targets := n.devicesLocked(to)
	n.mu.Unlock()
	n.notifyGroup(targets, jid, actor, []waBinary.Node{change})
	return nil
}

package wafake

import (
	"slices"
	"time"

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
	if g.requestedAt == nil {
		g.requestedAt = map[string]time.Time{}
	}
	g.requestedAt[actor] = time.Now()
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
	g.dropRequest(requester)
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

// dropRequest forgets phone's request to join.
func (g *group) dropRequest(phone string) {
	g.requests = slices.DeleteFunc(g.requests, func(p string) bool { return p == phone })
	delete(g.requestedAt, phone)
}

// memberAddModeNode is who may add members as WhatsApp renders it:
// <member_add_mode>admin_add|all_member_add</member_add_mode>.
func memberAddModeNode(all bool) waBinary.Node {
	mode := "admin_add"
	if all {
		mode = "all_member_add"
	}
	return waBinary.Node{Tag: "member_add_mode", Content: []byte(mode)}
}

// setMemberAddMode takes SetGroupMemberAddMode's
// <member_add_mode>admin_add|all_member_add</member_add_mode>: admins only.
// whatsmeow reads the notification of a change as an unknown change.
func setMemberAddMode(g *group, actor string, req waBinary.Node) (groupChange, *iqError) {
	if !g.isAdmin(actor) {
		return groupChange{}, errNotAdmin
	}
	mode := contentString(req.Content)
	if mode != "admin_add" && mode != "all_member_add" {
		return groupChange{}, errBadRequest
	}
	if all := mode == "all_member_add"; all != g.allAdd {
		g.allAdd = all
		return groupChange{notify: []waBinary.Node{memberAddModeNode(all)}}, nil
	}
	return groupChange{}, nil
}

// listJoinRequestsLocked answers GetGroupRequestParticipants: the pending
// requests, oldest first, for admins only.
func (n *Network) listJoinRequestsLocked(g *group, actor string) (groupChange, *iqError) {
	if !g.isAdmin(actor) {
		return groupChange{}, errNotAdmin
	}
	var list []waBinary.Node
	for _, p := range g.requests {
		list = append(list, waBinary.Node{Tag: "membership_approval_request", Attrs: waBinary.Attrs{
			"jid": pnJID(p), "request_time": unixString(g.requestedAt[p]),
		}})
	}
	return groupChange{reply: []waBinary.Node{{Tag: "membership_approval_requests", Content: list}}}, nil
}

// answerJoinRequestsLocked takes UpdateGroupRequestParticipants'
// <membership_requests_action><approve|reject><participant/>…: admins
// only; per participant, 404 when that one asked nothing (or is not on
// WhatsApp). The approved are added (the members are told, as of any
// add); a rejection is told to the admins and the requester.
func (n *Network) answerJoinRequestsLocked(g *group, actor string, req waBinary.Node) (groupChange, *iqError) {
	if !g.isAdmin(actor) {
		return groupChange{}, errNotAdmin
	}
	children := req.GetChildren()
	if len(children) != 1 || (children[0].Tag != "approve" && children[0].Tag != "reject") || len(children[0].GetChildrenByTag("participant")) == 0 {
		return groupChange{}, errBadRequest
	}
	approve := children[0].Tag == "approve"
	var results, done []waBinary.Node
	var told []string
	for _, p := range children[0].GetChildrenByTag("participant") {
		jid, _ := p.Attrs["jid"].(types.JID)
		res := waBinary.Node{Tag: "participant", Attrs: waBinary.Attrs{"jid": jid}}
		phone, ok := n.phoneOfLocked(jid)
		switch {
		case !ok || !slices.Contains(g.requests, phone):
			res.Attrs["error"] = "404"
		case approve && len(g.members) >= maxMembers:
			res.Attrs["error"] = "500"
		default:
			g.dropRequest(phone)
			if approve {
				g.members = append(g.members, groupMember{phone: phone, role: RoleMember})
			}
			done = append(done, n.participantNodeLocked(groupMember{phone: phone}))
			told = append(told, phone)
		}
		results = append(results, res)
	}
	ch := groupChange{reply: []waBinary.Node{{Tag: "membership_requests_action", Content: []waBinary.Node{{Tag: children[0].Tag, Content: results}}}}}
	switch {
	case len(done) == 0:
	case approve:
		ch.notify = []waBinary.Node{{Tag: "add", Attrs: waBinary.Attrs{"reason": "approval"}, Content: done}}
	default:
		ch.notify = []waBinary.Node{{Tag: "revoked_membership_requests", Content: done}}
		ch.only = append(g.adminPhones(), told...)
	}
	return ch, nil
}

package wafake

import (
	"slices"
	"strconv"
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"
)

// Changes to one group, run under n.mu by groupOp (groups.go): each returns
// the IQ result and what the members are told.

func setSubject(g *group, actor string, req waBinary.Node) (groupChange, *iqError) {
	if g.locked && !g.isAdmin(actor) {
		return groupChange{}, errNotAdmin
	}
	subject := contentString(req.Content)
	if subject == "" || len([]rune(subject)) > maxSubject {
		return groupChange{}, errNotAcceptable
	}
	g.subject, g.subjectAt, g.subjectBy = subject, time.Now(), actor
	return groupChange{notify: []waBinary.Node{{Tag: "subject", Attrs: waBinary.Attrs{
		"subject": subject, "s_t": unixString(g.subjectAt), "s_o": pnJID(actor),
	}}}}, nil
}

// setDescription takes SetGroupTopic's <description id prev [delete]> and
// SetGroupDescription's bare <description><body/>: a prev that is not the
// current description's id is a conflict, as on WhatsApp.
func setDescription(g *group, actor string, req waBinary.Node) (groupChange, *iqError) {
	if g.locked && !g.isAdmin(actor) {
		return groupChange{}, errNotAdmin
	}
	ag := req.AttrGetter()
	id, prev := ag.OptionalString("id"), ag.OptionalString("prev")
	if prev != "" && prev != g.descID {
		return groupChange{}, &iqError{409, "conflict"}
	}
	body := ""
	if b, ok := req.GetOptionalChildByTag("body"); ok {
		body = contentString(b.Content)
	}
	if ag.OptionalString("delete") == "true" {
		body = ""
	}
	if len([]rune(body)) > maxDescription {
		return groupChange{}, errNotAcceptable
	}
	if id == "" {
		id = newMessageID()
	}
	g.desc, g.descID, g.descAt, g.descBy = body, id, time.Now(), actor
	change := waBinary.Node{Tag: "description", Attrs: waBinary.Attrs{"id": id}}
	if body == "" {
		change.Content = []waBinary.Node{{Tag: "delete"}}
	} else {
		change.Content = []waBinary.Node{{Tag: "body", Content: []byte(body)}}
	}
	return groupChange{notify: []waBinary.Node{change}}, nil
}

// setFlag switches announce or locked, which only admins may, or the
// disappearing timer, which any member may unless the group is locked.
func setFlag(g *group, actor string, req waBinary.Node) (groupChange, *iqError) {
	timer := req.Tag == "ephemeral" || req.Tag == "not_ephemeral"
	if !g.isAdmin(actor) && (!timer || g.locked) {
		return groupChange{}, errNotAdmin
	}
	change := waBinary.Node{Tag: req.Tag}
	switch req.Tag {
	case "announcement", "not_announcement":
		g.version++
		g.announce = req.Tag == "announcement"
		change.Attrs = waBinary.Attrs{"v_id": strconv.Itoa(g.version)}
	case "locked", "unlocked":
		g.locked = req.Tag == "locked"
	case "ephemeral":
		// Only the durations WhatsApp's apps offer (24 h, 7 d, 90 d); the
		// server refuses others (whatsmeow: ErrInvalidDisappearingTimer).
		exp := req.AttrGetter().OptionalInt("expiration")
		if exp != 86400 && exp != 7*86400 && exp != 90*86400 {
			return groupChange{}, errBadRequest
		}
		g.ephemeral = uint32(exp)
		change.Attrs = waBinary.Attrs{"expiration": strconv.Itoa(exp)}
	case "not_ephemeral":
		g.ephemeral = 0
	}
	return groupChange{notify: []waBinary.Node{change}}, nil
}

// inviteCode answers the group's invite code, a new one after a reset; both
// are for admins only (whatsmeow: ErrGroupInviteLinkUnauthorized).
func inviteCode(g *group, actor string, reset bool) (groupChange, *iqError) {
	if !g.isAdmin(actor) {
		return groupChange{}, errNotAdmin
	}
	ch := groupChange{reply: []waBinary.Node{{Tag: "invite", Attrs: waBinary.Attrs{"code": g.invite}}}}
	if reset {
		// The old link stops working (410 gone to whoever uses it): the
		// members are told the new one.
		g.revoked = append(g.revoked, g.invite)
		g.invite = newInviteCode()
		ch.reply[0].Attrs["code"] = g.invite
		ch.notify = []waBinary.Node{{Tag: "invite", Attrs: waBinary.Attrs{"code": g.invite}}}
	}
	return ch, nil
}

// changeParticipantsLocked adds, removes, promotes or demotes. WhatsApp
// answers each participant on its own: no error attribute when done, else
// 403 (the caller may not: not an admin, or, for an add, the person's
// privacy settings, told by an <add_request> to invite them instead), 404
// (not on WhatsApp, or not a member), 409 (already a member) or 500 (the
// group is full). Only admins change members, except that every member
// adds when the group's member-add mode is all_member_add.
func (n *Network) changeParticipantsLocked(g *group, actor string, req waBinary.Node) (groupChange, *iqError) {
	action := req.Tag
	if len(req.GetChildrenByTag("participant")) == 0 {
		return groupChange{}, errBadRequest // a change of nobody
	}
	allowed := g.isAdmin(actor) || (action == "add" && g.allAdd)
	var results, done []waBinary.Node
	var removed []string
	for _, p := range req.GetChildrenByTag("participant") {
		jid, _ := p.Attrs["jid"].(types.JID)
		res := waBinary.Node{Tag: "participant", Attrs: waBinary.Attrs{"jid": jid}}
		phone, ok := n.phoneOfLocked(jid)
		role := ""
		if ok {
			role = g.role(phone)
		}
		code := 0
		switch {
		case !allowed:
			code = 403
		case !ok:
			code = 404
		case action == "add" && role != "":
			code = 409
		case action != "add" && role == "":
			code = 404
		case action == "add" && len(g.members) >= maxMembers:
			code = 500
		case action == "add" && !n.addableLocked(phone, actor):
			code = 403
			res.Content = []waBinary.Node{{Tag: "add_request", Attrs: waBinary.Attrs{
				"code": newInviteCode(), "expiration": unixString(time.Now().Add(3 * 24 * time.Hour)),
			}}}
		case action == "add":
			g.members = append(g.members, groupMember{phone: phone, role: RoleMember})
			g.requests = slices.DeleteFunc(g.requests, func(r string) bool { return r == phone })
		case action == "remove":
			g.members = slices.DeleteFunc(g.members, func(m groupMember) bool { return m.phone == phone })
			removed = append(removed, phone)
		case action == "promote" && role == RoleMember:
			g.setRole(phone, RoleAdmin)
		case action == "demote":
			g.setRole(phone, RoleMember)
		}
		if code != 0 {
			res.Attrs["error"] = strconv.Itoa(code)
		} else {
			done = append(done, n.participantNodeLocked(groupMember{phone: phone}))
		}
		results = append(results, res)
	}
	ch := groupChange{reply: []waBinary.Node{{Tag: action, Content: results}}, extra: removed}
	if len(done) > 0 {
		ch.notify = append([]waBinary.Node{{Tag: action, Content: done}}, n.keepAnAdminLocked(g)...)
	}
	return ch, nil
}

// addableLocked reports whether the account of phone lets actor add it to
// groups: its groupadd privacy is "all", or it is actor itself. The
// network keeps no address books, so "contacts" and "contact_blacklist"
// refuse every adder, as they refuse one not in the contacts.
func (n *Network) addableLocked(phone, actor string) bool {
	a := n.accounts[phone]
	return phone == actor || a == nil || a.state.privacyOf(types.PrivacySettingTypeGroupAdd) == types.PrivacySettingAll
}

// keepAnAdminLocked promotes the longest-standing member when the last
// admin is gone, as WhatsApp does, so that a group is never stuck; it
// returns the <promote> to add to the notification.
func (n *Network) keepAnAdminLocked(g *group) []waBinary.Node {
	if len(g.members) == 0 || slices.ContainsFunc(g.members, func(m groupMember) bool { return m.role != RoleMember }) {
		return nil
	}
	g.members[0].role = RoleAdmin
	return []waBinary.Node{{Tag: "promote", Content: []waBinary.Node{n.participantNodeLocked(g.members[0])}}}
}

package wafake

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"
)

// What the phone of a member does to a group, as its linked devices would
// through the group IQs: the same rules, and every member's linked devices
// are told (w:gp2 notifications, picture notifications) — the session under
// test among them.

// GroupError is the group server's refusal of a phone's request, with
// WhatsApp's code (401 not an admin, 403 not a member, 404 no such group or
// member, 406 not acceptable, 409 conflict).
type GroupError struct {
	Code int
	Text string
}

func (e *GroupError) Error() string {
	return fmt.Sprintf("wafake: group request refused: %d %s", e.Code, e.Text)
}

// phoneGroupRequest sends req to the group server (to: a group, or the
// server itself) as the phone of account phone.
func (n *Network) phoneGroupRequest(phone string, to types.JID, typ string, req waBinary.Node) ([]waBinary.Node, error) {
	n.mu.Lock()
	_, err := n.accountLocked(phone)
	n.mu.Unlock()
	if err != nil {
		return nil, err
	}
	reply, ierr := n.groupRequest(phone, typ, to, req)
	if ierr != nil {
		return nil, &GroupError{Code: ierr.code, Text: ierr.text}
	}
	return reply, nil
}

// CreateGroup is the phone of account phone creating a group with members
// (phone numbers); their linked devices learn it (JoinedGroup).
func (n *Network) CreateGroup(phone, subject string, members ...string) (types.JID, error) {
	req := waBinary.Node{Tag: "create", Attrs: waBinary.Attrs{"subject": subject}}
	var ps []waBinary.Node
	for _, m := range members {
		ps = append(ps, waBinary.Node{Tag: "participant", Attrs: waBinary.Attrs{"jid": pnJID(m)}})
	}
	req.Content = ps
	reply, err := n.phoneGroupRequest(phone, types.GroupServerJID, "set", req)
	if err != nil {
		return types.EmptyJID, err
	}
	id, _ := reply[0].Attrs["id"].(string)
	return types.NewJID(id, types.GroupServer), nil
}

// SetGroupSubject is the phone renaming the group jid.
func (n *Network) SetGroupSubject(phone string, jid types.JID, subject string) error {
	_, err := n.phoneGroupRequest(phone, jid, "set", waBinary.Node{Tag: "subject", Content: []byte(subject)})
	return err
}

// SetGroupTopic is the phone setting the group's description ("" removes
// it).
func (n *Network) SetGroupTopic(phone string, jid types.JID, topic string) error {
	req := waBinary.Node{Tag: "description", Attrs: waBinary.Attrs{"id": newMessageID()}}
	if topic == "" {
		req.Attrs["delete"] = "true"
	} else {
		req.Content = []waBinary.Node{{Tag: "body", Content: []byte(topic)}}
	}
	_, err := n.phoneGroupRequest(phone, jid, "set", req)
	return err
}

// SetGroupAnnounce is the phone of an admin letting only admins send (or
// everyone again).
func (n *Network) SetGroupAnnounce(phone string, jid types.JID, on bool) error {
	return n.groupSwitch(phone, jid, on, "announcement", "not_announcement")
}

// SetGroupLocked is the phone of an admin letting only admins edit the
// group's info (or everyone again).
func (n *Network) SetGroupLocked(phone string, jid types.JID, on bool) error {
	return n.groupSwitch(phone, jid, on, "locked", "unlocked")
}

func (n *Network) groupSwitch(phone string, jid types.JID, on bool, onTag, offTag string) error {
	tag := offTag
	if on {
		tag = onTag
	}
	_, err := n.phoneGroupRequest(phone, jid, "set", waBinary.Node{Tag: tag})
	return err
}

// SetGroupDisappearing is the phone setting the group's disappearing timer
// (0 turns it off; otherwise 24 h, 7 d or 90 d).
func (n *Network) SetGroupDisappearing(phone string, jid types.JID, d time.Duration) error {
	req := waBinary.Node{Tag: "not_ephemeral"}
	if d > 0 {
		req = waBinary.Node{Tag: "ephemeral", Attrs: waBinary.Attrs{"expiration": strconv.Itoa(int(d / time.Second))}}
	}
	_, err := n.phoneGroupRequest(phone, jid, "set", req)
	return err
}

// SetGroupApproval is the phone of an admin turning on (or off) the
// approval of who joins by link.
func (n *Network) SetGroupApproval(phone string, jid types.JID, on bool) error {
	_, err := n.phoneGroupRequest(phone, jid, "set", approvalNode(on))
	return err
}

// UpdateGroupParticipants is the phone of an admin adding, removing,
// promoting or demoting members (action add, remove, promote, demote). A
// participant the server refuses fails the call, naming each.
func (n *Network) UpdateGroupParticipants(phone string, jid types.JID, action string, phones ...string) error {
	switch action {
	case "add", "remove", "promote", "demote":
	default:
		return &ValueError{What: "a participant action", Value: action}
	}
	req := waBinary.Node{Tag: action}
	var ps []waBinary.Node
	for _, p := range phones {
		ps = append(ps, waBinary.Node{Tag: "participant", Attrs: waBinary.Attrs{"jid": pnJID(p)}})
	}
	req.Content = ps
	reply, err := n.phoneGroupRequest(phone, jid, "set", req)
	if err != nil {
		return err
	}
	var refused []string
	for _, r := range reply[0].GetChildren() {
		if code, ok := r.Attrs["error"].(string); ok {
			refused = append(refused, fmt.Sprintf("%v: %s", r.Attrs["jid"], code))
		}
	}
	if len(refused) > 0 {
		return fmt.Errorf("wafake: %s refused for %s", action, strings.Join(refused, ", "))
	}
	return nil
}

// ResetGroupInvite is the phone of an admin resetting the group's invite
// link; it returns the new code.
func (n *Network) ResetGroupInvite(phone string, jid types.JID) (string, error) {
	reply, err := n.phoneGroupRequest(phone, jid, "set", waBinary.Node{Tag: "invite"})
	if err != nil {
		return "", err
	}
	code, _ := reply[0].Attrs["code"].(string)
	return code, nil
}

// LeaveGroup is the phone leaving the group.
func (n *Network) LeaveGroup(phone string, jid types.JID) error {
	_, err := n.phoneGroupRequest(phone, types.GroupServerJID, "set", waBinary.Node{
		Tag: "leave", Content: []waBinary.Node{{Tag: "group", Attrs: waBinary.Attrs{"id": jid}}},
	})
	return err
}

// RequestJoinGroup is the phone joining by invite code: a member at once,
// or, where admins approve, a request (the group's JID either way).
func (n *Network) RequestJoinGroup(phone, code string) (types.JID, error) {
	reply, err := n.phoneGroupRequest(phone, types.GroupServerJID, "set", waBinary.Node{Tag: "invite", Attrs: waBinary.Attrs{"code": code}})
	if err != nil {
		return types.EmptyJID, err
	}
	jid, _ := reply[0].Attrs["jid"].(types.JID)
	return jid, nil
}

// CancelJoinRequest is the phone withdrawing its request to join jid.
func (n *Network) CancelJoinRequest(phone string, jid types.JID) error {
	return n.endJoinRequest(phone, jid, phone, false, false)
}

// AnswerJoinRequest is the phone of an admin approving (adding) or
// rejecting requester's request to join jid.
func (n *Network) AnswerJoinRequest(phone string, jid types.JID, requester string, approve bool) error {
	return n.endJoinRequest(phone, jid, requester, true, approve)
}

// SetGroupPicture is the phone setting the group's picture (a JPEG; nil
// removes it); it returns the picture id ("" when removed).
func (n *Network) SetGroupPicture(phone string, jid types.JID, jpeg []byte) (string, error) {
	req := waBinary.Node{Tag: "iq"}
	if jpeg != nil {
		req.Content = []waBinary.Node{{Tag: "picture", Attrs: waBinary.Attrs{"type": "image"}, Content: jpeg}}
	}
	n.mu.Lock()
	g := n.groups.byID[jid.User]
	if g == nil || jid.Server != types.GroupServer {
		n.mu.Unlock()
		return "", &GroupError{Code: 404, Text: "item-not-found"}
	}
	reply, change, ierr := setGroupPicture(g, phone, &req)
	var targets []*companion
	if ierr == nil {
		targets = n.devicesLocked(g.phones())
	}
	n.mu.Unlock()
	if ierr != nil {
		return "", &GroupError{Code: ierr.code, Text: ierr.text}
	}
	n.notify(targets, jid, "picture", []waBinary.Node{change})
	if len(reply) == 0 {
		return "", nil
	}
	id, _ := reply[0].Attrs["id"].(string)
	return id, nil
}

// DeleteGroup is the phone of the group's creator (its superadmin)
// deleting it: the members are told and the group is gone.
func (n *Network) DeleteGroup(phone string, jid types.JID) error {
	n.mu.Lock()
	g := n.groups.byID[jid.User]
	switch {
	case g == nil || jid.Server != types.GroupServer:
		n.mu.Unlock()
		return &GroupError{Code: 404, Text: "item-not-found"}
	case g.role(phone) != RoleSuperAdmin:
		n.mu.Unlock()
		return &GroupError{Code: 401, Text: "not-authorized"}
	}
	delete(n.groups.byID, jid.User)
	targets := n.devicesLocked(g.phones())
	n.mu.Unlock()
	n.notifyGroup(targets, jid, phone, []waBinary.Node{{Tag: "delete", Attrs: waBinary.Attrs{"reason": "delete"}}})
	return nil
}

package wafake

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"
)

// Groups as the network keeps them (sandbox.md), served over the w:g2 IQ
// namespace in the shapes whatsmeow's group.go parses. Every change is
// pushed to the members as a w:gp2 notification (groupmsg.go).

// groupState is the network's part for groups; n.mu
// guards it. The zero value is ready.
type groupState struct {
	byID map[string]*group // by the group JID's user part
}

type group struct {
	id        string
	created   time.Time
	creator   string // phone of the creator
	subject   string
	subjectAt time.Time
	subjectBy string
	desc      string
	descID    string
	descAt    time.Time
	descBy    string
	announce  bool
	locked    bool
	ephemeral uint32 // disappearing timer in seconds, 0 when off
	invite    string
	picture   groupPicture
	version   int // the v_id whatsmeow requires on announcement changes
	members   []groupMember
	// approval: admins approve who joins by link; requests are the phones
	// waiting for it, in order (groupjoin.go).
	approval bool
	requests []string
	// requestedAt is when each of requests was made.
	requestedAt map[string]time.Time
	// allAdd: every member may add members (member_add_mode
	// all_member_add), not only admins.
	allAdd bool
	// revoked are the invite codes reset replaced: joining with one is
	// 410 gone, as WhatsApp answers a revoked link.
	revoked []string
}

// maxMembers is WhatsApp's limit of members in a group: an add beyond it
// fails for that participant (500), a join by link is refused (419).
const maxMembers = 1024

type groupMember struct {
	phone string
	role  string // RoleMember, RoleAdmin or RoleSuperAdmin
}

// Participant roles in GroupInfo.
const (
	RoleMember     = "member"
	RoleAdmin      = "admin"
	RoleSuperAdmin = "superadmin"
)

// GroupInfo is the network's view of a group.
type GroupInfo struct {
	JID           types.JID
	Subject       string
	Description   string
	Announce      bool
	Locked        bool
	InviteCode    string
	PictureSHA256 string // hex of the current picture's SHA-256, "" without one
	Disappearing  time.Duration
	Participants  []GroupParticipant
	// Creator is the phone of the account that created it.
	Creator string
	Created time.Time
	// Approval: admins approve who joins by link; Requests are the phones
	// waiting, in order. AllMembersAdd: every member may add members.
	Approval      bool
	Requests      []string
	AllMembersAdd bool
}

// GroupParticipant is a member of a group and its role.
type GroupParticipant struct {
	Phone string
	Role  string // RoleMember, RoleAdmin or RoleSuperAdmin
}

// Group returns the network's view of the group jid.
func (n *Network) Group(jid types.JID) (GroupInfo, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	g := n.groups.byID[jid.User]
	if g == nil || jid.Server != types.GroupServer {
		return GroupInfo{}, false
	}
	info := GroupInfo{
		JID: g.jid(), Subject: g.subject, Description: g.desc,
		Announce: g.announce, Locked: g.locked, InviteCode: g.invite,
		Disappearing: time.Duration(g.ephemeral) * time.Second,
		Creator:      g.creator, Created: g.created,
		Approval: g.approval, Requests: slices.Clone(g.requests), AllMembersAdd: g.allAdd,
	}
	if p := g.picture.jpeg; p != nil {
		sum := sha256.Sum256(p)
		info.PictureSHA256 = hex.EncodeToString(sum[:])
	}
	for _, m := range g.members {
		info.Participants = append(info.Participants, GroupParticipant{Phone: m.phone, Role: m.role})
	}
	return info, true
}

func (g *group) jid() types.JID { return types.NewJID(g.id, types.GroupServer) }

// role is the phone's role in the group, "" when it is not a member.
func (g *group) role(phone string) string {
	for _, m := range g.members {
		if m.phone == phone {
			return m.role
		}
	}
	return ""
}

func (g *group) isAdmin(phone string) bool {
	r := g.role(phone)
	return r == RoleAdmin || r == RoleSuperAdmin
}

func (g *group) setRole(phone, role string) {
	for i := range g.members {
		if g.members[i].phone == phone {
			g.members[i].role = role
		}
	}
}

func (g *group) phones() []string {
	out := make([]string, len(g.members))
	for i, m := range g.members {
		out[i] = m.phone
	}
	return out
}

var (
	errGroupNotFound = &iqError{404, "item-not-found"}
	errNotInGroup    = &iqError{403, "forbidden"}
	errNotAdmin      = &iqError{401, "not-authorized"}
	errBadRequest    = &iqError{400, "bad-request"}
	errNotAcceptable = &iqError{406, "not-acceptable"}
	errInviteRevoked = &iqError{410, "gone"}
	errGroupFull     = &iqError{419, "resource-limit"}
)

// maxSubject is WhatsApp's current limit on group names (whatsmeow's comment
// still says 25); longer names are refused with 406 as the server does.
const maxSubject = 100

// maxDescription is WhatsApp's limit on group descriptions; a longer one is
// refused with 406.
const maxDescription = 2048

// groupChange is what one operation on a group produced: the IQ result,
// the children of the w:gp2 notification (none: nothing to tell) and
// phones that are told although no longer members (the removed).
type groupChange struct {
	reply  []waBinary.Node
	notify []waBinary.Node
	extra  []string
	// only, when set, are the phones told instead of the members: a
	// rejected join request is told to the admins and the requester.
	only []string
}

// handleGroupIQ serves the w:g2 namespace: operations on the group server
// SetRole gives a member of a group a role, as the phone of one of its
// admins would on its own (tests set up admins to demote with it). Members'
// devices are not notified: whatsmeow reads roles fresh from group info.
func (n *Network) SetRole(jid types.JID, phone, role string) error {
	if role != RoleMember && role != RoleAdmin && role != RoleSuperAdmin {
		return fmt.Errorf("wafake: role %q is not member, admin or superadmin", role)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	g := n.groups.byID[jid.User]
	if g == nil || jid.Server != types.GroupServer {
		return fmt.Errorf("wafake: no group %s", jid)
	}
	for i := range g.members {
		if g.members[i].phone == phone {
			g.members[i].role = role
			return nil
		}
	}
	return fmt.Errorf("wafake: %s is not a member of %s", phone, jid)
}

// itself (create, participating, leave, joining by link) and on one group.
func (n *Network) handleGroupIQ(c *conn, node *waBinary.Node) ([]waBinary.Node, *iqError) {
	children := node.GetChildren()
	if len(children) == 0 {
		return nil, errBadRequest
	}
	to, _ := node.Attrs["to"].(types.JID)
	return n.groupRequest(c.dev.acct.phone, node.AttrGetter().String("type"), to, children[0])
}

// groupRequest is one request of the account actor to the group server:
// from one of its linked devices (an IQ) or from its phone (groupphone.go).
func (n *Network) groupRequest(actor, typ string, to types.JID, req waBinary.Node) ([]waBinary.Node, *iqError) {
	if to.Server != types.GroupServer {
		return nil, errBadRequest
	}
	if to.User == "" {
		switch {
		case req.Tag == "create" && typ == "set":
			return n.createGroup(actor, req)
		case req.Tag == "participating":
			return n.participating(actor), nil
		case req.Tag == "leave":
			return n.leaveGroups(actor, req)
		case req.Tag == "invite":
			return n.joinByLink(actor, typ == "set", req)
		}
		return nil, &iqError{501, "feature-not-implemented"}
	}
	return n.groupOp(to, actor, func(g *group) (groupChange, *iqError) {
		switch req.Tag {
		case "query":
			return groupChange{reply: []waBinary.Node{n.groupNodeLocked(g)}}, nil
		case "subject":
			return setSubject(g, actor, req)
		case "description":
			return setDescription(g, actor, req)
		case "announcement", "not_announcement", "locked", "unlocked", "ephemeral", "not_ephemeral":
			return setFlag(g, actor, req)
		case "invite":
			return inviteCode(g, actor, typ == "set")
		case "add", "remove", "promote", "demote":
			return n.changeParticipantsLocked(g, actor, req)
		case "membership_approval_mode":
			return setApprovalMode(g, actor, req)
		case "member_add_mode":
			return setMemberAddMode(g, actor, req)
		case "membership_approval_requests":
			return n.listJoinRequestsLocked(g, actor)
		case "membership_requests_action":
			return n.answerJoinRequestsLocked(g, actor, req)
		}
		return groupChange{}, &iqError{501, "feature-not-implemented"}
	})
}

// groupOp runs fn on the group to under n.mu for a member, then tells every
// member's linked devices what changed.
func (n *Network) groupOp(to types.JID, actor string, fn func(*group) (groupChange, *iqError)) ([]waBinary.Node, *iqError) {
	n.mu.Lock()
	g := n.groups.byID[to.User]
	if g == nil {
		n.mu.Unlock()
		return nil, errGroupNotFound
	}
	if g.role(actor) == "" {
		n.mu.Unlock()
		return nil, errNotInGroup
	}
	ch, err := fn(g)
	var targets []*companion
	if err == nil && len(ch.notify) > 0 {
		to := append(g.phones(), ch.extra...)
		if ch.only != nil {
			to = ch.only
		}
		targets = n.devicesLocked(to)
	}
	n.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if len(ch.notify) > 0 {
		n.notifyGroup(targets, g.jid(), actor, ch.notify)
	}
	return ch.reply, nil
}

func (n *Network) createGroup(actor string, req waBinary.Node) ([]waBinary.Node, *iqError) {
	ag := req.AttrGetter()
	subject, key := ag.OptionalString("subject"), ag.OptionalString("key")
	if subject == "" || len([]rune(subject)) > maxSubject {
		return nil, errNotAcceptable
	}
	now := time.Now()
	n.mu.Lock()
	if n.groups.byID == nil {
		n.groups.byID = map[string]*group{}
	}
	g := &group{
		id: n.newGroupIDLocked(), created: now, creator: actor,
		subject: subject, subjectAt: now, subjectBy: actor,
		invite: newInviteCode(), members: []groupMember{{phone: actor, role: RoleSuperAdmin}},
	}
	var refused []waBinary.Node
	for _, p := range req.GetChildren() {
		switch p.Tag {
		case "participant":
			jid, _ := p.Attrs["jid"].(types.JID)
			phone, ok := n.phoneOfLocked(jid)
			if !ok {
				// Not on WhatsApp: 404, the code WhatsApp gives for
				// unregistered numbers.
				refused = append(refused, waBinary.Node{Tag: "participant", Attrs: waBinary.Attrs{"jid": jid, "error": "404"}})
			} else if g.role(phone) == "" {
				g.members = append(g.members, groupMember{phone: phone, role: RoleMember})
			}
		case "locked":
			g.locked = true
		case "announcement":
			g.announce = true
		case "ephemeral":
			g.ephemeral = uint32(p.AttrGetter().OptionalInt("expiration"))
		}
	}
	n.groups.byID[g.id] = g
	gnode := n.groupNodeLocked(g)
	targets := n.devicesLocked(g.phones())
	n.mu.Unlock()

	reply := gnode
	reply.Content = slices.Concat(gnode.GetChildren(), refused) // the refused are told in the reply only
	create := waBinary.Node{Tag: "create", Attrs: waBinary.Attrs{"type": "new"}, Content: []waBinary.Node{gnode}}
	if key != "" {
		create.Attrs["key"] = key
	}
	n.notifyGroup(targets, g.jid(), actor, []waBinary.Node{create})
	return []waBinary.Node{reply}, nil
}

func (n *Network) participating(actor string) []waBinary.Node {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []waBinary.Node
	for _, g := range n.groups.byID {
		if g.role(actor) != "" {
			out = append(out, n.groupNodeLocked(g))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Attrs["id"].(string) < out[j].Attrs["id"].(string) })
	return []waBinary.Node{{Tag: "groups", Content: out}}
}

func (n *Network) leaveGroups(actor string, req waBinary.Node) ([]waBinary.Node, *iqError) {
	var left []waBinary.Node
	for _, gn := range req.GetChildrenByTag("group") {
		jid, _ := gn.Attrs["id"].(types.JID)
		_, err := n.groupOp(jid, actor, func(g *group) (groupChange, *iqError) {
			g.members = slices.DeleteFunc(g.members, func(m groupMember) bool { return m.phone == actor })
			return groupChange{
				notify: append([]waBinary.Node{{Tag: "remove", Content: []waBinary.Node{n.participantNodeLocked(groupMember{phone: actor})}}},
					n.keepAnAdminLocked(g)...),
				extra: []string{actor},
			}, nil
		})
		if err != nil {
			return nil, err
		}
		left = append(left, waBinary.Node{Tag: "group", Attrs: waBinary.Attrs{"id": jid}})
	}
	return []waBinary.Node{{Tag: "leave", Content: left}}, nil
}

// joinByLink looks up (get) or joins (set) the group of an invite code.
func (n *Network) joinByLink(actor string, join bool, req waBinary.Node) ([]waBinary.Node, *iqError) {
	code := req.AttrGetter().OptionalString("code")
	n.mu.Lock()
	var g *group
	revoked := false
	for _, cand := range n.groups.byID {
		if code != "" && cand.invite == code {
			g = cand
		}
		revoked = revoked || (code != "" && slices.Contains(cand.revoked, code))
	}
	if g == nil {
		n.mu.Unlock()
		if revoked {
			return nil, errInviteRevoked // whatsmeow: ErrInviteLinkRevoked
		}
		return nil, errNotAcceptable // whatsmeow: ErrInviteLinkInvalid
	}
	if !join {
		node := n.groupNodeLocked(g)
		n.mu.Unlock()
		return []waBinary.Node{node}, nil
	}
	member := g.role(actor) != ""
	if !member && g.approval {
		n.mu.Unlock()
		return n.requestToJoin(g, actor)
	}
	if !member && len(g.members) >= maxMembers {
		n.mu.Unlock()
		return nil, errGroupFull
	}
	if !member {
		g.members = append(g.members, groupMember{phone: actor, role: RoleMember})
	}
	add := waBinary.Node{Tag: "add", Attrs: waBinary.Attrs{"reason": "invite"}, Content: []waBinary.Node{n.participantNodeLocked(groupMember{phone: actor})}}
	targets := n.devicesLocked(g.phones())
	n.mu.Unlock()
	if !member {
		n.notifyGroup(targets, g.jid(), actor, []waBinary.Node{add})
	}
	return []waBinary.Node{{Tag: "group", Attrs: waBinary.Attrs{"jid": g.jid()}}}, nil
}

// groupNodeLocked renders the group as whatsmeow's parseGroupNode reads it.
func (n *Network) groupNodeLocked(g *group) waBinary.Node {
	var children []waBinary.Node
	for _, m := range g.members {
		children = append(children, n.participantNodeLocked(m))
	}
	if g.desc != "" {
		children = append(children, waBinary.Node{Tag: "description", Attrs: waBinary.Attrs{
			"id": g.descID, "participant": pnJID(g.descBy), "t": unixString(g.descAt),
		}, Content: []waBinary.Node{{Tag: "body", Content: []byte(g.desc)}}})
	}
	if g.announce {
		children = append(children, waBinary.Node{Tag: "announcement"})
	}
	if g.locked {
		children = append(children, waBinary.Node{Tag: "locked"})
	}
	if g.ephemeral > 0 {
		children = append(children, waBinary.Node{Tag: "ephemeral", Attrs: waBinary.Attrs{"expiration": strconv.FormatUint(uint64(g.ephemeral), 10)}})
	}
	if g.approval {
		children = append(children, approvalNode(true))
	}
	children = append(children, memberAddModeNode(g.allAdd))
	return waBinary.Node{Tag: "group", Attrs: waBinary.Attrs{
		"id": g.id, "creation": unixString(g.created), "creator": pnJID(g.creator),
		"subject": g.subject, "s_t": unixString(g.subjectAt), "s_o": pnJID(g.subjectBy),
		"size": strconv.Itoa(len(g.members)),
	}, Content: children}
}

// participantNodeLocked names a member by phone number, with its LID so the
// client learns the mapping, and its role when it has one.
func (n *Network) participantNodeLocked(m groupMember) waBinary.Node {
	attrs := waBinary.Attrs{"jid": pnJID(m.phone)}
	if a := n.accounts[m.phone]; a != nil {
		attrs["lid"] = types.NewJID(a.lid, types.HiddenUserServer)
	}
	if m.role == RoleAdmin || m.role == RoleSuperAdmin {
		attrs["type"] = m.role
	}
	return waBinary.Node{Tag: "participant", Attrs: attrs}
}

// phoneOfLocked resolves a participant JID (phone number or LID) to an
// account of the simulated world, creating it on first use.
func (n *Network) phoneOfLocked(jid types.JID) (string, bool) {
	switch jid.Server {
	case types.HiddenUserServer:
		for _, a := range n.accounts {
			if a.lid == jid.User {
				return a.phone, true
			}
		}
	case types.DefaultUserServer:
		if a, err := n.accountLocked(jid.User); err == nil {
			return a.phone, true
		}
	}
	return "", false
}

// devicesLocked lists the linked devices of the accounts of phones.
func (n *Network) devicesLocked(phones []string) []*companion {
	var out []*companion
	for _, p := range phones {
		if a := n.accounts[p]; a != nil {
			for _, j := range a.deviceJIDs()[1:] {
				out = append(out, a.devices[j.Device])
			}
		}
	}
	return out
}

// newGroupIDLocked returns an unused group id shaped like WhatsApp's
// (120363 and 12 more digits).
func (n *Network) newGroupIDLocked() string {
	for {
		r, _ := rand.Int(rand.Reader, big.NewInt(1e12))
		id := "120363" + leftPad(r.String(), 12)
		if n.groups.byID[id] == nil {
			return id
		}
	}
}

func leftPad(s string, width int) string {
	for len(s) < width {
		s = "0" + s
	}
	return s
}

// newInviteCode returns a code shaped like chat.whatsapp.com's: 22
// characters of base62.
func newInviteCode() string {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 22)
	for i := range b {
		r, _ := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		b[i] = alphabet[r.Int64()]
	}
	return string(b)
}

func pnJID(phone string) types.JID { return types.NewJID(phone, types.DefaultUserServer) }

func unixString(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }

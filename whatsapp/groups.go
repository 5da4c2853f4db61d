package whatsapp

// Groups: create, read, update (groupmembers.go: participants, invite
// links, joining, leaving, join requests).

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"

	"github.com/wagraph/wagraph/internal/fault"
)

// Participant roles of a group member.
const (
	RoleMember     = "member"
	RoleAdmin      = "admin"
	RoleSuperAdmin = "superadmin" // the creator
)

// Participant is a member of a group.
type Participant struct {
	JID   types.JID // as WhatsApp lists the member: a phone JID, or a LID
	Phone string    // the member's number, "" when WhatsApp hides it
	LID   types.JID // the member's LID, empty when unknown
	Role  string    // RoleMember, RoleAdmin or RoleSuperAdmin
}

// Who may add members to a group (Group.MemberAddMode).
const (
	MemberAddAdmins = "ADMINS"
	MemberAddAll    = "ALL"
)

// Group is a group as WhatsApp describes it.
type Group struct {
	JID                   types.JID
	Name, Description     string
	Participants          []Participant
	OnlyAdminsCanPost     bool      // announce mode
	OnlyAdminsCanEditInfo bool      // locked
	Owner                 types.JID // the creator, empty when WhatsApp did not say
	Created               time.Time
	ApprovalMode          bool   // admins approve who joins by link
	MemberAddMode         string // MemberAddAdmins or MemberAddAll
	EphemeralSeconds      uint32 // the disappearing timer, 0 when off
	// JoinPending is set by JoinGroup only: the group's admins approve
	// who joins, and the request waits for them.
	JoinPending bool
	// NotAdded is set by CreateGroup only: the requested participants
	// WhatsApp did not add (not on WhatsApp, privacy settings), in the order
	// they were given.
	NotAdded []ParticipantOutcome
}

// GroupUpdate lists the changes of UpdateGroup; nil fields stay as they are.
type GroupUpdate struct {
	Name, Description                        *string
	OnlyAdminsCanPost, OnlyAdminsCanEditInfo *bool
	ApprovalMode                             *bool
	MemberAddMode                            *string // MemberAddAdmins or MemberAddAll
	EphemeralSeconds                         *uint32 // 0 or a duration WhatsApp offers
}

// ParticipantOutcome is WhatsApp's answer about one participant of a
// participant change: OK, or the code WhatsApp gave and what it means.
type ParticipantOutcome struct {
	JID     types.JID
	OK      bool
	Code    int
	Message string
	// InviteLink is offered when the person's privacy settings refused an
	// add: they may join by the group's link instead.
	InviteLink string
}

// ParseGroupJID reads the contract's group `jid`: "120363…@g.us" or the bare
// group number, either the modern digits-only id or the legacy
// "creator-timestamp" one. field names the input in errors.
func ParseGroupJID(field, s string) (types.JID, error) {
	s = strings.TrimSpace(s)
	user, server, hasServer := strings.Cut(s, "@")
	if s == "" {
		return types.JID{}, fault.InvalidField(field, "%s must not be empty", field)
	}
	if (hasServer && server != types.GroupServer) || !isGroupUser(user) {
		return types.JID{}, fault.InvalidField(field, "%s %q is not a group id such as 120363025246125888@g.us or 120363025246125888", field, fault.Clip(s, fault.QuoteLen))
	}
	return types.NewJID(user, types.GroupServer), nil
}

// CreateGroup creates a group with the session's account as its super admin
// and sets its description when one is given (WhatsApp creates groups
// without one).
//
// WhatsApp answers per participant: the group is created with those it
// accepted, and the ones it refused (a number not on WhatsApp, or one whose
// privacy settings forbid being added) are listed in Group.NotAdded instead
// of failing the whole group. When the description cannot be set the group
// exists nonetheless: the error says so and the returned Group carries the
// new group's JID, so that a caller does not create it twice.
func (m *Manager) CreateGroup(ctx context.Context, sessionID, name, description string, participants []types.JID) (Group, error) {
	cli, err := m.client(sessionID)
	if err != nil {
		return Group{}, err
	}
	info, err := cli.CreateGroup(ctx, whatsmeow.ReqCreateGroup{Name: name, Participants: participants})
	if err != nil {
		return Group{}, classify(sessionID, "create the group", err)
	}
	g := groupOf(ctx, cli, info)
	for _, p := range info.Participants {
		if p.Error != 0 {
			g.NotAdded = append(g.NotAdded, outcome(p.JID, p.Error, true))
		}
	}
	if len(g.NotAdded) > 0 {
		m.log.Info("WhatsApp did not add every participant to the new group",
			"session_id", sessionID, "group", g.JID.String(), "not_added", len(g.NotAdded))
	}
	if description == "" {
		return g, nil
	}
	// A new group has no description yet: no previous topic id.
	if err := cli.SetGroupTopic(ctx, g.JID, "", "", description); err != nil {
		f := fault.From(groupFault(sessionID, g.JID, "set the group description", err))
		return g, fault.Wrap(err, f.Code, "group %s was created, but its description was not set: %s", g.JID, f.Message)
	}
	g.Description = description
	return g, nil
}

// Group returns the group jid as WhatsApp has it now.
func (m *Manager) Group(ctx context.Context, sessionID string, jid types.JID) (Group, error) {
	cli, err := m.client(sessionID)
	if err != nil {
		return Group{}, err
	}
	return m.group(ctx, cli, sessionID, jid)
}

func (m *Manager) group(ctx context.Context, cli *whatsmeow.Client, sessionID string, jid types.JID) (Group, error) {
	info, err := cli.GetGroupInfo(ctx, jid)
	if err != nil {
		return Group{}, groupFault(sessionID, jid, "read the group", err)
	}
	return groupOf(ctx, cli, info), nil
}

// Groups lists the groups the session's account is a member of.
func (m *Manager) Groups(ctx context.Context, sessionID string) ([]Group, error) {
	cli, err := m.client(sessionID)
	if err != nil {
		return nil, err
	}
	infos, err := cli.GetJoinedGroups(ctx)
	if err != nil {
		return nil, classify(sessionID, "list the groups", err)
	}
	out := make([]Group, 0, len(infos))
	for _, info := range infos {
		out = append(out, groupOf(ctx, cli, info))
	}
	return out, nil
}

// UpdateGroup changes the given fields of the group, each with its own
// request (WhatsApp has no combined one), and returns the group afterwards.
// A field already at the wanted value is not sent. The changes are made in
// the order name, description, announce, locked, approval mode, member-add
// mode, disappearing timer; on a failure the earlier ones stay made.
func (m *Manager) UpdateGroup(ctx context.Context, sessionID string, jid types.JID, u GroupUpdate) (Group, error) {
	cli, err := m.client(sessionID)
	if err != nil {
		return Group{}, err
	}
	// The current state: WhatsApp wants the current description's id with
	// a new description, and it answers 404 early for an unknown group.
	info, err := cli.GetGroupInfo(ctx, jid)
	if err != nil {
		return Group{}, groupFault(sessionID, jid, "read the group", err)
	}
	steps := []struct {
		change bool
		action string
		do     func() error
	}{
		{u.Name != nil && *u.Name != info.Name, "change the group name", func() error {
			return cli.SetGroupName(ctx, jid, *u.Name)
		}},
		{u.Description != nil && *u.Description != info.Topic, "change the group description", func() error {
			return cli.SetGroupTopic(ctx, jid, info.TopicID, "", *u.Description)
		}},
		{u.OnlyAdminsCanPost != nil && *u.OnlyAdminsCanPost != info.IsAnnounce, "change who may post in the group", func() error {
			return cli.SetGroupAnnounce(ctx, jid, *u.OnlyAdminsCanPost)
		}},
		{u.OnlyAdminsCanEditInfo != nil && *u.OnlyAdminsCanEditInfo != info.IsLocked, "change who may edit the group info", func() error {
			return cli.SetGroupLocked(ctx, jid, *u.OnlyAdminsCanEditInfo)
		}},
		{u.ApprovalMode != nil && *u.ApprovalMode != info.IsJoinApprovalRequired, "change whether admins approve who joins", func() error {
			return cli.SetGroupJoinApprovalMode(ctx, jid, *u.ApprovalMode)
		}},
		{u.MemberAddMode != nil && *u.MemberAddMode != memberAddMode(info.MemberAddMode), "change who may add members", func() error {
			mode := types.GroupMemberAddModeAdmin
			if *u.MemberAddMode == MemberAddAll {
				mode = types.GroupMemberAddModeAllMember
			}
			return cli.SetGroupMemberAddMode(ctx, jid, mode)
		}},
		{u.EphemeralSeconds != nil && *u.EphemeralSeconds != ephemeralOf(info), "change the disappearing timer", func() error {
			return cli.SetDisappearingTimer(ctx, jid, time.Duration(*u.EphemeralSeconds)*time.Second, time.Time{})
		}},
	}
	changed := false
	for _, st := range steps {
		if !st.change {
			continue
		}
		if err := st.do(); err != nil {
			return Group{}, groupFault(sessionID, jid, st.action, err)
		}
		changed = true
	}
	if !changed {
		return groupOf(ctx, cli, info), nil
	}
	return m.group(ctx, cli, sessionID, jid)
}

// sameUser reports whether WhatsApp's answer r is about p, which it may name
// by phone number or by LID.
func sameUser(p types.JID, r types.GroupParticipant) bool {
	p = p.ToNonAD()
	for _, j := range []types.JID{r.JID, r.PhoneNumber, r.LID} {
		if !j.IsEmpty() && j.ToNonAD() == p {
			return true
		}
	}
	return false
}

// outcome turns WhatsApp's per-participant code (0: done) into an outcome.
// The codes mean different things when creating a group and when changing
// one.
func outcome(jid types.JID, code int, creating bool) ParticipantOutcome {
	o := ParticipantOutcome{JID: jid, OK: code == 0, Code: code}
	switch {
	case code == 0:
	case code == 403 && creating:
		o.Message = "their privacy settings do not allow adding them to groups"
	case code == 404 && creating:
		o.Message = "not on WhatsApp"
	case code == 401, code == 403:
		o.Message = "not allowed: the session's account is not an admin of the group"
	case code == 404:
		o.Message = "not a participant"
	case code == 408:
		o.Message = "recently left the group and cannot be added yet"
	case code == 409:
		o.Message = "already a participant"
	default:
		o.Message = fmt.Sprintf("WhatsApp refused (code %d)", code)
	}
	return o
}

// groupOf converts whatsmeow's group info. Participants WhatsApp refused
// (only in the answer to a create) are left out.
func groupOf(ctx context.Context, cli *whatsmeow.Client, info *types.GroupInfo) Group {
	g := Group{
		JID: info.JID, Name: info.Name, Description: info.Topic,
		OnlyAdminsCanPost: info.IsAnnounce, OnlyAdminsCanEditInfo: info.IsLocked,
		Participants: make([]Participant, 0, len(info.Participants)),
		Created:      info.GroupCreated, ApprovalMode: info.IsJoinApprovalRequired,
		MemberAddMode: memberAddMode(info.MemberAddMode), EphemeralSeconds: ephemeralOf(info),
	}
	if owner := personOf(ctx, cli, info.OwnerJID, info.OwnerPN).jid(); !owner.IsEmpty() {
		g.Owner = owner
	}
	for _, p := range info.Participants {
		if p.Error != 0 {
			continue
		}
		role := roleOf(p)
		g.Participants = append(g.Participants, Participant{JID: p.JID, Phone: phoneOf(ctx, cli, p), LID: lidOf(ctx, cli, p), Role: role})
	}
	return g
}

// memberAddMode is who may add members, from WhatsApp's mode: admins
// unless WhatsApp says every member may (a group that says nothing is
// admins-only).
func memberAddMode(m types.GroupMemberAddMode) string {
	if m == types.GroupMemberAddModeAllMember {
		return MemberAddAll
	}
	return MemberAddAdmins
}

// ephemeralOf is the group's disappearing timer in seconds, 0 when off.
func ephemeralOf(info *types.GroupInfo) uint32 {
	if !info.IsEphemeral {
		return 0
	}
	return info.DisappearingTimer
}

// lidOf is the member's LID: given with the member, or known from the
// LID mappings whatsmeow keeps.
func lidOf(ctx context.Context, cli *whatsmeow.Client, p types.GroupParticipant) types.JID {
	switch {
	case !p.LID.IsEmpty():
		return p.LID
	case p.JID.Server == types.DefaultUserServer:
		if lid, err := cli.Store.LIDs.GetLIDForPN(ctx, p.JID); err == nil {
			return lid
		}
	}
	return types.EmptyJID
}

// phoneOf is the member's number: given with the member, or known from the
// LID mappings whatsmeow keeps.
func phoneOf(ctx context.Context, cli *whatsmeow.Client, p types.GroupParticipant) string {
	switch {
	case !p.PhoneNumber.IsEmpty():
		return p.PhoneNumber.User
	case p.JID.Server == types.DefaultUserServer:
		return p.JID.User
	case !p.LID.IsEmpty():
		if pn, err := cli.Store.LIDs.GetPNForLID(ctx, p.LID); err == nil && !pn.IsEmpty() {
			return pn.User
		}
	}
	return ""
}

// groupFault classifies a failed operation on the group jid: the group
// unknown (404), the account not a member (403) or not an admin (401) get
// their own messages; anything else is classify's.
func groupFault(id string, jid types.JID, action string, err error) error {
	var iq *whatsmeow.IQError
	code := 0
	if errors.As(err, &iq) {
		code = iq.Code
	}
	switch {
	case code == 404 || errors.Is(err, whatsmeow.ErrGroupNotFound):
		return fault.Wrap(err, fault.NotFound, "group %s not found", jid)
	case code == 403 || errors.Is(err, whatsmeow.ErrNotInGroup):
		return fault.Wrap(err, fault.WhatsAppRefused, "session %s could not %s: the account is not a participant of group %s", id, action, jid)
	case code == 401 || errors.Is(err, whatsmeow.ErrGroupInviteLinkUnauthorized):
		return fault.Wrap(err, fault.WhatsAppRefused, "session %s could not %s: the account is not an admin of group %s", id, action, jid)
	}
	return classify(id, action, err)
}

// roleOf is a participant's role in its group.
func roleOf(p types.GroupParticipant) string {
	switch {
	case p.IsSuperAdmin:
		return RoleSuperAdmin
	case p.IsAdmin:
		return RoleAdmin
	}
	return RoleMember
}

package whatsapp

// Groups as the account sees them change: groups.upsert when it joins one
// (and chats.upsert for the group's chat), groups.update for a change of
// settings or picture, group-participants.update for members added,
// removed, promoted or demoted, group.join-request for requests to join
// where admins approve, and chats.update for a group's disappearing timer.
//
// w:gp2 notifications are acknowledged only when the handler succeeds.

import (
	"context"
	"slices"

	"go.mau.fi/whatsmeow"
	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/wagraph/wagraph/internal/events/payload"
)

// The group kinds (events.md).
const (
	KindGroupsUpsert      = "groups.upsert"             // {id, subject, topic, owner, created, announce, locked, approvalRequired, ephemeralSeconds, participants, reason, author}
	KindGroupsUpdate      = "groups.update"             // {id, author?, subject?, topic?, announce?, locked?, ephemeralSeconds?, inviteLink?, approvalRequired?, memberAddMode?, deleted?, picture?, timestamp}
	KindGroupParticipants = "group-participants.update" // {id, action: add|remove|promote|demote, participants: [{jid, phone, lid}], author?, reason?, timestamp}
	KindGroupJoinRequest  = "group.join-request"        // {id, action: requested|created|revoked|rejected, participant, participantPhone, participantLid, author?, method?, timestamp}
)

// groupData is a group in groups.upsert's shape; reason says why the
// account is in it, author who put it there (nil when WhatsApp did not say).
func groupData(ctx context.Context, cli *whatsmeow.Client, g *types.GroupInfo, reason string, author *person) *payload.Group {
	d := &payload.Group{
		ID: g.JID.String(), Subject: g.Name, Topic: payload.Text(g.Topic), Created: payload.At(g.GroupCreated),
		Announce: g.IsAnnounce, Locked: g.IsLocked, ApprovalRequired: g.IsJoinApprovalRequired,
		Participants: make([]payload.GroupMember, 0, len(g.Participants)), Reason: payload.Text(reason),
	}
	if g.IsEphemeral {
		d.EphemeralSeconds = g.DisappearingTimer
	}
	if owner := personOf(ctx, cli, g.OwnerJID, g.OwnerPN).jid(); !owner.IsEmpty() {
		d.Owner = payload.Text(owner.String())
	}
	if author != nil {
		d.Author = payload.Text(author.jid().String())
	}
	for _, p := range g.Participants {
		if p.Error != 0 {
			continue
		}
		m := personData(personOf(ctx, cli, p.JID, p.PhoneNumber, p.LID))
		role := roleOf(p)
		d.Participants = append(d.Participants, payload.GroupMember{JID: m.JID, Phone: m.Phone, LID: m.LID, Role: role})
	}
	return d
}

// optionalJID is *j, or the empty JID.
func optionalJID(j *types.JID) types.JID {
	if j == nil {
		return types.EmptyJID
	}
	return *j
}

// handleJoinedGroup publishes a group the account joined: created by it or
// with it, added to it, or joined by link.
func (r *clientRun) handleJoinedGroup(evt *events.JoinedGroup) bool {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	reason := evt.Reason // "invite" for a link
	if reason == "" {
		reason = "added"
		if evt.Type == "new" {
			reason = "created"
		}
	}
	var author *person // who put the account in it: none when it was the account
	if evt.Sender != nil && !r.isOwn(*evt.Sender) {
		p := personOf(ctx, r.cli, *evt.Sender, optionalJID(evt.SenderPN))
		author = &p
	}
	g := groupData(ctx, r.cli, &evt.GroupInfo, reason, author)
	chat := groupChat(g)
	return r.m.publishEvents(r.s, r.cli,
		Event{Kind: KindGroupsUpsert, Data: g}, Event{Kind: KindChatsUpsert, Data: chat}) == nil
}

// handleGroupInfo publishes a change of a group: its members first, then
// its settings, its chat's timer, and join requests.
func (r *clientRun) handleGroupInfo(evt *events.GroupInfo) bool {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	id, ts := evt.JID.String(), payload.At(evt.Timestamp)
	var author person
	if evt.Sender != nil {
		author = personOf(ctx, r.cli, *evt.Sender, optionalJID(evt.SenderPN))
	}
	var evs []Event
	for _, c := range []struct {
		action string
		jids   []types.JID
	}{{"add", evt.Join}, {"remove", evt.Leave}, {"promote", evt.Promote}, {"demote", evt.Demote}} {
		if len(c.jids) == 0 {
			continue
		}
		d := &payload.GroupParticipants{ID: id, Action: c.action, Participants: make([]payload.Person, 0, len(c.jids)), Timestamp: ts}
		for _, j := range c.jids {
			d.Participants = append(d.Participants, personData(personOf(ctx, r.cli, j)))
		}
		d.Author, d.AuthorPhone = authorData(author)
		if c.action == "add" {
			d.Reason = payload.Text(evt.JoinReason)
		}
		evs = append(evs, Event{Kind: KindGroupParticipants, Data: d})
	}
	if slices.ContainsFunc(evt.Join, r.isOwn) {
		evs = append(evs, r.joined(ctx, evt, author)...)
	}
	if u := r.groupUpdate(ctx, evt, author); u != nil {
		evs = append(evs, Event{Kind: KindGroupsUpdate, Data: u})
	}
	if evt.Ephemeral != nil {
		evs = append(evs, Event{Kind: KindChatsUpdate, Data: &payload.ChatUpdate{ID: id, EphemeralSeconds: ptr(timerOf(evt.Ephemeral)), Timestamp: ts}})
	}
	for _, n := range evt.UnknownChanges {
		evs = append(evs, r.joinRequests(ctx, id, ts, author, n)...)
	}
	return r.m.publishEvents(r.s, r.cli, evs...) == nil
}

// isOwn reports whether j is the account itself.
func (r *clientRun) isOwn(j types.JID) bool {
	me := own(r.cli)
	j = j.ToNonAD()
	return (!me.pn.IsEmpty() && j == me.pn) || (!me.lid.IsEmpty() && j == me.lid)
}

// joined is groups.upsert and chats.upsert for a group the account was
// added to or joined by link: WhatsApp tells it as a change of members
// (JoinedGroup is for groups created with the account), so the group is
// read.
func (r *clientRun) joined(ctx context.Context, evt *events.GroupInfo, author person) []Event {
	info, err := r.cli.GetGroupInfo(ctx, evt.JID)
	if err != nil {
		r.s.log.Warn("the account joined a group that could not be read", "group", evt.JID.String(), "err", err)
		return nil
	}
	reason := evt.JoinReason
	if reason == "" {
		reason = "added"
	}
	var by *person
	if !author.jid().IsEmpty() && !r.isOwn(author.jid()) {
		by = &author
	}
	g := groupData(ctx, r.cli, info, reason, by)
	return []Event{{Kind: KindGroupsUpsert, Data: g}, {Kind: KindChatsUpsert, Data: groupChat(g)}}
}

// groupChat is the chats.upsert of a group the account joined: a new chat,
// neither archived nor pinned.
func groupChat(g *payload.Group) *payload.Chat {
	no := false
	return &payload.Chat{ID: g.ID, Name: payload.Text(g.Subject), Archived: &no, Pinned: &no}
}

func authorData(p person) (payload.Text, payload.Text) {
	var jid, phone payload.Text
	if j := p.jid(); !j.IsEmpty() {
		jid = payload.Text(j.String())
	}
	phone = p.phoneText()
	return jid, phone
}

func timerOf(e *types.GroupEphemeral) uint32 {
	if !e.IsEphemeral {
		return 0
	}
	return e.DisappearingTimer
}

// groupUpdate is the groups.update of a change; nil when the change says
// nothing about the group's settings.
func (r *clientRun) groupUpdate(ctx context.Context, evt *events.GroupInfo, author person) *payload.GroupUpdate {
	u := &payload.GroupUpdate{ID: evt.JID.String(), Timestamp: payload.At(evt.Timestamp)}
	changed := false
	set := func() { changed = true }
	if evt.Name != nil {
		u.Subject = payload.Text(evt.Name.Name)
		set()
	}
	if evt.Topic != nil {
		u.Topic = ptr(evt.Topic.Topic) // "" when deleted
		set()
	}
	if evt.Announce != nil {
		u.Announce = ptr(evt.Announce.IsAnnounce)
		set()
	}
	if evt.Locked != nil {
		u.Locked = ptr(evt.Locked.IsLocked)
		set()
	}
	if evt.Ephemeral != nil {
		u.EphemeralSeconds = ptr(timerOf(evt.Ephemeral))
		set()
	}
	if evt.NewInviteLink != nil {
		u.InviteLink = payload.Text(*evt.NewInviteLink)
		set()
	}
	if evt.MembershipApprovalMode != nil {
		// whatsmeow reports every change of the approval mode as "on" (it
		// does not read <group_join state>): the group says what it is now.
		if g, err := r.cli.GetGroupInfo(ctx, evt.JID); err != nil {
			r.s.log.Warn("the group's approval mode changed but could not be read", "group", evt.JID.String(), "err", err)
		} else {
			u.ApprovalRequired = ptr(g.IsJoinApprovalRequired)
		}
		set()
	}
	for _, n := range evt.UnknownChanges {
		// whatsmeow does not parse a change of who may add members.
		if n.Tag == "member_add_mode" {
			mode, _ := n.Content.([]byte)
			u.MemberAddMode = payload.Text(memberAddMode(types.GroupMemberAddMode(mode)))
			set()
		}
	}
	if evt.Delete != nil {
		u.Deleted, u.DeleteReason = ptr(evt.Delete.Deleted), payload.Text(evt.Delete.DeleteReason)
		set()
	}
	if !changed {
		return nil
	}
	u.Author, u.AuthorPhone = authorData(author)
	return u
}

// joinRequests are the group.join-request events of one of whatsmeow's
// unknown changes of a group; none for other changes.
func (r *clientRun) joinRequests(ctx context.Context, id string, ts payload.Time, author person, n *waBinary.Node) []Event {
	method := payload.Text(n.AttrGetter().OptionalString("request_method"))
	authorJID, _ := authorData(author)
	event := func(action string, p person) Event {
		d := personData(p)
		return Event{Kind: KindGroupJoinRequest, Data: &payload.GroupJoinRequest{
			ID: id, Action: action, Participant: d.JID, ParticipantPhone: d.Phone, ParticipantLID: d.LID,
			Author: authorJID, Method: method, Timestamp: ts,
		}}
	}
	var evs []Event
	switch n.Tag {
	case "membership_approval_request": // the account's own request, to its devices
		evs = append(evs, event("requested", author))
	case "created_membership_requests", "revoked_membership_requests":
		for _, c := range n.GetChildrenByTag("participant") {
			ag := c.AttrGetter()
			p := personOf(ctx, r.cli, ag.OptionalJIDOrEmpty("jid"), ag.OptionalJIDOrEmpty("lid"), ag.OptionalJIDOrEmpty("phone_number"))
			action := "created"
			if n.Tag == "revoked_membership_requests" {
				// Withdrawn by the requester, or declined by an admin.
				action = "rejected"
				if samePerson(p, author) {
					action = "revoked"
				}
			}
			evs = append(evs, event(action, p))
		}
	}
	return evs
}

// samePerson reports whether a and b are one user by either address.
func samePerson(a, b person) bool {
	return (!a.pn.IsEmpty() && a.pn == b.pn) || (!a.lid.IsEmpty() && a.lid == b.lid)
}

// handleGroupPicture publishes a change of a group's picture.
func (r *clientRun) handleGroupPicture(ctx context.Context, evt *events.Picture) bool {
	u := &payload.GroupUpdate{ID: evt.JID.String(), Picture: pictureData(ctx, r, evt), Timestamp: payload.At(evt.Timestamp)}
	if !evt.Author.IsEmpty() {
		u.Author, u.AuthorPhone = authorData(personOf(ctx, r.cli, evt.Author))
	}
	return r.m.publishEvents(r.s, r.cli, Event{Kind: KindGroupsUpdate, Data: u}) == nil
}

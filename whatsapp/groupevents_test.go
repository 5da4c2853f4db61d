package whatsapp

import (
	"fmt"
	"image/color"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"
)

// member is a group member as groups.upsert lists it.
func (e *env) member(phone, role string) map[string]any {
	a, _ := e.net.Account(phone)
	return map[string]any{"jid": phoneJID(phone).String(), "phone": phone, "lid": a.LID.String(), "role": role}
}

// who is a participant as group-participants.update lists it.
func (e *env) who(phone string) map[string]any {
	a, _ := e.net.Account(phone)
	return map[string]any{"jid": phoneJID(phone).String(), "phone": phone, "lid": a.LID.String()}
}

// groupUpdate is a groups.update's data by author with only the given keys
// set.
func groupUpdate(id, author string, set map[string]any) map[string]any {
	d := map[string]any{
		"id": id, "author": phoneJID(author).String(), "authorPhone": author, "subject": nil, "topic": nil,
		"announce": nil, "locked": nil, "ephemeralSeconds": nil, "inviteLink": nil, "approvalRequired": nil, "memberAddMode": nil,
		"deleted": nil, "deleteReason": nil, "picture": nil, "timestamp": anyTime,
	}
	for k, v := range set {
		d[k] = v
	}
	return d
}

// participantsUpdate is a group-participants.update's data.
func participantsUpdate(id, action, author string, reason any, who ...map[string]any) map[string]any {
	ps := make([]any, len(who))
	for i, w := range who {
		ps[i] = w
	}
	return map[string]any{
		"id": id, "action": action, "participants": ps, "author": phoneJID(author).String(), "authorPhone": author,
		"reason": reason, "timestamp": anyTime,
	}
}

// wantEvents waits for len(want) events after from and checks their kinds
// and data; it returns the position after them.
func (e *env) wantEvents(t *testing.T, sid string, from int, want ...published) int {
	t.Helper()
	e.waitUntil(fmt.Sprintf("%d events", len(want)), func() bool { return len(e.pub.events(sid)) >= from+len(want) })
	evs := e.pub.events(sid)[from:]
	if len(evs) != len(want) {
		t.Fatalf("events %v, want %d", e.kindsFrom(sid, from), len(want))
	}
	for i, w := range want {
		if evs[i].Kind != w.Kind {
			t.Errorf("event %d is %s, want %s", i, evs[i].Kind, w.Kind)
			continue
		}
		exactData(t, w.Kind, evs[i].Data, w.Data)
	}
	return from + len(want)
}

// TestGroupEvents: a group the account is put in is groups.upsert with its
// chat's chats.upsert; what its members change is groups.update,
// group-participants.update and, for the disappearing timer, chats.update
// too.
func TestGroupEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	st := e.pairQR(m, "s1", phone)
	const admin, other, outsider = peer, peer2, "4915155507777"

	from := len(e.pub.events("s1"))
	gj, err := e.net.CreateGroup(admin, "Team", phone, other)
	if err != nil {
		t.Fatal(err)
	}
	id := gj.String()
	up, _ := e.next("s1", from, KindGroupsUpsert)
	created := up.Data["created"]
	from = e.wantEvents(t, "s1", from,
		published{Kind: KindGroupsUpsert, Data: map[string]any{
			"id": id, "subject": "Team", "topic": nil, "owner": phoneJID(admin).String(), "created": created,
			"announce": false, "locked": false, "approvalRequired": false, "ephemeralSeconds": 0,
			"participants": []any{e.member(admin, RoleSuperAdmin), e.member(phone, RoleMember), e.member(other, RoleMember)},
			"reason":       "created", "author": phoneJID(admin).String(),
		}},
		published{Kind: KindChatsUpsert, Data: map[string]any{
			"id": id, "name": "Team", "unreadCount": nil, "archived": false, "pinned": false, "muteUntil": nil,
			"lid": nil, "readOnly": nil, "ephemeralSeconds": nil, "lastMessageAt": nil,
		}},
	)
	if ts, err := time.Parse(time.RFC3339, fmt.Sprint(created)); err != nil || time.Since(ts) > time.Minute {
		t.Errorf("created %v", created)
	}

	var code string
	var pictureID string
	steps := []struct {
		name string
		do   func() error
		want func() []published
	}{
		{"subject", func() error { return e.net.SetGroupSubject(admin, gj, "Renamed") }, func() []published {
			return []published{{Kind: KindGroupsUpdate, Data: groupUpdate(id, admin, map[string]any{"subject": "Renamed"})}}
		}},
		{"topic", func() error { return e.net.SetGroupTopic(admin, gj, "About us") }, func() []published {
			return []published{{Kind: KindGroupsUpdate, Data: groupUpdate(id, admin, map[string]any{"topic": "About us"})}}
		}},
		{"topic removed", func() error { return e.net.SetGroupTopic(admin, gj, "") }, func() []published {
			return []published{{Kind: KindGroupsUpdate, Data: groupUpdate(id, admin, map[string]any{"topic": ""})}}
		}},
		{"announce", func() error { return e.net.SetGroupAnnounce(admin, gj, true) }, func() []published {
			return []published{{Kind: KindGroupsUpdate, Data: groupUpdate(id, admin, map[string]any{"announce": true})}}
		}},
		{"locked", func() error { return e.net.SetGroupLocked(admin, gj, true) }, func() []published {
			return []published{{Kind: KindGroupsUpdate, Data: groupUpdate(id, admin, map[string]any{"locked": true})}}
		}},
		{"disappearing", func() error { return e.net.SetGroupDisappearing(admin, gj, 7*24*time.Hour) }, func() []published {
			return []published{
				{Kind: KindGroupsUpdate, Data: groupUpdate(id, admin, map[string]any{"ephemeralSeconds": 604800})},
				{Kind: KindChatsUpdate, Data: chatUpdate(id, map[string]any{"ephemeralSeconds": 604800})},
			}
		}},
		{"disappearing off", func() error { return e.net.SetGroupDisappearing(admin, gj, 0) }, func() []published {
			return []published{
				{Kind: KindGroupsUpdate, Data: groupUpdate(id, admin, map[string]any{"ephemeralSeconds": 0})},
				{Kind: KindChatsUpdate, Data: chatUpdate(id, map[string]any{"ephemeralSeconds": 0})},
			}
		}},
		{"approval on", func() error { return e.net.SetGroupApproval(admin, gj, true) }, func() []published {
			return []published{{Kind: KindGroupsUpdate, Data: groupUpdate(id, admin, map[string]any{"approvalRequired": true})}}
		}},
		// whatsmeow reports "on" for either: the group is read.
		{"approval off", func() error { return e.net.SetGroupApproval(admin, gj, false) }, func() []published {
			return []published{{Kind: KindGroupsUpdate, Data: groupUpdate(id, admin, map[string]any{"approvalRequired": false})}}
		}},
		{"invite reset", func() (err error) { code, err = e.net.ResetGroupInvite(admin, gj); return err }, func() []published {
			return []published{{Kind: KindGroupsUpdate, Data: groupUpdate(id, admin, map[string]any{"inviteLink": whatsmeow.InviteLinkPrefix + code})}}
		}},
		{"add", func() error { return e.net.UpdateGroupParticipants(admin, gj, "add", outsider) }, func() []published {
			return []published{{Kind: KindGroupParticipants, Data: participantsUpdate(id, "add", admin, nil, e.who(outsider))}}
		}},
		{"promote", func() error { return e.net.UpdateGroupParticipants(admin, gj, "promote", other, outsider) }, func() []published {
			return []published{{Kind: KindGroupParticipants, Data: participantsUpdate(id, "promote", admin, nil, e.who(other), e.who(outsider))}}
		}},
		{"demote", func() error { return e.net.UpdateGroupParticipants(admin, gj, "demote", outsider) }, func() []published {
			return []published{{Kind: KindGroupParticipants, Data: participantsUpdate(id, "demote", admin, nil, e.who(outsider))}}
		}},
		{"leave", func() error { return e.net.LeaveGroup(outsider, gj) }, func() []published {
			return []published{{Kind: KindGroupParticipants, Data: participantsUpdate(id, "remove", outsider, nil, e.who(outsider))}}
		}},
		{"join by link", func() error { _, err := e.net.RequestJoinGroup(outsider, code); return err }, func() []published {
			return []published{{Kind: KindGroupParticipants, Data: participantsUpdate(id, "add", outsider, "invite", e.who(outsider))}}
		}},
		{"remove", func() error { return e.net.UpdateGroupParticipants(other, gj, "remove", outsider) }, func() []published {
			return []published{{Kind: KindGroupParticipants, Data: participantsUpdate(id, "remove", other, nil, e.who(outsider))}}
		}},
		{"picture", func() (err error) {
			pictureID, err = e.net.SetGroupPicture(other, gj, testJPEG(t, color.RGBA{G: 200, A: 255}))
			return err
		}, func() []published {
			return []published{{Kind: KindGroupsUpdate, Data: groupUpdate(id, other, map[string]any{
				"picture": map[string]any{"id": pictureID, "removed": false, "author": phoneJID(other).String()},
			})}}
		}},
		{"picture removed", func() error { _, err := e.net.SetGroupPicture(admin, gj, nil); return err }, func() []published {
			return []published{{Kind: KindGroupsUpdate, Data: groupUpdate(id, admin, map[string]any{
				"picture": map[string]any{"id": nil, "removed": true, "author": phoneJID(admin).String()},
			})}}
		}},
		{"deleted", func() error { return e.net.DeleteGroup(admin, gj) }, func() []published {
			return []published{{Kind: KindGroupsUpdate, Data: groupUpdate(id, admin, map[string]any{"deleted": true, "deleteReason": "delete"})}}
		}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			n := len(e.pub.events("s1"))
			if err := s.do(); err != nil {
				t.Fatal(err)
			}
			e.wantEvents(t, "s1", n, s.want()...)
		})
	}
	e.settle(st)
}

// TestGroupsTheAccountJoins: a group the account creates, is added to or
// joins by link is groups.upsert and chats.upsert, with why and by whom;
// the account's own join is group-participants.update too.
func TestGroupsTheAccountJoins(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	st := e.pairQR(m, "s1", phone)
	upsert := func(t *testing.T, from int, gj types.JID, reason, author any) map[string]any {
		t.Helper()
		up, _ := e.next("s1", from, KindGroupsUpsert)
		wantData(t, "groups.upsert", up.Data, map[string]any{"id": gj.String(), "reason": reason, "author": author})
		chat, _ := e.next("s1", from, KindChatsUpsert)
		wantData(t, "chats.upsert", chat.Data, map[string]any{"id": gj.String(), "name": up.Data["subject"]})
		return up.Data
	}

	from := len(e.pub.events("s1"))
	g, err := m.CreateGroup(ctx, "s1", "Mine", "", []types.JID{phoneJID(peer)})
	if err != nil {
		t.Fatal(err)
	}
	upsert(t, from, g.JID, "created", nil)

	from = len(e.pub.events("s1"))
	other, err := e.net.CreateGroup(peer, "Theirs")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.net.UpdateGroupParticipants(peer, other, "add", phone); err != nil {
		t.Fatal(err)
	}
	add, _ := e.next("s1", from, KindGroupParticipants)
	exactData(t, "the account added", add.Data, participantsUpdate(other.String(), "add", peer, nil, e.who(phone)))
	d := upsert(t, from, other, "added", phoneJID(peer).String())
	if ps, _ := d["participants"].([]any); len(ps) != 2 {
		t.Errorf("participants %v", d["participants"])
	}

	from = len(e.pub.events("s1"))
	third, err := e.net.CreateGroup(peer2, "By link")
	if err != nil {
		t.Fatal(err)
	}
	code := ""
	if info, ok := e.net.Group(third); ok {
		code = info.InviteCode
	}
	if _, err := e.net.RequestJoinGroup(phone, code); err != nil {
		t.Fatal(err)
	}
	upsert(t, from, third, "invite", nil)
	e.settle(st)
}

// TestGroupsListedAfterPairing: the groups the account is in when a
// session pairs are published as groups.upsert (reason listed) before the
// session reads CONNECTED; later logins do not list them again.
func TestGroupsListedAfterPairing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g1, err := e.net.CreateGroup(peer, "One", phone)
	if err != nil {
		t.Fatal(err)
	}
	g2, err := e.net.CreateGroup(phone, "Two", peer2)
	if err != nil {
		t.Fatal(err)
	}
	m := e.manager()
	st := e.pairQR(m, "s1", phone)
	listed := map[string]map[string]any{}
	connectedAt := -1
	for i, ev := range e.pub.events("s1") {
		switch {
		case ev.Kind == KindGroupsUpsert:
			listed[ev.Data["id"].(string)] = ev.Data
			if connectedAt >= 0 {
				t.Errorf("groups.upsert %d came after CONNECTED", i)
			}
		case ev.Kind == KindConnectionUpdate && ev.Data["status"] == string(StatusConnected):
			connectedAt = i
		}
	}
	if len(listed) != 2 {
		t.Fatalf("listed %v, want the two groups", listed)
	}
	wantData(t, "groups.upsert of One", listed[g1.String()], map[string]any{
		"subject": "One", "reason": "listed", "author": nil, "owner": phoneJID(peer).String(),
		"participants": []any{e.member(peer, RoleSuperAdmin), e.member(phone, RoleMember)},
	})
	wantData(t, "groups.upsert of Two", listed[g2.String()], map[string]any{
		"subject": "Two", "reason": "listed", "owner": phoneJID(phone).String(),
	})

	from := len(e.pub.events("s1"))
	if err := m.Disconnect("s1"); err != nil {
		t.Fatal(err)
	}
	if err := m.Connect(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	e.waitStatus(m, "s1", StatusConnected)
	for _, k := range e.kindsFrom("s1", from) {
		if k == KindGroupsUpsert {
			t.Errorf("a later login listed the groups again: %v", e.kindsFrom("s1", from))
			break
		}
	}
	e.settle(st)
}

// joinRequest is a group.join-request's data.
func (e *env) joinRequest(id, action, participant, author string) map[string]any {
	a, _ := e.net.Account(participant)
	var method any = "invite_link" // WhatsApp says how a request was made, not how it ended
	if action == "revoked" || action == "rejected" {
		method = nil
	}
	return map[string]any{
		"id": id, "action": action, "participant": phoneJID(participant).String(), "participantPhone": participant,
		"participantLid": a.LID.String(), "author": phoneJID(author).String(), "method": method, "timestamp": anyTime,
	}
}

// TestGroupJoinRequestEvents: where admins approve who joins, an admin
// account sees each request as group.join-request (created), withdrawn
// (revoked) or declined (rejected), an approval as the member added; an
// account that asks to join sees its own request (requested).
func TestGroupJoinRequestEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	st := e.pairQR(m, "s1", phone)

	from := len(e.pub.events("s1"))
	gj, err := e.net.CreateGroup(phone, "Club", peer)
	if err != nil {
		t.Fatal(err)
	}
	id := gj.String()
	_, from = e.next("s1", from, KindChatsUpsert)
	if err := e.net.SetGroupApproval(phone, gj, true); err != nil {
		t.Fatal(err)
	}
	from = e.wantEvents(t, "s1", from, published{Kind: KindGroupsUpdate, Data: groupUpdate(id, phone, map[string]any{"approvalRequired": true})})
	info, _ := e.net.Group(gj)

	steps := []struct {
		name string
		do   func() error
		want func() []published
	}{
		{"request", func() error { _, err := e.net.RequestJoinGroup(peer2, info.InviteCode); return err }, func() []published {
			return []published{{Kind: KindGroupJoinRequest, Data: e.joinRequest(id, "created", peer2, peer2)}}
		}},
		{"withdrawn", func() error { return e.net.CancelJoinRequest(peer2, gj) }, func() []published {
			return []published{{Kind: KindGroupJoinRequest, Data: e.joinRequest(id, "revoked", peer2, peer2)}}
		}},
		{"again", func() error { _, err := e.net.RequestJoinGroup(peer2, info.InviteCode); return err }, func() []published {
			return []published{{Kind: KindGroupJoinRequest, Data: e.joinRequest(id, "created", peer2, peer2)}}
		}},
		{"rejected", func() error { return e.net.AnswerJoinRequest(phone, gj, peer2, false) }, func() []published {
			return []published{{Kind: KindGroupJoinRequest, Data: e.joinRequest(id, "rejected", peer2, phone)}}
		}},
		{"once more", func() error { _, err := e.net.RequestJoinGroup(peer2, info.InviteCode); return err }, func() []published {
			return []published{{Kind: KindGroupJoinRequest, Data: e.joinRequest(id, "created", peer2, peer2)}}
		}},
		{"approved", func() error { return e.net.AnswerJoinRequest(phone, gj, peer2, true) }, func() []published {
			return []published{{Kind: KindGroupParticipants, Data: participantsUpdate(id, "add", phone, "approval", e.who(peer2))}}
		}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			n := len(e.pub.events("s1"))
			if err := s.do(); err != nil {
				t.Fatal(err)
			}
			e.wantEvents(t, "s1", n, s.want()...)
		})
	}

	// The account asks to join a group of others.
	closed, err := e.net.CreateGroup(peer, "Closed")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.net.SetGroupApproval(peer, closed, true); err != nil {
		t.Fatal(err)
	}
	info, _ = e.net.Group(closed)
	n := len(e.pub.events("s1"))
	if _, err := e.net.RequestJoinGroup(phone, info.InviteCode); err != nil {
		t.Fatal(err)
	}
	e.wantEvents(t, "s1", n, published{Kind: KindGroupJoinRequest, Data: e.joinRequest(closed.String(), "requested", phone, phone)})
	e.settle(st)
}

package wafake_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// TestGroupChangesFromThePhone: what another member's phone does to a
// group reaches a member's linked device as the notifications whatsmeow
// turns into JoinedGroup, GroupInfo and Picture, under the same rules as
// the group IQs.
func TestGroupChangesFromThePhone(t *testing.T) {
	t.Parallel()
	n := startNetwork(t)
	cli, _ := linkSettled(t, n, groupB)
	joined := eventsOf[*events.JoinedGroup](cli)
	changes := eventsOf[*events.GroupInfo](cli)
	pictures := eventsOf[*events.Picture](cli)

	gj, err := n.CreateGroup(groupCreator, "From the phone", groupB, groupC)
	if err != nil {
		t.Fatal(err)
	}
	if j := nextEvent(t, joined); j.JID != gj || j.Name != "From the phone" || len(j.Participants) != 3 || j.OwnerJID != pn(groupCreator) {
		t.Errorf("JoinedGroup %+v", j)
	}
	var notAdmin *wafake.GroupError
	if err := n.SetGroupAnnounce(groupC, gj, true); !errors.As(err, &notAdmin) || notAdmin.Code != 401 {
		t.Errorf("a plain member's SetGroupAnnounce: %v, want 401", err)
	}

	steps := []struct {
		name  string
		do    func() error
		check func(t *testing.T, e *events.GroupInfo)
	}{
		{"subject", func() error { return n.SetGroupSubject(groupCreator, gj, "Renamed") }, func(t *testing.T, e *events.GroupInfo) {
			if e.Name == nil || e.Name.Name != "Renamed" || e.Sender == nil || e.Sender.User != groupCreator {
				t.Errorf("%+v", e)
			}
		}},
		{"topic", func() error { return n.SetGroupTopic(groupCreator, gj, "About us") }, func(t *testing.T, e *events.GroupInfo) {
			if e.Topic == nil || e.Topic.Topic != "About us" || e.Topic.TopicDeleted {
				t.Errorf("%+v", e.Topic)
			}
		}},
		{"topic removed", func() error { return n.SetGroupTopic(groupCreator, gj, "") }, func(t *testing.T, e *events.GroupInfo) {
			if e.Topic == nil || !e.Topic.TopicDeleted {
				t.Errorf("%+v", e.Topic)
			}
		}},
		{"announce", func() error { return n.SetGroupAnnounce(groupCreator, gj, true) }, func(t *testing.T, e *events.GroupInfo) {
			if e.Announce == nil || !e.Announce.IsAnnounce {
				t.Errorf("%+v", e.Announce)
			}
		}},
		{"locked", func() error { return n.SetGroupLocked(groupCreator, gj, true) }, func(t *testing.T, e *events.GroupInfo) {
			if e.Locked == nil || !e.Locked.IsLocked {
				t.Errorf("%+v", e.Locked)
			}
		}},
		{"disappearing", func() error { return n.SetGroupDisappearing(groupCreator, gj, 7*24*time.Hour) }, func(t *testing.T, e *events.GroupInfo) {
			if e.Ephemeral == nil || !e.Ephemeral.IsEphemeral || e.Ephemeral.DisappearingTimer != 7*86400 {
				t.Errorf("%+v", e.Ephemeral)
			}
		}},
		{"approval", func() error { return n.SetGroupApproval(groupCreator, gj, true) }, func(t *testing.T, e *events.GroupInfo) {
			if e.MembershipApprovalMode == nil {
				t.Errorf("%+v", e)
			}
		}},
		{"invite reset", func() error { _, err := n.ResetGroupInvite(groupCreator, gj); return err }, func(t *testing.T, e *events.GroupInfo) {
			if e.NewInviteLink == nil || *e.NewInviteLink != whatsmeow.InviteLinkPrefix+viewOf(t, n, gj).InviteCode {
				t.Errorf("%+v", e.NewInviteLink)
			}
		}},
		{"promote", func() error { return n.UpdateGroupParticipants(groupCreator, gj, "promote", groupC) }, func(t *testing.T, e *events.GroupInfo) {
			if !slices.Equal(e.Promote, []types.JID{pn(groupC)}) {
				t.Errorf("%+v", e.Promote)
			}
		}},
		{"remove", func() error { return n.UpdateGroupParticipants(groupC, gj, "remove", groupCreator) }, func(t *testing.T, e *events.GroupInfo) {
			if !slices.Equal(e.Leave, []types.JID{pn(groupCreator)}) || e.Sender.User != groupC {
				t.Errorf("%+v", e)
			}
		}},
		{"add", func() error { return n.UpdateGroupParticipants(groupC, gj, "add", groupStrange) }, func(t *testing.T, e *events.GroupInfo) {
			if !slices.Equal(e.Join, []types.JID{pn(groupStrange)}) {
				t.Errorf("%+v", e.Join)
			}
		}},
		{"leave", func() error { return n.LeaveGroup(groupStrange, gj) }, func(t *testing.T, e *events.GroupInfo) {
			if !slices.Equal(e.Leave, []types.JID{pn(groupStrange)}) {
				t.Errorf("%+v", e.Leave)
			}
		}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			if err := s.do(); err != nil {
				t.Fatal(err)
			}
			s.check(t, nextEvent(t, changes))
		})
	}
	if r := roles(viewOf(t, n, gj)); !maps.Equal(r, map[string]string{groupB: wafake.RoleMember, groupC: wafake.RoleAdmin}) {
		t.Errorf("members %v", r)
	}

	id, err := n.SetGroupPicture(groupC, gj, fakeJPEG(t))
	if err != nil {
		t.Fatal(err)
	}
	if p := nextEvent(t, pictures); p.JID != gj || p.PictureID != id || p.Author.User != groupC {
		t.Errorf("Picture %+v", p)
	}

	// Only the creator deletes: groupC is an admin, not the superadmin.
	other, err := n.CreateGroup(groupC, "Short-lived", groupB)
	if err != nil {
		t.Fatal(err)
	}
	nextEvent(t, joined)
	if err := n.DeleteGroup(groupB, other); !errors.As(err, &notAdmin) {
		t.Errorf("a member deleting: %v", err)
	}
	if err := n.DeleteGroup(groupC, other); err != nil {
		t.Fatal(err)
	}
	if e := nextEvent(t, changes); e.JID != other || e.Delete == nil || !e.Delete.Deleted || e.Delete.DeleteReason != "delete" {
		t.Errorf("GroupInfo after delete: %+v", e)
	}
	if _, ok := n.Group(other); ok {
		t.Error("the deleted group is still there")
	}
}

// TestGroupJoinRequests: joining by link where admins approve is a
// request; the requester's device hears of its request, an admin's device
// of each request, its withdrawal and its rejection; an approved request
// makes a member.
func TestGroupJoinRequests(t *testing.T) {
	t.Parallel()
	n := startNetwork(t)
	admin, _ := linkSettled(t, n, groupCreator)
	requester, _ := linkSettled(t, n, groupB)
	adminChanges := eventsOf[*events.GroupInfo](admin)
	requesterChanges := eventsOf[*events.GroupInfo](requester)
	ctx := context.Background()

	gj := createTeam(t, admin).JID // groupB is in Team: it leaves first
	if err := n.LeaveGroup(groupB, gj); err != nil {
		t.Fatal(err)
	}
	nextEvent(t, adminChanges)
	nextEvent(t, requesterChanges)
	if err := admin.SetGroupJoinApprovalMode(ctx, gj, true); err != nil {
		t.Fatal(err)
	}
	if e := nextEvent(t, adminChanges); e.MembershipApprovalMode == nil {
		t.Errorf("approval mode change: %+v", e)
	}
	if gi, err := admin.GetGroupInfo(ctx, gj); err != nil || !gi.IsJoinApprovalRequired {
		t.Errorf("group info after approval on: %+v %v", gi, err)
	}
	link, err := admin.GetGroupInviteLink(ctx, gj, false)
	if err != nil {
		t.Fatal(err)
	}

	unknown := func(t *testing.T, e *events.GroupInfo, tag string) map[string]string {
		t.Helper()
		if len(e.UnknownChanges) != 1 || e.UnknownChanges[0].Tag != tag {
			t.Fatalf("GroupInfo %+v, want one %s", e, tag)
		}
		out := map[string]string{"author": e.Sender.User}
		for _, p := range e.UnknownChanges[0].GetChildrenByTag("participant") {
			out["participant"] = p.AttrGetter().JID("jid").User
		}
		return out
	}
	if j, err := requester.JoinGroupWithLink(ctx, link); err != nil || j != gj {
		t.Fatalf("JoinGroupWithLink: %s %v", j, err)
	}
	if got := unknown(t, nextEvent(t, requesterChanges), "membership_approval_request"); got["author"] != groupB {
		t.Errorf("the requester's own request: %v", got)
	}
	if got := unknown(t, nextEvent(t, adminChanges), "created_membership_requests"); got["participant"] != groupB {
		t.Errorf("the admin sees %v", got)
	}
	if _, ok := roles(viewOf(t, n, gj))[groupB]; ok {
		t.Error("a request made a member")
	}
	if err := n.CancelJoinRequest(groupB, gj); err != nil {
		t.Fatal(err)
	}
	if got := unknown(t, nextEvent(t, adminChanges), "revoked_membership_requests"); got["participant"] != groupB || got["author"] != groupB {
		t.Errorf("withdrawn: %v", got)
	}
	nextEvent(t, requesterChanges)

	code := viewOf(t, n, gj).InviteCode
	if _, err := n.RequestJoinGroup(groupB, code); err != nil {
		t.Fatal(err)
	}
	nextEvent(t, requesterChanges)
	nextEvent(t, adminChanges)
	if err := n.AnswerJoinRequest(groupB, gj, groupB, true); err == nil {
		t.Error("the requester approved its own request")
	}
	if err := n.AnswerJoinRequest(groupCreator, gj, groupB, false); err != nil {
		t.Fatal(err)
	}
	if got := unknown(t, nextEvent(t, adminChanges), "revoked_membership_requests"); got["author"] != groupCreator {
		t.Errorf("rejected: %v", got)
	}
	nextEvent(t, requesterChanges)

	if _, err := n.RequestJoinGroup(groupB, code); err != nil {
		t.Fatal(err)
	}
	nextEvent(t, requesterChanges)
	nextEvent(t, adminChanges)
	if err := n.AnswerJoinRequest(groupCreator, gj, groupB, true); err != nil {
		t.Fatal(err)
	}
	if e := nextEvent(t, adminChanges); !slices.Equal(e.Join, []types.JID{pn(groupB)}) {
		t.Errorf("approved: %+v", e)
	}
	if r := roles(viewOf(t, n, gj))[groupB]; r != wafake.RoleMember {
		t.Errorf("approved requester is %q", r)
	}
}

package wafake_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"

	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// TestGroupRulesOfIssue34: the network refuses what WhatsApp refuses and
// answers as whatsmeow reads it: a plain member's participant changes fail
// per participant (403) unless the member-add mode lets every member add;
// a person whose privacy refuses adds is answered 403 with an add request;
// a reset link is revoked (410); pending join requests are listed and
// answered by IQ; a full group takes nobody more.
func TestGroupRulesOfIssue34(t *testing.T) {
	t.Parallel()
	n := startNetwork(t)
	admin, _ := linkSettled(t, n, groupCreator)
	member, _ := linkSettled(t, n, groupB)
	ctx := context.Background()
	gj := createTeam(t, admin).JID
	const newcomer, private, asker = "4915550034401", "4915550034402", "4915550034403"

	for _, action := range []whatsmeow.ParticipantChange{whatsmeow.ParticipantChangeAdd, whatsmeow.ParticipantChangeRemove, whatsmeow.ParticipantChangePromote, whatsmeow.ParticipantChangeDemote} {
		target := groupC
		if action == whatsmeow.ParticipantChangeAdd {
			target = newcomer
		} else if action == whatsmeow.ParticipantChangeDemote {
			target = groupCreator
		}
		res, err := member.UpdateGroupParticipants(ctx, gj, []types.JID{pn(target)}, action)
		if err != nil || len(res) != 1 || res[0].Error != 403 || res[0].AddRequest != nil {
			t.Errorf("a plain member's %s: %+v %v, want 403 for the participant", action, res, err)
		}
	}
	if r := roles(viewOf(t, n, gj)); r[groupCreator] != "superadmin" || r[groupC] != "member" || r[newcomer] != "" {
		t.Errorf("after a plain member's changes: %v", r)
	}

	// Every member may add once the admins allow it; removing stays theirs.
	if err := member.SetGroupMemberAddMode(ctx, gj, types.GroupMemberAddModeAllMember); !errors.Is(err, whatsmeow.ErrIQNotAuthorized) {
		t.Errorf("a plain member's SetGroupMemberAddMode: %v, want 401", err)
	}
	if err := admin.SetGroupMemberAddMode(ctx, gj, types.GroupMemberAddModeAllMember); err != nil {
		t.Fatal(err)
	}
	if gi, err := member.GetGroupInfo(ctx, gj); err != nil || gi.MemberAddMode != types.GroupMemberAddModeAllMember {
		t.Errorf("member-add mode read back: %+v %v", gi, err)
	}
	if res, err := member.UpdateGroupParticipants(ctx, gj, []types.JID{pn(newcomer)}, whatsmeow.ParticipantChangeAdd); err != nil || res[0].Error != 0 {
		t.Errorf("a member's add with all_member_add: %+v %v", res, err)
	}
	if res, err := member.UpdateGroupParticipants(ctx, gj, []types.JID{pn(newcomer)}, whatsmeow.ParticipantChangeRemove); err != nil || res[0].Error != 403 {
		t.Errorf("a member's remove with all_member_add: %+v %v, want 403", res, err)
	}

	// Privacy.
	if err := n.SetPrivacy(private, types.PrivacySettingTypeGroupAdd, types.PrivacySettingNone); err != nil {
		t.Fatal(err)
	}
	res, err := admin.UpdateGroupParticipants(ctx, gj, []types.JID{pn(private)}, whatsmeow.ParticipantChangeAdd)
	if err != nil || len(res) != 1 || res[0].Error != 403 || res[0].AddRequest == nil || res[0].AddRequest.Code == "" {
		t.Errorf("adding one whose privacy refuses: %+v %v, want 403 with an add request", res, err)
	}

	// A reset revokes the old link.
	old, err := admin.GetGroupInviteLink(ctx, gj, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.GetGroupInviteLink(ctx, gj, true); err != nil {
		t.Fatal(err)
	}
	if _, err := member.GetGroupInfoFromLink(ctx, old); !errors.Is(err, whatsmeow.ErrInviteLinkRevoked) {
		t.Errorf("the old link: %v, want revoked", err)
	}
	if _, err := member.JoinGroupWithLink(ctx, old); !errors.Is(err, whatsmeow.ErrInviteLinkRevoked) {
		t.Errorf("joining by the old link: %v, want revoked", err)
	}

	// Join requests by IQ.
	if err := admin.SetGroupJoinApprovalMode(ctx, gj, true); err != nil {
		t.Fatal(err)
	}
	if _, err := n.RequestJoinGroup(asker, viewOf(t, n, gj).InviteCode); err != nil {
		t.Fatal(err)
	}
	if _, err := member.GetGroupRequestParticipants(ctx, gj); !errors.Is(err, whatsmeow.ErrIQNotAuthorized) {
		t.Errorf("a plain member lists requests: %v, want 401", err)
	}
	reqs, err := admin.GetGroupRequestParticipants(ctx, gj)
	if err != nil || len(reqs) != 1 || reqs[0].JID != pn(asker) || reqs[0].RequestedAt.IsZero() {
		t.Errorf("requests: %+v %v", reqs, err)
	}
	ans, err := admin.UpdateGroupRequestParticipants(ctx, gj, []types.JID{pn(asker), pn(groupStrange)}, whatsmeow.ParticipantChangeApprove)
	if err != nil || len(ans) != 2 || ans[0].Error != 0 || ans[1].Error != 404 {
		t.Errorf("approve: %+v %v", ans, err)
	}
	if v := viewOf(t, n, gj); roles(v)[asker] != "member" || len(v.Requests) != 0 {
		t.Errorf("after approval: %+v", v)
	}

	// A full group.
	members := make([]string, 0, 1023)
	for i := range 1023 {
		members = append(members, fmt.Sprintf("4917%09d", i+1))
	}
	full, err := n.CreateGroup(groupCreator, "Full", members...)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.UpdateGroupParticipants(groupCreator, full, "add", groupB); err == nil || !strings.Contains(err.Error(), "500") {
		t.Errorf("adding to a full group: %v, want 500", err)
	}
	var refused *wafake.GroupError
	if _, err := n.RequestJoinGroup(groupC, viewOf(t, n, full).InviteCode); !errors.As(err, &refused) || refused.Code != 419 {
		t.Errorf("joining a full group by link: %v, want 419", err)
	}
	if slices.Contains(viewOf(t, n, full).Participants, wafake.GroupParticipant{Phone: groupB, Role: "member"}) {
		t.Error("a full group took one more")
	}
}

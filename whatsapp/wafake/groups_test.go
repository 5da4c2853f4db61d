package wafake_test

import (
	"context"
	"errors"
	"io"
	"maps"
	"slices"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"

	"github.com/wagraph/wagraph/internal/testclient"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

const (
	groupCreator = "491701234567"
	groupB       = "4915112345678"
	groupC       = "4915187654321"
	groupNotOnWA = "4915100000000"
	groupStrange = "4915199999999" // on WhatsApp, never in the group
)

func pn(phone string) types.JID { return types.NewJID(phone, types.DefaultUserServer) }

// viewOf returns the network's view of a group, failing when it has none.
func viewOf(t *testing.T, n *wafake.Network, jid types.JID) wafake.GroupInfo {
	t.Helper()
	g, ok := n.Group(jid)
	if !ok {
		t.Fatalf("the network has no group %s", jid)
	}
	return g
}

func roles(g wafake.GroupInfo) map[string]string {
	out := map[string]string{}
	for _, p := range g.Participants {
		out[p.Phone] = p.Role
	}
	return out
}

func createTeam(t *testing.T, cli *whatsmeow.Client, extra ...string) *types.GroupInfo {
	t.Helper()
	parts := []types.JID{pn(groupB), pn(groupC)}
	for _, p := range extra {
		parts = append(parts, pn(p))
	}
	info, err := cli.CreateGroup(context.Background(), whatsmeow.ReqCreateGroup{Name: "Team", Participants: parts})
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// TestGroupSettings drives every group setting through the real client and
// checks the network's view after each, and that the creator's client hears
// of each change as the matching event.
func TestGroupSettings(t *testing.T) {
	t.Parallel()
	n := startNetwork(t)
	cli, ps := linkByQR(t, n, groupCreator)
	joined := eventsOf[*events.JoinedGroup](cli)
	changes := eventsOf[*events.GroupInfo](cli)
	pictures := eventsOf[*events.Picture](cli)
	ctx := context.Background()

	info := createTeam(t, cli, groupNotOnWA)
	gj := info.JID
	if gj.Server != types.GroupServer || info.Name != "Team" || info.OwnerJID != pn(groupCreator) {
		t.Fatalf("created %s %q owner %s", gj, info.Name, info.OwnerJID)
	}
	replied := map[string]types.GroupParticipant{}
	for _, p := range info.Participants {
		replied[p.JID.User] = p
	}
	if p := replied[groupNotOnWA]; p.Error != 404 {
		t.Errorf("the number not on WhatsApp was answered %+v, want error 404", p)
	}
	if p := replied[groupCreator]; !p.IsSuperAdmin || p.Error != 0 {
		t.Errorf("the creator was answered %+v, want superadmin", p)
	}
	if p := replied[groupB]; p.Error != 0 || p.IsAdmin {
		t.Errorf("B was answered %+v, want a plain member", p)
	}
	view := viewOf(t, n, gj)
	if want := map[string]string{groupCreator: wafake.RoleSuperAdmin, groupB: wafake.RoleMember, groupC: wafake.RoleMember}; !maps.Equal(roles(view), want) {
		t.Errorf("network holds participants %v, want %v", roles(view), want)
	}
	if view.Subject != "Team" || view.InviteCode == "" {
		t.Errorf("network view %+v", view)
	}
	j := nextEvent(t, joined)
	// whatsmeow no longer sends a create key (CreateGroup, group.go), so the
	// create notification carries none.
	if j.JID != gj || j.Name != "Team" || j.CreateKey != "" || len(j.Participants) != 3 {
		t.Errorf("JoinedGroup %s %q key %q with %d participants", j.JID, j.Name, j.CreateKey, len(j.Participants))
	}

	if err := cli.SetGroupName(ctx, gj, "Renamed"); err != nil {
		t.Fatal(err)
	}
	if v := viewOf(t, n, gj); v.Subject != "Renamed" {
		t.Errorf("subject %q after SetGroupName", v.Subject)
	}
	if e := nextEvent(t, changes); e.JID != gj || e.Name == nil || e.Name.Name != "Renamed" || e.Sender == nil || e.Sender.User != groupCreator {
		t.Errorf("GroupInfo after rename: %+v", e)
	}

	// SetGroupTopic without a previous id first queries the group for it.
	for _, topic := range []string{"first topic", "second topic"} {
		if err := cli.SetGroupTopic(ctx, gj, "", "", topic); err != nil {
			t.Fatal(err)
		}
		if v := viewOf(t, n, gj); v.Description != topic {
			t.Errorf("description %q, want %q", v.Description, topic)
		}
		if e := nextEvent(t, changes); e.Topic == nil || e.Topic.Topic != topic {
			t.Errorf("GroupInfo after SetGroupTopic(%q): %+v", topic, e.Topic)
		}
	}
	if err := cli.SetGroupTopic(ctx, gj, "not-the-current-id", "", "stale"); err == nil {
		t.Error("a topic with a stale previous id was accepted")
	}
	if err := cli.SetGroupDescription(ctx, gj, "described"); err != nil {
		t.Fatal(err)
	}
	if v := viewOf(t, n, gj); v.Description != "described" {
		t.Errorf("description %q after SetGroupDescription", v.Description)
	}
	if e := nextEvent(t, changes); e.Topic == nil || e.Topic.Topic != "described" {
		t.Errorf("GroupInfo after SetGroupDescription: %+v", e.Topic)
	}

	if err := cli.SetGroupAnnounce(ctx, gj, true); err != nil {
		t.Fatal(err)
	}
	if e := nextEvent(t, changes); e.Announce == nil || !e.Announce.IsAnnounce {
		t.Errorf("GroupInfo after SetGroupAnnounce: %+v", e.Announce)
	}
	if err := cli.SetGroupLocked(ctx, gj, true); err != nil {
		t.Fatal(err)
	}
	if e := nextEvent(t, changes); e.Locked == nil || !e.Locked.IsLocked {
		t.Errorf("GroupInfo after SetGroupLocked: %+v", e.Locked)
	}
	if v := viewOf(t, n, gj); !v.Announce || !v.Locked {
		t.Errorf("announce %v locked %v, want both", v.Announce, v.Locked)
	}

	if err := cli.SetDisappearingTimer(ctx, gj, whatsmeow.DisappearingTimer24Hours, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if e := nextEvent(t, changes); e.Ephemeral == nil || e.Ephemeral.DisappearingTimer != 86400 {
		t.Errorf("GroupInfo after SetDisappearingTimer: %+v", e.Ephemeral)
	}
	if err := cli.SetDisappearingTimer(ctx, gj, 5*time.Minute, time.Time{}); !errors.Is(err, whatsmeow.ErrInvalidDisappearingTimer) {
		t.Errorf("a 5 minute timer: %v, want ErrInvalidDisappearingTimer", err)
	}
	if v := viewOf(t, n, gj); v.Disappearing != 24*time.Hour {
		t.Errorf("disappearing timer %v, want 24h", v.Disappearing)
	}

	link, err := cli.GetGroupInviteLink(ctx, gj, false)
	if err != nil {
		t.Fatal(err)
	}
	code := viewOf(t, n, gj).InviteCode
	if link != whatsmeow.InviteLinkPrefix+code {
		t.Errorf("invite link %q, network holds code %q", link, code)
	}
	reset, err := cli.GetGroupInviteLink(ctx, gj, true)
	if err != nil {
		t.Fatal(err)
	}
	if newCode := viewOf(t, n, gj).InviteCode; reset == link || reset != whatsmeow.InviteLinkPrefix+newCode {
		t.Errorf("after reset the link is %q (was %q), network holds %q", reset, link, newCode)
	}
	if e := nextEvent(t, changes); e.NewInviteLink == nil || *e.NewInviteLink != reset {
		t.Errorf("GroupInfo after the reset: %+v", e.NewInviteLink)
	}

	if _, err := cli.UpdateGroupParticipants(ctx, gj, []types.JID{pn(groupB)}, whatsmeow.ParticipantChangePromote); err != nil {
		t.Fatal(err)
	}
	if e := nextEvent(t, changes); !slices.Contains(e.Promote, pn(groupB)) {
		t.Errorf("GroupInfo after promote: %+v", e.Promote)
	}
	if r := roles(viewOf(t, n, gj))[groupB]; r != wafake.RoleAdmin {
		t.Errorf("B is %q after promote", r)
	}
	res, err := cli.UpdateGroupParticipants(ctx, gj, []types.JID{pn(groupB), pn(groupStrange)}, whatsmeow.ParticipantChangeDemote)
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]int{}
	for _, p := range res {
		codes[p.JID.User] = p.Error
	}
	if want := map[string]int{groupB: 0, groupStrange: 404}; !maps.Equal(codes, want) {
		t.Errorf("demote answered %v, want %v", codes, want)
	}
	if e := nextEvent(t, changes); !slices.Equal(e.Demote, []types.JID{pn(groupB)}) {
		t.Errorf("GroupInfo after demote: %+v", e.Demote)
	}
	if r := roles(viewOf(t, n, gj)); r[groupB] != wafake.RoleMember || len(r) != 3 {
		t.Errorf("participants after demote: %v", r)
	}

	jpeg := fakeJPEG(t)
	picID, err := cli.SetGroupPhoto(ctx, gj, jpeg)
	if err != nil {
		t.Fatal(err)
	}
	if v := viewOf(t, n, gj); v.PictureSHA256 != hexSHA(jpeg) {
		t.Errorf("picture %q, want %q", v.PictureSHA256, hexSHA(jpeg))
	}
	if e := nextEvent(t, pictures); e.JID != gj || e.PictureID != picID || e.Author.User != groupCreator {
		t.Errorf("Picture event %+v, want %s by the creator", e, picID)
	}
	if _, err := cli.SetGroupPhoto(ctx, gj, []byte("GIF89a not a jpeg")); !errors.Is(err, whatsmeow.ErrInvalidImageFormat) {
		t.Errorf("a non-JPEG photo: %v, want ErrInvalidImageFormat", err)
	}
	pp, err := cli.GetProfilePictureInfo(ctx, gj, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := fetch(t, n, pp.URL); pp.ID != picID || !slices.Equal(got, jpeg) {
		t.Errorf("picture info %s served %d bytes, want %s and the JPEG set", pp.ID, len(got), picID)
	}

	// What the client reads back agrees with the network.
	gi, err := cli.GetGroupInfo(ctx, gj)
	if err != nil {
		t.Fatal(err)
	}
	if gi.Name != "Renamed" || gi.Topic != "described" || !gi.IsAnnounce || !gi.IsLocked || len(gi.Participants) != 3 {
		t.Errorf("GetGroupInfo: %q %q announce %v locked %v %d participants", gi.Name, gi.Topic, gi.IsAnnounce, gi.IsLocked, len(gi.Participants))
	}
	all, err := cli.GetJoinedGroups(ctx)
	if err != nil || len(all) != 1 || all[0].JID != gj {
		t.Errorf("GetJoinedGroups: %v %v", all, err)
	}
	if ps.ID.User != groupCreator {
		t.Fatalf("linked as %s", ps.ID)
	}
}

// TestGroupAdminRules: a plain member may not change admin-only settings
// nor participants (each participant answered 403); locking keeps it from
// renaming; it hears of the admin's changes, also after being offline; it
// may leave.
func TestGroupAdminRules(t *testing.T) {
	t.Parallel()
	n := startNetwork(t)
	admin, _ := linkByQR(t, n, groupCreator)
	member, mps := linkByQR(t, n, groupB)
	memberChanges := eventsOf[*events.GroupInfo](member)
	memberJoined := eventsOf[*events.JoinedGroup](member)
	ctx := context.Background()

	gj := createTeam(t, admin).JID
	if j := nextEvent(t, memberJoined); j.JID != gj {
		t.Fatalf("member joined %s, want %s", j.JID, gj)
	}
	if err := member.SetGroupAnnounce(ctx, gj, true); !errors.Is(err, whatsmeow.ErrIQNotAuthorized) {
		t.Errorf("member SetGroupAnnounce: %v, want not authorized", err)
	}
	if _, err := member.GetGroupInviteLink(ctx, gj, false); !errors.Is(err, whatsmeow.ErrGroupInviteLinkUnauthorized) {
		t.Errorf("member GetGroupInviteLink: %v, want ErrGroupInviteLinkUnauthorized", err)
	}
	res, err := member.UpdateGroupParticipants(ctx, gj, []types.JID{pn(groupCreator), pn(groupC)}, whatsmeow.ParticipantChangeRemove)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res {
		if p.Error != 403 {
			t.Errorf("member removing %s answered %d, want 403", p.JID, p.Error)
		}
	}
	if v := viewOf(t, n, gj); v.Announce || len(v.Participants) != 3 {
		t.Errorf("refused changes still changed the group: %+v", v)
	}
	if err := member.SetGroupName(ctx, gj, "by a member"); err != nil {
		t.Errorf("member renaming an unlocked group: %v", err)
	}
	if e := nextEvent(t, memberChanges); e.Name == nil || e.Name.Name != "by a member" {
		t.Errorf("member's own rename: %+v", e.Name)
	}
	if err := admin.SetGroupLocked(ctx, gj, true); err != nil {
		t.Fatal(err)
	}
	if e := nextEvent(t, memberChanges); e.Locked == nil || !e.Locked.IsLocked || e.Sender.User != groupCreator {
		t.Errorf("member heard of the lock as %+v", e)
	}
	if err := member.SetGroupName(ctx, gj, "locked out"); !errors.Is(err, whatsmeow.ErrIQNotAuthorized) {
		t.Errorf("member renaming a locked group: %v, want not authorized", err)
	}
	if v := viewOf(t, n, gj); v.Subject != "by a member" {
		t.Errorf("subject %q", v.Subject)
	}

	// Offline: the notification waits for the device and is gone once acked.
	member.Disconnect()
	if err := admin.SetGroupName(ctx, gj, "while you were away"); err != nil {
		t.Fatal(err)
	}
	testclient.Until(t, 10*time.Second, `n.Unacked(mps.ID) >= 1`, func() bool { return n.Unacked(mps.ID) >= 1 })
	if err := member.Connect(); err != nil {
		t.Fatal(err)
	}
	if e := nextEvent(t, memberChanges); e.Name == nil || e.Name.Name != "while you were away" {
		t.Errorf("after reconnect: %+v", e.Name)
	}
	testclient.Until(t, 10*time.Second, `n.Unacked(mps.ID) == 0`, func() bool { return n.Unacked(mps.ID) == 0 })

	if err := member.LeaveGroup(ctx, gj); err != nil {
		t.Fatal(err)
	}
	if e := nextEvent(t, memberChanges); !slices.Equal(e.Leave, []types.JID{pn(groupB)}) {
		t.Errorf("leaving: %+v", e.Leave)
	}
	if _, ok := roles(viewOf(t, n, gj))[groupB]; ok {
		t.Error("the member is still in the group after leaving")
	}
	if _, err := member.GetGroupInfo(ctx, gj); !errors.Is(err, whatsmeow.ErrNotInGroup) {
		t.Errorf("GetGroupInfo after leaving: %v, want ErrNotInGroup", err)
	}

	// Back by the invite link; then the last admin leaves and the
	// longest-standing member becomes admin.
	link, err := admin.GetGroupInviteLink(ctx, gj, false)
	if err != nil {
		t.Fatal(err)
	}
	if gi, err := member.GetGroupInfoFromLink(ctx, link); err != nil || gi.JID != gj || gi.Name != "while you were away" {
		t.Errorf("GetGroupInfoFromLink: %v %v", gi, err)
	}
	if j, err := member.JoinGroupWithLink(ctx, link); err != nil || j != gj {
		t.Fatalf("JoinGroupWithLink: %s %v", j, err)
	}
	if e := nextEvent(t, memberChanges); !slices.Equal(e.Join, []types.JID{pn(groupB)}) || e.JoinReason != "invite" {
		t.Errorf("joining by link: %+v (reason %q)", e.Join, e.JoinReason)
	}
	if _, err := member.JoinGroupWithLink(ctx, whatsmeow.InviteLinkPrefix+"nonsense"); !errors.Is(err, whatsmeow.ErrInviteLinkInvalid) {
		t.Errorf("an unknown invite code: %v, want ErrInviteLinkInvalid", err)
	}
	if err := admin.LeaveGroup(ctx, gj); err != nil {
		t.Fatal(err)
	}
	if e := nextEvent(t, memberChanges); !slices.Equal(e.Leave, []types.JID{pn(groupCreator)}) || !slices.Equal(e.Promote, []types.JID{pn(groupC)}) {
		t.Errorf("the admin leaving: leave %v promote %v", e.Leave, e.Promote)
	}
	if r := roles(viewOf(t, n, gj)); !maps.Equal(r, map[string]string{groupC: wafake.RoleAdmin, groupB: wafake.RoleMember}) {
		t.Errorf("after the admin left: %v", r)
	}
	if _, err := admin.GetGroupInfo(ctx, types.NewJID("120363000000000000", types.GroupServer)); !errors.Is(err, whatsmeow.ErrGroupNotFound) {
		t.Errorf("GetGroupInfo of no group: %v, want ErrGroupNotFound", err)
	}
}

// TestGroupMessageDecryptedByMembers: a text the client sends to a group
// is decrypted by every member's phone (through the sender key each phone
// takes from its own pairwise copy), with the group as the chat.
func TestGroupMessageDecryptedByMembers(t *testing.T) {
	t.Parallel()
	n := startNetwork(t)
	cli, ps := linkByQR(t, n, groupCreator)
	ctx := context.Background()
	gj := createTeam(t, cli).JID
	for i, text := range []string{"hello team", "and a second one on the same sender key"} {
		resp, err := cli.SendMessage(ctx, gj, &waE2E.Message{Conversation: proto.String(text)})
		if err != nil {
			t.Fatal(err)
		}
		for _, phone := range []string{groupCreator, groupB, groupC} {
			in := waitInbox(t, n, phone, i+1)
			got := in[i]
			if got.ID != resp.ID || got.Chat != gj || got.From != ps.ID || got.Message.GetConversation() != text {
				t.Errorf("%s decrypted %s in %s from %s: %q; want %s in %s from %s: %q",
					phone, got.ID, got.Chat, got.From, got.Message.GetConversation(), resp.ID, gj, ps.ID, text)
			}
		}
	}
	if in := n.Inbox(groupStrange); len(in) != 0 {
		t.Errorf("a non-member received %d messages", len(in))
	}

	// Announcement groups: only admins send.
	member, _ := linkByQR(t, n, groupB)
	if err := cli.SetGroupAnnounce(ctx, gj, true); err != nil {
		t.Fatal(err)
	}
	_, err := member.SendMessage(ctx, gj, &waE2E.Message{Conversation: proto.String("may I?")})
	if !errors.Is(err, whatsmeow.ErrServerReturnedError) {
		t.Errorf("a member writing in an announcement group: %v, want the server's refusal", err)
	}
	time.Sleep(50 * time.Millisecond)
	if in := n.Inbox(groupC); len(in) != 2 {
		t.Errorf("C has %d messages, want the 2 from the admin only", len(in))
	}
}

func fetch(t *testing.T, n *wafake.Network, url string) []byte {
	t.Helper()
	resp, err := n.HTTPClient().Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return b
}

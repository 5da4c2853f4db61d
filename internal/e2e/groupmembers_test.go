package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/types"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/testclient"
)

// groupFull is the network's view of a group with every field issue 34
// added.
type groupFull struct {
	Jid, Subject, InviteCode, Owner, MemberAddMode string
	ApprovalMode                                   bool
	EphemeralSeconds                               int
	JoinRequests                                   []string
	Participants                                   []struct{ Phone, Role string }
}

func groupFullView(t *testing.T, s *apptest.Server, jid string) groupFull {
	t.Helper()
	var out struct{ SandboxGroup *groupFull }
	s.MustGraphQL(t, apptest.AdminToken, `query($j: ID!) { sandboxGroup(jid: $j) { jid subject inviteCode owner memberAddMode approvalMode ephemeralSeconds joinRequests participants { phone role } } }`,
		map[string]any{"j": jid}, &out)
	if out.SandboxGroup == nil {
		t.Fatalf("the network has no group %s", jid)
	}
	return *out.SandboxGroup
}

func (g groupFull) roles() map[string]string {
	out := map[string]string{}
	for _, p := range g.Participants {
		out[p.Phone] = p.Role
	}
	return out
}

// awaitEvent waits for session sessionID's stored event of kind whose data
// match accepts, and returns its data.
func awaitEvent(t *testing.T, s *apptest.Server, sessionID, kind, what string, match func(map[string]any) bool) map[string]any {
	t.Helper()
	var found map[string]any
	testclient.Until(t, 15*time.Second, what, func() bool {
		for _, d := range eventData(t, s, sessionID, kind) {
			if match(d) {
				found = d
				return true
			}
		}
		return false
	})
	return found
}

// participantsEvent matches a group-participants.update of group about
// phone with action.
func participantsEvent(group, action, phone string) func(map[string]any) bool {
	return func(d map[string]any) bool {
		if d["id"] != group || d["action"] != action {
			return false
		}
		ps, _ := d["participants"].([]any)
		for _, p := range ps {
			if m, _ := p.(map[string]any); m["phone"] == phone {
				return true
			}
		}
		return false
	}
}

// outcomes is a per-participant REST answer.
type outcomes struct {
	Status map[string]struct {
		Status     string
		Code       int
		Message    string
		InviteLink string
	}
}

func postOutcomes(t *testing.T, s *apptest.Server, path, body string) outcomes {
	t.Helper()
	res := s.REST(t, "POST", path, apptest.AdminToken, body)
	if res.Status != http.StatusOK {
		t.Fatalf("POST %s: %d %s", path, res.Status, res.Body)
	}
	var out outcomes
	res.JSON(t, &out)
	return out
}

// TestGroupMembersAndSettings (issue 34): a group the session created,
// changed through every field of surface.md §3 (REST and GraphQL), each
// change checked in the network's view and followed by the event the same
// change from a phone produces.
func TestGroupMembersAndSettings(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	n := s.Network(t)
	const me, a, b, c, private = apptest.LinkedPhone, "4915550034101", "4915550034102", "4915550034103", "4915550034104"
	base := "/session/" + sess.ID + "/group"
	var created struct{ CreateGroup struct{ ID string } }
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!) { createGroup(sessionId: $s, input: {subject: "Verein", participants: ["`+a+`", "`+b+`"]}) { id } }`,
		map[string]any{"s": sess.ID}, &created)
	jid := created.CreateGroup.ID

	t.Run("group fresh from WhatsApp", func(t *testing.T) {
		var out struct {
			Group struct {
				ID, Name, MemberAddMode string
				Owner, CreatedAt        *string
				ApprovalMode            bool
				EphemeralSeconds        int
				Participants            []struct {
					Jid, Phone, Role string
					Lid              *string
				}
			}
		}
		s.MustGraphQL(t, apptest.AdminToken, `query($s: ID!, $j: ID!) { group(sessionId: $s, jid: $j) { id name owner createdAt approvalMode memberAddMode ephemeralSeconds participants { jid phone lid role } } }`,
			map[string]any{"s": sess.ID, "j": jid}, &out)
		g := out.Group
		if g.ID != jid || g.Name != "Verein" || g.Owner == nil || *g.Owner != me+"@s.whatsapp.net" || g.CreatedAt == nil ||
			g.ApprovalMode || g.MemberAddMode != "ADMINS" || g.EphemeralSeconds != 0 || len(g.Participants) != 3 {
			t.Fatalf("group answered %+v", g)
		}
		acct, _ := n.Account(a)
		for _, p := range g.Participants {
			want := map[string]string{me: "superadmin", a: "member", b: "member"}[p.Phone]
			if p.Role != want || p.Lid == nil || !strings.HasSuffix(*p.Lid, "@lid") || p.Jid != p.Phone+"@s.whatsapp.net" {
				t.Errorf("participant %+v (lid %v), want role %q and a LID", p, p.Lid, want)
			}
			if p.Phone == a && *p.Lid != acct.LID.String() {
				t.Errorf("%s's LID %s, the network's %s", a, *p.Lid, acct.LID)
			}
		}
		res := s.REST(t, "GET", base+"/"+strings.TrimSuffix(jid, "@g.us"), apptest.AdminToken, "")
		var env struct {
			Data struct {
				ID, MemberAddMode string
				Participants      []struct{ Phone, Role string }
			}
		}
		res.JSON(t, &env)
		if res.Status != http.StatusOK || env.Data.ID != jid || env.Data.MemberAddMode != "ADMINS" || len(env.Data.Participants) != 3 {
			t.Errorf("GET group: %d %s", res.Status, res.Body)
		}
	})
	t.Run("add, and an add refused by privacy offers the invite link", func(t *testing.T) {
		if err := n.SetPrivacy(private, types.PrivacySettingTypeGroupAdd, types.PrivacySettingContacts); err != nil {
			t.Fatal(err)
		}
		out := postOutcomes(t, s, base+"/"+jid+"/add", `["`+c+`","`+private+`","`+a+`"]`)
		code := groupFullView(t, s, jid).InviteCode
		if o := out.Status[c]; o.Status != "success" {
			t.Errorf("add %s: %+v", c, o)
		}
		if o := out.Status[private]; o.Status != "failed" || o.Code != 403 || !strings.Contains(o.Message, "privacy") ||
			o.InviteLink != "https://chat.whatsapp.com/"+code || !strings.Contains(o.Message, o.InviteLink) {
			t.Errorf("add %s (privacy): %+v", private, o)
		}
		if o := out.Status[a]; o.Status != "failed" || o.Code != 409 {
			t.Errorf("add %s (already in): %+v", a, o)
		}
		if r := groupFullView(t, s, jid).roles(); r[c] != "member" || r[private] != "" {
			t.Errorf("network after add: %v", r)
		}
		awaitEvent(t, s, sess.ID, "GROUP_PARTICIPANTS_UPDATE", "the add's event", participantsEvent(jid, "add", c))
	})
	t.Run("promote", func(t *testing.T) {
		var out struct {
			PromoteGroupParticipants []struct {
				Participant string
				Ok          bool
			}
		}
		s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $j: ID!) { promoteGroupParticipants(sessionId: $s, jid: $j, participants: ["`+c+`"]) { participant ok } }`,
			map[string]any{"s": sess.ID, "j": jid}, &out)
		if r := out.PromoteGroupParticipants; len(r) != 1 || !r[0].Ok || r[0].Participant != c {
			t.Errorf("promote answered %+v", r)
		}
		if r := groupFullView(t, s, jid).roles(); r[c] != "admin" {
			t.Errorf("network after promote: %v", r)
		}
		awaitEvent(t, s, sess.ID, "GROUP_PARTICIPANTS_UPDATE", "the promote's event", participantsEvent(jid, "promote", c))
	})
	t.Run("remove", func(t *testing.T) {
		out := postOutcomes(t, s, base+"/"+jid+"/remove", `["`+b+`","4915550034199"]`)
		if out.Status[b].Status != "success" || out.Status["4915550034199"].Code != 404 {
			t.Errorf("remove answered %+v", out)
		}
		if r := groupFullView(t, s, jid).roles(); r[b] != "" {
			t.Errorf("network after remove: %v", r)
		}
		awaitEvent(t, s, sess.ID, "GROUP_PARTICIPANTS_UPDATE", "the remove's event", participantsEvent(jid, "remove", b))
	})
	t.Run("approval mode, member-add mode, timer", func(t *testing.T) {
		var out struct {
			UpdateGroup struct {
				ApprovalMode     bool
				MemberAddMode    string
				EphemeralSeconds int
			}
		}
		s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $j: ID!) { updateGroup(sessionId: $s, jid: $j, input: {approvalMode: true, memberAddMode: ALL, ephemeralSeconds: 604800}) { approvalMode memberAddMode ephemeralSeconds } }`,
			map[string]any{"s": sess.ID, "j": jid}, &out)
		if u := out.UpdateGroup; !u.ApprovalMode || u.MemberAddMode != "ALL" || u.EphemeralSeconds != 604800 {
			t.Errorf("updateGroup answered %+v", u)
		}
		if g := groupFullView(t, s, jid); !g.ApprovalMode || g.MemberAddMode != "ALL" || g.EphemeralSeconds != 604800 {
			t.Errorf("network after update: %+v", g)
		}
		for field, want := range map[string]any{"approvalRequired": true, "memberAddMode": "ALL", "ephemeralSeconds": float64(604800)} {
			awaitEvent(t, s, sess.ID, "GROUPS_UPDATE", "groups.update of "+field, func(d map[string]any) bool { return d["id"] == jid && d[field] == want })
		}
		// REST: back, only the given fields.
		res := s.REST(t, "PUT", base+"/"+jid, apptest.AdminToken, `{"approvalMode":false,"memberAddMode":"ADMINS","ephemeralSeconds":0}`)
		if res.Status != http.StatusOK {
			t.Fatalf("PUT: %d %s", res.Status, res.Body)
		}
		if g := groupFullView(t, s, jid); g.ApprovalMode || g.MemberAddMode != "ADMINS" || g.EphemeralSeconds != 0 || g.Subject != "Verein" {
			t.Errorf("network after the REST update: %+v", g)
		}
		awaitEvent(t, s, sess.ID, "GROUPS_UPDATE", "groups.update of memberAddMode ADMINS", func(d map[string]any) bool { return d["id"] == jid && d["memberAddMode"] == "ADMINS" })
	})
	t.Run("invite link, reset, info", func(t *testing.T) {
		old := groupFullView(t, s, jid).InviteCode
		var out struct{ GroupInviteLink string }
		s.MustGraphQL(t, apptest.AdminToken, `query($s: ID!, $j: ID!) { groupInviteLink(sessionId: $s, jid: $j) }`, map[string]any{"s": sess.ID, "j": jid}, &out)
		if out.GroupInviteLink != "https://chat.whatsapp.com/"+old {
			t.Errorf("link %q, network's code %q", out.GroupInviteLink, old)
		}
		res := s.REST(t, "GET", base+"/"+jid+"/invite-link?reset=true", apptest.AdminToken, "")
		var env struct{ Data struct{ Link string } }
		res.JSON(t, &env)
		now := groupFullView(t, s, jid).InviteCode
		if res.Status != http.StatusOK || now == old || env.Data.Link != "https://chat.whatsapp.com/"+now {
			t.Errorf("reset: %d %s; network's code %s (was %s)", res.Status, res.Body, now, old)
		}
		awaitEvent(t, s, sess.ID, "GROUPS_UPDATE", "groups.update of the new link", func(d map[string]any) bool { return d["id"] == jid && d["inviteLink"] == env.Data.Link })
		res = s.REST(t, "GET", base+"/invite/"+now, apptest.AdminToken, "")
		var info struct{ Data struct{ ID, Name string } }
		res.JSON(t, &info)
		if res.Status != http.StatusOK || info.Data.ID != jid || info.Data.Name != "Verein" {
			t.Errorf("invite info: %d %s", res.Status, res.Body)
		}
		res = s.REST(t, "GET", base+"/invite/"+old, apptest.AdminToken, "")
		if res.Status != http.StatusUnprocessableEntity || !strings.Contains(res.Message(t), "revoked") {
			t.Errorf("invite info of the revoked link: %d %s", res.Status, res.Body)
		}
	})
	t.Run("bad input names the field", func(t *testing.T) {
		for body, field := range map[string]string{
			`{"ephemeralSeconds":5}`:       "ephemeralSeconds",
			`{"memberAddMode":"EVERYONE"}`: "memberAddMode",
		} {
			res := s.REST(t, "PUT", base+"/"+jid, apptest.AdminToken, body)
			if res.Status != http.StatusBadRequest || !strings.Contains(res.Message(t), field) {
				t.Errorf("PUT %s: %d %s", body, res.Status, res.Body)
			}
		}
		res := s.REST(t, "POST", base+"/join", apptest.AdminToken, `{"link":"https://chat.whatsapp.com/not a code"}`)
		if res.Status != http.StatusBadRequest || !strings.Contains(res.Message(t), "link") {
			t.Errorf("join with a bad link: %d %s", res.Status, res.Body)
		}
	})
	t.Run("join by link and leave", func(t *testing.T) {
		const host = "4915550034110"
		other, err := n.CreateGroup(host, "Nachbarn", a)
		if err != nil {
			t.Fatal(err)
		}
		code := groupFullView(t, s, other.String()).InviteCode
		var out struct {
			JoinGroup struct {
				ID                 string
				JoinRequestPending bool
			}
		}
		s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $l: String!) { joinGroup(sessionId: $s, link: $l) { id joinRequestPending } }`,
			map[string]any{"s": sess.ID, "l": "https://chat.whatsapp.com/" + code}, &out)
		if out.JoinGroup.ID != other.String() || out.JoinGroup.JoinRequestPending {
			t.Errorf("joinGroup answered %+v", out.JoinGroup)
		}
		if r := groupFullView(t, s, other.String()).roles(); r[me] != "member" {
			t.Errorf("network after the join: %v", r)
		}
		awaitEvent(t, s, sess.ID, "GROUPS_UPSERT", "groups.upsert of the joined group", func(d map[string]any) bool { return d["id"] == other.String() && d["reason"] == "invite" })

		res := s.REST(t, "POST", base+"/"+other.String()+"/leave", apptest.AdminToken, "")
		if res.Status != http.StatusOK {
			t.Fatalf("leave: %d %s", res.Status, res.Body)
		}
		if r := groupFullView(t, s, other.String()).roles(); r[me] != "" {
			t.Errorf("network after leaving: %v", r)
		}
		awaitEvent(t, s, sess.ID, "GROUP_PARTICIPANTS_UPDATE", "the leave's event", participantsEvent(other.String(), "remove", me))
	})
}

// TestNonAdminParticipantChangesFail (issue 34, must-show 2): the session's
// account is a plain member; its add, remove, promote and demote fail per
// participant, naming the reason, and the network's group is unchanged.
func TestNonAdminParticipantChangesFail(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	n := s.Network(t)
	const host, admin, member, outsider = "4915550034201", "4915550034202", "4915550034203", "4915550034204"
	g, err := n.CreateGroup(host, "Nicht meins", apptest.LinkedPhone, admin, member)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.SetRole(g, admin, "admin"); err != nil {
		t.Fatal(err)
	}
	before := groupFullView(t, s, g.String()).roles()
	for action, target := range map[string]string{"add": outsider, "remove": member, "promote": member, "demote": admin} {
		out := postOutcomes(t, s, "/session/"+sess.ID+"/group/"+g.String()+"/"+action, `["`+target+`"]`)
		if o := out.Status[target]; o.Status != "failed" || o.Code != 403 || !strings.Contains(o.Message, "not an admin") {
			t.Errorf("a non-admin's %s answered %+v", action, out)
		}
	}
	var gql struct {
		DemoteGroupParticipants []struct {
			Ok      bool
			Message *string
		}
	}
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $j: ID!) { demoteGroupParticipants(sessionId: $s, jid: $j, participants: ["`+admin+`"]) { ok message } }`,
		map[string]any{"s": sess.ID, "j": g.String()}, &gql)
	if r := gql.DemoteGroupParticipants; len(r) != 1 || r[0].Ok || r[0].Message == nil || !strings.Contains(*r[0].Message, "not an admin") {
		b, _ := json.Marshal(r)
		t.Errorf("GraphQL demote by a non-admin: %s", b)
	}
	after := groupFullView(t, s, g.String()).roles()
	if len(after) != len(before) || after[admin] != "admin" || after[member] != "member" || after[outsider] != "" {
		t.Errorf("the network's group changed: %v, was %v", after, before)
	}
	// The invite link and join requests are admins' too.
	res := s.REST(t, "GET", "/session/"+sess.ID+"/group/"+g.String()+"/invite-link", apptest.AdminToken, "")
	if res.Status != http.StatusUnprocessableEntity || !strings.Contains(res.Message(t), "not an admin") {
		t.Errorf("a non-admin's invite link: %d %s", res.Status, res.Body)
	}
}

// TestJoinRequestBetweenSessions (issue 34, must-show 3): one session
// creates a group where admins approve who joins; another session of the
// gateway asks to join by its link; the first sees group.join-request,
// approves, and the second sees itself added. A request made by a phone
// (sandboxRequestJoin) is rejected.
func TestJoinRequestBetweenSessions(t *testing.T) {
	t.Parallel()
	s, admin := apptest.StartLinked(t)
	const joiner, asker = "4915550034301", "4915550034302"
	second := s.LinkSession(t, joiner)

	var created struct{ CreateGroup struct{ ID string } }
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!) { createGroup(sessionId: $s, input: {subject: "Mit Zustimmung"}) { id } }`,
		map[string]any{"s": admin.ID}, &created)
	jid := created.CreateGroup.ID
	var link struct{ GroupInviteLink string }
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $j: ID!) { updateGroup(sessionId: $s, jid: $j, input: {approvalMode: true}) { approvalMode } }`,
		map[string]any{"s": admin.ID, "j": jid}, nil)
	s.MustGraphQL(t, apptest.AdminToken, `query($s: ID!, $j: ID!) { groupInviteLink(sessionId: $s, jid: $j) }`, map[string]any{"s": admin.ID, "j": jid}, &link)

	res := s.REST(t, "POST", "/session/"+second.ID+"/group/join", apptest.AdminToken, `{"link":"`+link.GroupInviteLink+`"}`)
	var joined struct {
		Data struct {
			ID                 string
			JoinRequestPending bool
		}
	}
	res.JSON(t, &joined)
	if res.Status != http.StatusOK || joined.Data.ID != jid || !joined.Data.JoinRequestPending {
		t.Fatalf("join: %d %s", res.Status, res.Body)
	}
	if g := groupFullView(t, s, jid); len(g.JoinRequests) != 1 || g.JoinRequests[0] != joiner || g.roles()[joiner] != "" {
		t.Fatalf("network after the request: %+v", g)
	}
	awaitEvent(t, s, admin.ID, "GROUP_JOIN_REQUEST", "the admin's group.join-request", func(d map[string]any) bool {
		return d["id"] == jid && d["action"] == "created" && d["participantPhone"] == joiner
	})
	var list struct {
		GroupJoinRequests []struct {
			Jid         string
			Phone       *string
			RequestedAt string
		}
	}
	s.MustGraphQL(t, apptest.AdminToken, `query($s: ID!, $j: ID!) { groupJoinRequests(sessionId: $s, jid: $j) { jid phone requestedAt } }`,
		map[string]any{"s": admin.ID, "j": jid}, &list)
	if l := list.GroupJoinRequests; len(l) != 1 || l[0].Phone == nil || *l[0].Phone != joiner || l[0].RequestedAt == "" {
		t.Errorf("groupJoinRequests: %+v", l)
	}
	var approved struct {
		ApproveGroupJoinRequests []struct{ Ok bool }
	}
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $j: ID!) { approveGroupJoinRequests(sessionId: $s, jid: $j, participants: ["`+joiner+`"]) { ok } }`,
		map[string]any{"s": admin.ID, "j": jid}, &approved)
	if r := approved.ApproveGroupJoinRequests; len(r) != 1 || !r[0].Ok {
		t.Errorf("approve answered %+v", r)
	}
	if g := groupFullView(t, s, jid); g.roles()[joiner] != "member" || len(g.JoinRequests) != 0 {
		t.Errorf("network after approval: %+v", g)
	}
	awaitEvent(t, s, second.ID, "GROUP_PARTICIPANTS_UPDATE", "the second session added", participantsEvent(jid, "add", joiner))
	awaitEvent(t, s, second.ID, "GROUPS_UPSERT", "the second session's groups.upsert", func(d map[string]any) bool { return d["id"] == jid })

	// A phone asks; the admin rejects by REST.
	var asked struct{ SandboxRequestJoin bool }
	s.MustGraphQL(t, apptest.AdminToken, `mutation($j: ID!, $f: String!) { sandboxRequestJoin(jid: $j, from: $f) }`, map[string]any{"j": jid, "f": asker}, &asked)
	awaitEvent(t, s, admin.ID, "GROUP_JOIN_REQUEST", "the phone's request", func(d map[string]any) bool {
		return d["id"] == jid && d["action"] == "created" && d["participantPhone"] == asker
	})
	out := postOutcomes(t, s, "/session/"+admin.ID+"/group/"+jid+"/requests/reject", `["`+asker+`","`+joiner+`"]`)
	if out.Status[asker].Status != "success" || out.Status[joiner].Code != 404 {
		t.Errorf("reject answered %+v", out)
	}
	if g := groupFullView(t, s, jid); len(g.JoinRequests) != 0 || g.roles()[asker] != "" {
		t.Errorf("network after the rejection: %+v", g)
	}
	awaitEvent(t, s, admin.ID, "GROUP_JOIN_REQUEST", "the rejection", func(d map[string]any) bool {
		return d["id"] == jid && d["action"] == "rejected" && d["participantPhone"] == asker
	})
	res = s.REST(t, "GET", "/session/"+admin.ID+"/group/"+jid+"/requests", apptest.AdminToken, "")
	if res.Status != http.StatusOK || !strings.Contains(string(res.Body), `"data":[]`) || !strings.Contains(string(res.Body), `"nextCursor":null`) {
		t.Errorf("GET requests: %d %s", res.Status, res.Body)
	}
}

// TestFullGroupRefusesAdds (issue 34): a group at WhatsApp's 1024 members
// takes nobody more: the add fails for that participant, saying why; a
// join by link is WHATSAPP_REFUSED naming it.
func TestFullGroupRefusesAdds(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	n := s.Network(t)
	const host, more = "4915550034501", "4915550034502"
	members := []string{apptest.LinkedPhone}
	for i := range 1022 {
		members = append(members, fmt.Sprintf("4916%09d", i+1))
	}
	g, err := n.CreateGroup(host, "Voll", members...)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.SetRole(g, apptest.LinkedPhone, "admin"); err != nil {
		t.Fatal(err)
	}
	out := postOutcomes(t, s, "/session/"+sess.ID+"/group/"+g.String()+"/add", `["`+more+`"]`)
	if o := out.Status[more]; o.Status != "failed" || o.Code != 500 || o.Message != "the group is full" {
		t.Errorf("adding to a full group answered %+v", out)
	}
	if v := groupFullView(t, s, g.String()); len(v.Participants) != 1024 {
		t.Errorf("the network's group has %d members", len(v.Participants))
	}
	// The account leaves; the host fills its place; its join is refused.
	if err := n.LeaveGroup(apptest.LinkedPhone, g); err != nil {
		t.Fatal(err)
	}
	if err := n.UpdateGroupParticipants(host, g, "add", more); err != nil {
		t.Fatal(err)
	}
	res := s.REST(t, "POST", "/session/"+sess.ID+"/group/join", apptest.AdminToken, `{"link":"`+groupFullView(t, s, g.String()).InviteCode+`"}`)
	if res.Status != http.StatusUnprocessableEntity || !strings.Contains(res.Message(t), "the group is full") {
		t.Errorf("joining a full group: %d %s", res.Status, res.Body)
	}
}

package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/whatsapp"
)

type sandboxGroup struct {
	Jid, Subject, Description, InviteCode string
	Announce, Locked                      bool
	PictureSha256                         *string
	Participants                          []struct{ Phone, Role string }
}

func groupView(t *testing.T, s *apptest.Server, jid string) sandboxGroup {
	t.Helper()
	var out struct{ SandboxGroup *sandboxGroup }
	s.MustGraphQL(t, apptest.AdminToken, `query($j: ID!) { sandboxGroup(jid: $j) { jid subject description announce locked inviteCode pictureSha256 participants { phone role } } }`,
		map[string]any{"j": jid}, &out)
	if out.SandboxGroup == nil {
		t.Fatalf("the network has no group %s", jid)
	}
	return *out.SandboxGroup
}

func roles(g sandboxGroup) map[string]string {
	out := map[string]string{}
	for _, p := range g.Participants {
		out[p.Phone] = p.Role
	}
	return out
}

// TestGroups: create, update (REST and GraphQL), send an invite, demote
// with a failed participant; each checked in the network's view.
func TestGroups(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	const owner, a, b, invitee = apptest.LinkedPhone, "4915550003002", "4915550003003", "4915550003004"
	base := "/session/" + sess.ID + "/group"

	res := s.REST(t, "POST", base, apptest.AdminToken, `{"subject":"Team","description":"Our team","participants":["`+a+`","`+b+`"]}`)
	if res.Status != http.StatusOK {
		t.Fatalf("create group: %d %s", res.Status, res.Body)
	}
	var created struct {
		Data struct{ ID, Name, Description string }
	}
	res.JSON(t, &created)
	jid := created.Data.ID
	if !strings.HasSuffix(jid, "@g.us") || created.Data.Name != "Team" || created.Data.Description != "Our team" {
		t.Fatalf("create group answered %s", res.Body)
	}
	g := groupView(t, s, jid)
	if g.Subject != "Team" || g.Description != "Our team" || roles(g)[owner] != "superadmin" || roles(g)[a] != "member" || roles(g)[b] != "member" {
		t.Fatalf("network holds %+v", g)
	}

	t.Run("update by REST: only given fields change", func(t *testing.T) {
		bare := strings.TrimSuffix(jid, "@g.us") // the bare group number is accepted too
		res := s.REST(t, "PUT", base+"/"+bare, apptest.AdminToken, `{"subject":"Team 2","onlyAdminsCanPost":true}`)
		if res.Status != http.StatusOK || string(res.Body) != `{"status":"success","data":{}}`+"\n" {
			t.Fatalf("update: %d %s", res.Status, res.Body)
		}
		g := groupView(t, s, jid)
		if g.Subject != "Team 2" || !g.Announce || g.Locked || g.Description != "Our team" {
			t.Errorf("network holds %+v", g)
		}
	})
	t.Run("update by GraphQL", func(t *testing.T) {
		var out struct {
			UpdateGroup struct {
				Name, Description                        string
				OnlyAdminsCanPost, OnlyAdminsCanEditInfo bool
			}
		}
		s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $j: ID!) { updateGroup(sessionId: $s, jid: $j, input: {description: "New rules", onlyAdminsCanEditInfo: true}) { name description onlyAdminsCanPost onlyAdminsCanEditInfo } }`,
			map[string]any{"s": sess.ID, "j": jid}, &out)
		g := groupView(t, s, jid)
		if g.Description != "New rules" || !g.Locked || !g.Announce || g.Subject != "Team 2" {
			t.Errorf("network holds %+v", g)
		}
		if u := out.UpdateGroup; u.Name != "Team 2" || u.Description != "New rules" || !u.OnlyAdminsCanPost || !u.OnlyAdminsCanEditInfo {
			t.Errorf("updateGroup answered %+v", u)
		}
	})
	t.Run("send invite", func(t *testing.T) {
		res := s.REST(t, "POST", base+"/"+jid+"/send-invite", apptest.AdminToken, `{"number":"`+invitee+`","message":"Join us!"}`)
		if res.Status != http.StatusOK {
			t.Fatalf("send-invite: %d %s", res.Status, res.Body)
		}
		var env struct{ Data struct{ MessageID string } }
		res.JSON(t, &env)
		m := received(t, s, invitee, env.Data.MessageID)
		want := "Join us!\n\nhttps://chat.whatsapp.com/" + groupView(t, s, jid).InviteCode
		if str(m.Text) != want {
			t.Errorf("invitee read %q, want %q", str(m.Text), want)
		}
	})
	t.Run("demote with a failed participant", func(t *testing.T) {
		gj, err := whatsapp.ParseJID(jid)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{a, b} {
			if err := s.Network(t).SetRole(gj, p, "admin"); err != nil {
				t.Fatal(err)
			}
		}
		stranger := "4915550003999"
		res := s.REST(t, "POST", base+"/"+jid+"/demote", apptest.AdminToken, `["`+a+`","`+stranger+`","`+b+`@s.whatsapp.net"]`)
		if res.Status != http.StatusOK {
			t.Fatalf("demote: %d %s", res.Status, res.Body)
		}
		var out struct {
			Status map[string]struct {
				Status  string
				Code    int
				Message string
			}
		}
		res.JSON(t, &out)
		if out.Status[a].Status != "success" || out.Status[b+"@s.whatsapp.net"].Status != "success" {
			t.Errorf("demote answered %s", res.Body)
		}
		if f := out.Status[stranger]; f.Status != "failed" || f.Code != 404 || f.Message == "" {
			t.Errorf("the stranger's outcome: %+v (%s)", f, res.Body)
		}
		if r := roles(groupView(t, s, jid)); r[a] != "member" || r[b] != "member" || r[owner] != "superadmin" {
			t.Errorf("roles after demote: %v", r)
		}
		// GraphQL: the same through demoteGroupParticipants.
		if err := s.Network(t).SetRole(gj, a, "admin"); err != nil {
			t.Fatal(err)
		}
		var g struct {
			DemoteGroupParticipants []struct {
				Participant string
				Ok          bool
				Code        *int
			}
		}
		s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $j: ID!, $p: [String!]!) { demoteGroupParticipants(sessionId: $s, jid: $j, participants: $p) { participant ok code } }`,
			map[string]any{"s": sess.ID, "j": jid, "p": []string{a, stranger}}, &g)
		b, _ := json.Marshal(g)
		if r := g.DemoteGroupParticipants; len(r) != 2 || !r[0].Ok || r[0].Participant != a || r[1].Ok || r[1].Code == nil || *r[1].Code != 404 {
			t.Errorf("demoteGroupParticipants: %s", b)
		}
	})
	t.Run("groups query", func(t *testing.T) {
		var out struct {
			Groups []struct {
				ID           string
				Participants []struct{ Phone, Role string }
			}
		}
		s.MustGraphQL(t, apptest.AdminToken, `query($s: ID!) { groups(sessionId: $s) { id participants { phone role } } }`, map[string]any{"s": sess.ID}, &out)
		if len(out.Groups) != 1 || out.Groups[0].ID != jid || len(out.Groups[0].Participants) != 3 {
			t.Errorf("groups: %+v", out.Groups)
		}
	})
	t.Run("createGroup by GraphQL", func(t *testing.T) {
		var out struct{ CreateGroup struct{ ID, Name string } }
		s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!) { createGroup(sessionId: $s, input: {subject: "Two", participants: ["`+a+`"]}) { id name } }`,
			map[string]any{"s": sess.ID}, &out)
		if g := groupView(t, s, out.CreateGroup.ID); g.Subject != "Two" || roles(g)[a] != "member" {
			t.Errorf("network holds %+v", g)
		}
	})
}

package whatsapp

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"image"
	"image/color"
	"image/jpeg"
	"maps"
	"strings"
	"testing"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

const (
	memberB = "4915112345678"
	memberC = "4915187654321"
	notOnWA = "4915100000000" // numbers ending in 0000 are not on WhatsApp
	outside = "4915199999999" // on WhatsApp, never in the group
)

func userJID(phone string) types.JID { return types.NewJID(phone, types.DefaultUserServer) }

// testJPEG encodes a small real JPEG of colour c.
func testJPEG(t *testing.T, c color.Color) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	for x := range 8 {
		for y := range 8 {
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// errOf is the error of a call whose result a test does not look at.
func errOf[T any](_ T, err error) error { return err }

func sha(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// netGroup is the network's view of the group jid.
func (e *env) netGroup(jid types.JID) wafake.GroupInfo {
	e.t.Helper()
	g, ok := e.net.Group(jid)
	if !ok {
		e.t.Fatalf("the network has no group %s", jid)
	}
	return g
}

func netRoles(g wafake.GroupInfo) map[string]string {
	out := map[string]string{}
	for _, p := range g.Participants {
		out[p.Phone] = p.Role
	}
	return out
}

func groupRoles(g Group) map[string]string {
	out := map[string]string{}
	for _, p := range g.Participants {
		out[p.Phone] = p.Role
	}
	return out
}

func TestParseGroupJID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"120363025246125888@g.us", "120363025246125888@g.us", true},
		{"120363025246125888", "120363025246125888@g.us", true},
		{" 120363025246125888 ", "120363025246125888@g.us", true},
		{"491701234567-1611234567", "491701234567-1611234567@g.us", true},
		{"491701234567-1611234567@g.us", "491701234567-1611234567@g.us", true},
		{"", "", false},
		{"120363025246125888@s.whatsapp.net", "", false},
		{"abc@g.us", "", false},
		{"1-2-3", "", false},
		{"123-", "", false},
		{"+120363025246125888", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			jid, err := ParseGroupJID("jid", tt.in)
			if !tt.ok {
				if f := fault.From(err); f == nil || f.Code != fault.Invalid || f.Field != "jid" {
					t.Fatalf("ParseGroupJID(%q) = %v, %v; want an invalid jid", tt.in, jid, err)
				}
				return
			}
			if err != nil || jid.String() != tt.want {
				t.Fatalf("ParseGroupJID(%q) = %v, %v; want %s", tt.in, jid, err, tt.want)
			}
		})
	}
}

// TestGroups drives every group operation of the manager through a real
// client against the network, and checks what the network holds after each.
func TestGroups(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	st := e.pairQR(m, "s1", phone)

	// Create: the participant not on WhatsApp is refused alone.
	g, err := m.CreateGroup(ctx, "s1", "Team", "the team's group", []types.JID{userJID(memberB), userJID(memberC), userJID(notOnWA)})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{phone: RoleSuperAdmin, memberB: RoleMember, memberC: RoleMember}
	ng := e.netGroup(g.JID)
	if got := netRoles(ng); !maps.Equal(got, want) {
		t.Errorf("network members %v, want %v", got, want)
	}
	if ng.Subject != "Team" || ng.Description != "the team's group" || ng.Announce || ng.Locked {
		t.Errorf("network group %+v", ng)
	}
	if got := groupRoles(g); g.Name != "Team" || g.Description != "the team's group" || !maps.Equal(got, want) {
		t.Errorf("CreateGroup returned %+v (roles %v)", g, got)
	}
	if len(g.NotAdded) != 1 || g.NotAdded[0].JID != userJID(notOnWA) || g.NotAdded[0].OK ||
		g.NotAdded[0].Code != 404 || g.NotAdded[0].Message != "not on WhatsApp" {
		t.Errorf("NotAdded %+v, want %s refused with 404", g.NotAdded, notOnWA)
	}

	// Read, alone and in the list.
	got, err := m.Group(ctx, "s1", g.JID)
	if err != nil || got.Name != "Team" || got.Description != "the team's group" || !maps.Equal(groupRoles(got), want) || got.NotAdded != nil {
		t.Errorf("Group = %+v, %v", got, err)
	}
	if plain, err := m.CreateGroup(ctx, "s1", "Plain", "", nil); err != nil || plain.Description != "" || len(plain.Participants) != 1 || e.netGroup(plain.JID).Description != "" {
		t.Errorf("CreateGroup without description or participants = %+v, %v", plain, err)
	}
	all, err := m.Groups(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, gr := range all {
		names[gr.Name] = gr.JID.String()
	}
	if len(all) != 2 || names["Team"] != g.JID.String() || names["Plain"] == "" {
		t.Errorf("Groups = %v", names)
	}

	// Update: only the given fields change.
	str := func(s string) *string { return &s }
	yes, no := true, false
	type state struct {
		name, desc       string
		announce, locked bool
	}
	updates := []struct {
		name string
		u    GroupUpdate
		want state
	}{
		{"name", GroupUpdate{Name: str("Team 2")}, state{"Team 2", "the team's group", false, false}},
		{"description", GroupUpdate{Description: str("new rules")}, state{"Team 2", "new rules", false, false}},
		{"description again", GroupUpdate{Description: str("newer rules")}, state{"Team 2", "newer rules", false, false}},
		{"announce", GroupUpdate{OnlyAdminsCanPost: &yes}, state{"Team 2", "newer rules", true, false}},
		{"locked", GroupUpdate{OnlyAdminsCanEditInfo: &yes}, state{"Team 2", "newer rules", true, true}},
		{"nothing", GroupUpdate{}, state{"Team 2", "newer rules", true, true}},
		{"unchanged values", GroupUpdate{Name: str("Team 2"), OnlyAdminsCanPost: &yes}, state{"Team 2", "newer rules", true, true}},
		{"all together", GroupUpdate{Name: str("Team 3"), Description: str("all at once"), OnlyAdminsCanPost: &no, OnlyAdminsCanEditInfo: &no},
			state{"Team 3", "all at once", false, false}},
		{"description removed", GroupUpdate{Description: str("")}, state{"Team 3", "", false, false}},
	}
	for _, tt := range updates {
		t.Run("update "+tt.name, func(t *testing.T) {
			got, err := m.UpdateGroup(ctx, "s1", g.JID, tt.u)
			if err != nil {
				t.Fatal(err)
			}
			ng := e.netGroup(g.JID)
			if s := (state{ng.Subject, ng.Description, ng.Announce, ng.Locked}); s != tt.want {
				t.Errorf("network holds %+v, want %+v", s, tt.want)
			}
			if s := (state{got.Name, got.Description, got.OnlyAdminsCanPost, got.OnlyAdminsCanEditInfo}); s != tt.want {
				t.Errorf("UpdateGroup returned %+v, want %+v", s, tt.want)
			}
			if !maps.Equal(groupRoles(got), want) {
				t.Errorf("members after the update %v, want %v", groupRoles(got), want)
			}
		})
	}
	_, err = m.UpdateGroup(ctx, "s1", g.JID, GroupUpdate{Name: str(strings.Repeat("x", 101))})
	wantFault(t, err, fault.WhatsAppRefused, "change the group name", "406")
	if e.netGroup(g.JID).Subject != "Team 3" {
		t.Errorf("a refused name changed the group")
	}

	// Invite link.
	link, err := m.GroupInviteLink(ctx, "s1", g.JID)
	if code := e.netGroup(g.JID).InviteCode; err != nil || link != "https://chat.whatsapp.com/"+code || code == "" {
		t.Errorf("GroupInviteLink = %q, %v; the network's code is %q", link, err, code)
	}

	// Demote two admins and one number that is not in the group.
	cli, err := m.client("s1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.UpdateGroupParticipants(ctx, g.JID, []types.JID{userJID(memberB), userJID(memberC)}, whatsmeow.ParticipantChangePromote); err != nil {
		t.Fatal(err)
	}
	if r := netRoles(e.netGroup(g.JID)); r[memberB] != RoleAdmin || r[memberC] != RoleAdmin {
		t.Fatalf("promotion did not land: %v", r)
	}
	outs, err := m.DemoteParticipants(ctx, "s1", g.JID, []types.JID{userJID(memberC), userJID(outside), userJID(memberB)})
	if err != nil {
		t.Fatal(err)
	}
	wantOuts := []ParticipantOutcome{
		{JID: userJID(memberC), OK: true},
		{JID: userJID(outside), Code: 404, Message: "not a participant"},
		{JID: userJID(memberB), OK: true},
	}
	if len(outs) != len(wantOuts) {
		t.Fatalf("outcomes %+v, want %+v", outs, wantOuts)
	}
	for i := range wantOuts {
		if outs[i] != wantOuts[i] {
			t.Errorf("outcome %d: %+v, want %+v", i, outs[i], wantOuts[i])
		}
	}
	if r := netRoles(e.netGroup(g.JID)); !maps.Equal(r, want) {
		t.Errorf("network roles after demoting %v, want %v", r, want)
	}
	_, err = m.DemoteParticipants(ctx, "s1", g.JID, nil)
	wantFault(t, err, fault.WhatsAppRefused, "400")

	// Group picture.
	pic := testJPEG(t, color.RGBA{R: 200, A: 255})
	if err := m.SetPicture(ctx, "s1", g.JID, pic); err != nil {
		t.Fatal(err)
	}
	if got := e.netGroup(g.JID).PictureSHA256; got != sha(pic) {
		t.Errorf("network group picture %s, want %s", got, sha(pic))
	}

	// WhatsApp's limits, which internal/account checks before a request
	// reaches the adapter, are the network's too.
	_, err = m.CreateGroup(ctx, "s1", strings.Repeat("x", 101), "", nil)
	wantFault(t, err, fault.WhatsAppRefused, "create the group", "406")
	long, err := m.CreateGroup(ctx, "s1", "Long", strings.Repeat("d", 2049), nil)
	wantFault(t, err, fault.WhatsAppRefused, "was created, but its description was not set", "406")
	if long.JID.IsEmpty() || e.netGroup(long.JID).Description != "" {
		t.Errorf("a refused description: group %v, network description %q; want the group without one", long.JID, e.netGroup(long.JID).Description)
	}

	// An unknown group is 404 for every operation.
	unknown := types.NewJID("120363000000000000", types.GroupServer)
	notFound := map[string]func() error{
		"Group":              func() error { return errOf(m.Group(ctx, "s1", unknown)) },
		"UpdateGroup":        func() error { return errOf(m.UpdateGroup(ctx, "s1", unknown, GroupUpdate{Name: str("x")})) },
		"GroupInviteLink":    func() error { return errOf(m.GroupInviteLink(ctx, "s1", unknown)) },
		"DemoteParticipants": func() error { return errOf(m.DemoteParticipants(ctx, "s1", unknown, []types.JID{userJID(memberB)})) },
		"SetPicture":         func() error { return m.SetPicture(ctx, "s1", unknown, pic) },
	}
	for name, op := range notFound {
		t.Run(name+" of an unknown group", func(t *testing.T) {
			wantFault(t, op(), fault.NotFound, "group 120363000000000000@g.us not found")
		})
	}

	// Not connected: 409 for every operation.
	e.settle(st)
	if err := m.Disconnect("s1"); err != nil {
		t.Fatal(err)
	}
	someone := []types.JID{userJID(memberB)}
	notConnected := map[string]func(id string) error{
		"CreateGroup":        func(id string) error { return errOf(m.CreateGroup(ctx, id, "x", "", nil)) },
		"Group":              func(id string) error { return errOf(m.Group(ctx, id, g.JID)) },
		"Groups":             func(id string) error { return errOf(m.Groups(ctx, id)) },
		"UpdateGroup":        func(id string) error { return errOf(m.UpdateGroup(ctx, id, g.JID, GroupUpdate{Name: str("x")})) },
		"GroupInviteLink":    func(id string) error { return errOf(m.GroupInviteLink(ctx, id, g.JID)) },
		"DemoteParticipants": func(id string) error { return errOf(m.DemoteParticipants(ctx, id, g.JID, someone)) },
		"SetPicture":         func(id string) error { return m.SetPicture(ctx, id, g.JID, pic) },
	}
	for name, op := range notConnected {
		t.Run(name+" when not connected", func(t *testing.T) {
			wantFault(t, op("s1"), fault.NotConnected, "session s1 is not connected (status: DISCONNECTED)")
			wantFault(t, op("never-loaded"), fault.NotConnected, "session never-loaded is not connected")
		})
	}
}

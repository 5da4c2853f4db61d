package e2e

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/types"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/testclient"
)

// The lookups of surface.md §2 end to end: GraphQL and REST against a
// session linked to the simulated network, which answers as WhatsApp does.

type numberCheck struct {
	Number     string
	OnWhatsApp bool
	JID, LID   *string
	IsBusiness bool
}

type identity struct {
	Input, JID string
	Phone, LID *string
}

// setProfile sets what the network tells of phone (sandboxSetProfile).
func setProfile(t *testing.T, s *apptest.Server, phone string, args map[string]any) {
	t.Helper()
	vars := map[string]any{"p": phone, "a": args["about"], "i": args["picture"], "b": args["business"]}
	s.MustGraphQL(t, apptest.AdminToken, `mutation($p: String!, $a: String, $i: String, $b: Boolean) {
		sandboxSetProfile(phone: $p, about: $a, picture: $i, business: $b) }`, vars, nil)
}

// lidOf is the LID the network gave the account of phone (made on first
// use).
func lidOf(t *testing.T, s *apptest.Server, phone string) string {
	t.Helper()
	a, ok := s.Network(t).Account(phone)
	if !ok || a.LID.User == "" {
		t.Fatalf("the network has no LID for %s", phone)
	}
	return a.LID.String()
}

// wantBadInput checks a GraphQL answer is BAD_USER_INPUT naming field.
func wantBadInput(t *testing.T, what string, res apptest.GQLResponse, field, rule string) {
	t.Helper()
	if len(res.Errors) != 1 || res.Errors[0].Code() != "BAD_USER_INPUT" || res.Errors[0].Extensions["field"] != field || !strings.Contains(res.Errors[0].Message, rule) {
		t.Errorf("%s: %+v, want BAD_USER_INPUT naming %s saying %q", what, res.Errors, field, rule)
	}
}

// wantREST checks a REST failure's status and that its message says rule.
func wantREST(t *testing.T, what string, r apptest.Response, status int, rule string) {
	t.Helper()
	if r.Status != status || !strings.Contains(r.Message(t), rule) {
		t.Errorf("%s: %d %s, want %d saying %q", what, r.Status, r.Body, status, rule)
	}
}

// TestCheckNumbers: each number is answered in the order given, with the
// number as given, its JID and LID and whether it is a business; a number
// not on WhatsApp has neither. GraphQL and REST answer the same; more than
// 50 numbers or a LID are refused naming the field.
func TestCheckNumbers(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	const shop, plain, absent = "4915550410001", "4915550410002", "4915550410000"
	setProfile(t, s, shop, map[string]any{"business": true})
	numbers := []string{"+49 1555 0410002", absent, shop + "@s.whatsapp.net"}
	var g struct{ CheckNumbers []numberCheck }
	s.MustGraphQL(t, apptest.AdminToken, `query($s: ID!, $n: [String!]!) { checkNumbers(sessionId: $s, numbers: $n) { number onWhatsApp jid lid isBusiness } }`,
		map[string]any{"s": sess.ID, "n": numbers}, &g)
	var r struct{ Data []numberCheck }
	res := s.REST(t, "POST", "/session/"+sess.ID+"/contact/check", apptest.AdminToken, `{"numbers":["+49 1555 0410002","`+absent+`","`+shop+`@s.whatsapp.net"]}`)
	if res.Status != http.StatusOK {
		t.Fatalf("REST check: %d %s", res.Status, res.Body)
	}
	res.JSON(t, &r)
	want := []numberCheck{ // the network made the accounts as it was asked
		{Number: numbers[0], OnWhatsApp: true, JID: ptr(plain + "@s.whatsapp.net"), LID: ptr(lidOf(t, s, plain))},
		{Number: absent},
		{Number: numbers[2], OnWhatsApp: true, JID: ptr(shop + "@s.whatsapp.net"), LID: ptr(lidOf(t, s, shop)), IsBusiness: true},
	}
	for api, got := range map[string][]numberCheck{"GraphQL": g.CheckNumbers, "REST": r.Data} {
		if fmt.Sprint(deref(got)) != fmt.Sprint(deref(want)) {
			t.Errorf("%s: %v, want %v", api, deref(got), deref(want))
		}
	}

	many := make([]string, 51)
	for i := range many {
		many[i] = fmt.Sprintf("49155504%05d", i)
	}
	wantBadInput(t, "51 numbers", s.GraphQL(t, apptest.AdminToken, `query($s: ID!, $n: [String!]!) { checkNumbers(sessionId: $s, numbers: $n) { number } }`,
		map[string]any{"s": sess.ID, "n": many}), "numbers", "1 to 50")
	wantREST(t, "a LID to check", s.REST(t, "POST", "/session/"+sess.ID+"/contact/check", apptest.AdminToken, `{"numbers":["491701234567","200000000000001@lid"]}`),
		http.StatusBadRequest, "numbers[1]")
}

// deref shows pointers' values, for comparing answers.
func deref(cs []numberCheck) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = fmt.Sprintf("%s %v %s %s %v", c.Number, c.OnWhatsApp, str(c.JID), str(c.LID), c.IsBusiness)
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// TestUserInfo: what sandboxSetProfile set is what userInfo reads, asked
// by number or by LID, through GraphQL and REST: about, picture id,
// devices, business and verified name, phone and LID. A number not on
// WhatsApp is null (404).
func TestUserInfo(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	const shop, absent = "4915550420001", "4915550420000"
	picture := base64.StdEncoding.EncodeToString(noisyJPEG(t, 64))
	setProfile(t, s, shop, map[string]any{"about": "Open 9-17", "picture": picture, "business": true})
	net := s.Network(t)
	acct, _ := net.Account(shop)
	var sb struct{ SandboxAccount struct{ About string } }
	s.MustGraphQL(t, apptest.AdminToken, `query($p: String!) { sandboxAccount(phone: $p) { about } }`, map[string]any{"p": shop}, &sb)
	if sb.SandboxAccount.About != "Open 9-17" {
		t.Errorf("sandboxAccount about %q", sb.SandboxAccount.About)
	}

	type userInfo struct {
		JID, Phone, LID, About, PictureID *string
		Devices                           []string
		BusinessName, VerifiedName        *string
	}
	want := fmt.Sprint("jid ", shop+"@s.whatsapp.net", " phone ", shop, " lid ", acct.LID.String(), " about Open 9-17 picture ", acct.PictureID,
		" devices [", shop+"@s.whatsapp.net", "] business Business ", shop, " verified Business ", shop)
	show := func(u *userInfo) string {
		if u == nil {
			return "null"
		}
		return fmt.Sprint("jid ", str(u.JID), " phone ", str(u.Phone), " lid ", str(u.LID), " about ", str(u.About), " picture ", str(u.PictureID),
			" devices ", u.Devices, " business ", str(u.BusinessName), " verified ", str(u.VerifiedName))
	}
	const q = `query($s: ID!, $n: String!) { userInfo(sessionId: $s, number: $n) { jid phone lid about pictureId devices businessName verifiedName } }`
	for _, number := range []string{shop, acct.LID.String()} {
		var g struct{ UserInfo *userInfo }
		s.MustGraphQL(t, apptest.AdminToken, q, map[string]any{"s": sess.ID, "n": number}, &g)
		if got := show(g.UserInfo); got != want {
			t.Errorf("GraphQL userInfo(%s):\n got %s\nwant %s", number, got, want)
		}
		res := s.REST(t, "GET", "/session/"+sess.ID+"/contact/"+number, apptest.AdminToken, "")
		var r struct{ Data *userInfo }
		res.JSON(t, &r)
		if got := show(r.Data); res.Status != http.StatusOK || got != want {
			t.Errorf("REST userInfo(%s): %d\n got %s\nwant %s", number, res.Status, got, want)
		}
	}

	var none struct{ UserInfo *userInfo }
	s.MustGraphQL(t, apptest.AdminToken, q, map[string]any{"s": sess.ID, "n": absent}, &none)
	if none.UserInfo != nil {
		t.Errorf("userInfo of a number not on WhatsApp: %s, want null", show(none.UserInfo))
	}
	wantREST(t, "a number not on WhatsApp", s.REST(t, "GET", "/session/"+sess.ID+"/contact/"+absent, apptest.AdminToken, ""), http.StatusNotFound, "not on WhatsApp")
	wantREST(t, "a group", s.REST(t, "GET", "/session/"+sess.ID+"/contact/120363025246125888@g.us", apptest.AdminToken, ""), http.StatusBadRequest, "not a group")
}

// TestProfilePicture: a contact's picture is {id url} in GraphQL and REST,
// and with Accept: image/jpeg REST streams the JPEG the contact set; a
// contact without one, or hiding it by privacy, has none (null, 404).
func TestProfilePicture(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	const shown, hidden, bare = "4915550430001", "4915550430002", "4915550430003"
	for _, p := range []string{shown, hidden} {
		setProfile(t, s, p, map[string]any{"picture": base64.StdEncoding.EncodeToString(noisyJPEG(t, 48))})
	}
	net := s.Network(t)
	if err := net.SetPrivacy(hidden, types.PrivacySettingTypeProfile, types.PrivacySettingNone); err != nil {
		t.Fatal(err)
	}
	acct, _ := net.Account(shown)

	const q = `query($s: ID!, $c: String!) { profilePicture(sessionId: $s, chat: $c) { id url } }`
	var g struct{ ProfilePicture *struct{ ID, URL string } }
	s.MustGraphQL(t, apptest.AdminToken, q, map[string]any{"s": sess.ID, "c": shown}, &g)
	if g.ProfilePicture == nil || g.ProfilePicture.ID != acct.PictureID || !strings.HasPrefix(g.ProfilePicture.URL, "https://") {
		t.Errorf("GraphQL profilePicture: %+v, want id %s and WhatsApp's https URL", g.ProfilePicture, acct.PictureID)
	}
	res := s.REST(t, "GET", "/session/"+sess.ID+"/contact/"+shown+"/picture", apptest.AdminToken, "")
	var r struct{ Data struct{ ID, URL string } }
	res.JSON(t, &r)
	if res.Status != http.StatusOK || r.Data.ID != acct.PictureID || g.ProfilePicture == nil || r.Data.URL != g.ProfilePicture.URL {
		t.Errorf("REST profilePicture: %d %s", res.Status, res.Body)
	}
	jpeg := s.Do(t, "GET", "/api/v1/session/"+sess.ID+"/contact/"+shown+"/picture", apptest.AdminToken, "", map[string]string{"Accept": "image/jpeg"})
	sum := sha256.Sum256(jpeg.Body)
	if jpeg.Status != http.StatusOK || jpeg.Header.Get("Content-Type") != "image/jpeg" || hex.EncodeToString(sum[:]) != acct.PictureSHA256 {
		t.Errorf("REST picture as image/jpeg: %d %s, %d bytes of sha256 %x; want the contact's picture (sha256 %s)",
			jpeg.Status, jpeg.Header.Get("Content-Type"), len(jpeg.Body), sum, acct.PictureSHA256)
	}

	for _, none := range []string{hidden, bare} {
		var n struct{ ProfilePicture *struct{ ID string } }
		s.MustGraphQL(t, apptest.AdminToken, q, map[string]any{"s": sess.ID, "c": none}, &n)
		if n.ProfilePicture != nil {
			t.Errorf("profilePicture of %s: %+v, want null", none, n.ProfilePicture)
		}
		for _, accept := range []string{"application/json", "image/jpeg"} {
			r := s.Do(t, "GET", "/api/v1/session/"+sess.ID+"/contact/"+none+"/picture", apptest.AdminToken, "", map[string]string{"Accept": accept})
			wantREST(t, "the picture of "+none+" as "+accept, r, http.StatusNotFound, "no profile picture")
		}
	}
	wantBadInput(t, "a bad chat", s.GraphQL(t, apptest.AdminToken, q, map[string]any{"s": sess.ID, "c": "12ab"}), "chat", "phone number")

	// A group's picture too.
	var cg struct{ CreateGroup struct{ ID string } }
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!) { createGroup(sessionId: $s, input: {subject: "Pictured", participants: ["`+shown+`"]}) { id } }`,
		map[string]any{"s": sess.ID}, &cg)
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $i: String!, $src: String!) { updateDisplayPicture(sessionId: $s, identifier: $i, source: $src) }`,
		map[string]any{"s": sess.ID, "i": cg.CreateGroup.ID, "src": base64.StdEncoding.EncodeToString(noisyJPEG(t, 48))}, nil)
	gj, err := types.ParseJID(cg.CreateGroup.ID)
	if err != nil {
		t.Fatal(err)
	}
	group, _ := net.Group(gj)
	var gp struct{ ProfilePicture *struct{ ID, URL string } }
	s.MustGraphQL(t, apptest.AdminToken, q, map[string]any{"s": sess.ID, "c": cg.CreateGroup.ID}, &gp)
	gjpeg := s.Do(t, "GET", "/api/v1/session/"+sess.ID+"/contact/"+cg.CreateGroup.ID+"/picture", apptest.AdminToken, "", map[string]string{"Accept": "image/jpeg"})
	gsum := sha256.Sum256(gjpeg.Body)
	if gp.ProfilePicture == nil || gjpeg.Status != http.StatusOK || group.PictureSHA256 == "" || hex.EncodeToString(gsum[:]) != group.PictureSHA256 {
		t.Errorf("the group's picture: %+v; as image/jpeg %d, sha256 %x, want %s", gp.ProfilePicture, gjpeg.Status, gsum, group.PictureSHA256)
	}
}

// TestIdentities: a phone's LID is asked of WhatsApp and stored, so its
// LID then maps back to the phone; a LID learned from a message maps to
// its phone; a LID the session never learned has no phone (WhatsApp does
// not tell), and a number not on WhatsApp no LID. In the order given, with
// each input as given, through GraphQL and REST.
func TestIdentities(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	const looked, writer, stranger, absent = "4915550440001", "4915550440002", "4915550440003", "4915550440000"
	net := s.Network(t)
	if _, err := net.SendText(writer, apptest.LinkedPhone, "hi"); err != nil {
		t.Fatal(err)
	}
	testclient.Until(t, 10*time.Second, "the writer's message as an event", func() bool {
		return slices.ContainsFunc(eventData(t, s, sess.ID, "INBOUND_MESSAGE_UPSERT"), func(d map[string]any) bool { return d["senderPhone"] == writer })
	})
	for _, p := range []string{looked, stranger} { // accounts the session never heard of
		setProfile(t, s, p, map[string]any{"business": false})
	}
	lookedLID, writerLID, strangerLID := lidOf(t, s, looked), lidOf(t, s, writer), lidOf(t, s, stranger)

	const q = `query($s: ID!, $i: [String!]!) { identities(sessionId: $s, ids: $i) { input jid phone lid } }`
	show := func(ids []identity) []string {
		out := make([]string, len(ids))
		for i, id := range ids {
			out[i] = id.Input + " → " + id.JID + " " + str(id.Phone) + " " + str(id.LID)
		}
		return out
	}
	steps := []struct {
		name string
		ids  []string
		want []string
	}{
		{"a phone, asked of WhatsApp", []string{"+49 1555 0440001"}, []string{"+49 1555 0440001 → " + looked + "@s.whatsapp.net " + looked + " " + lookedLID}},
		{"its LID, from the store", []string{lookedLID}, []string{lookedLID + " → " + looked + "@s.whatsapp.net " + looked + " " + lookedLID}},
		{"every kind at once", []string{writerLID, strangerLID, absent, writer + "@s.whatsapp.net"}, []string{
			writerLID + " → " + writer + "@s.whatsapp.net " + writer + " " + writerLID,
			strangerLID + " → " + strangerLID + "  " + strangerLID,
			absent + " → " + absent + "@s.whatsapp.net " + absent + " ",
			writer + "@s.whatsapp.net → " + writer + "@s.whatsapp.net " + writer + " " + writerLID,
		}},
	}
	for _, st := range steps {
		var g struct{ Identities []identity }
		s.MustGraphQL(t, apptest.AdminToken, q, map[string]any{"s": sess.ID, "i": st.ids}, &g)
		if got := show(g.Identities); !slices.Equal(got, st.want) {
			t.Errorf("%s, GraphQL:\n got %q\nwant %q", st.name, got, st.want)
		}
		body := `{"ids":["` + strings.Join(st.ids, `","`) + `"]}`
		res := s.REST(t, "POST", "/session/"+sess.ID+"/contact/identity", apptest.AdminToken, body)
		var r struct{ Data []identity }
		res.JSON(t, &r)
		if got := show(r.Data); res.Status != http.StatusOK || !slices.Equal(got, st.want) {
			t.Errorf("%s, REST: %d\n got %q\nwant %q", st.name, res.Status, got, st.want)
		}
	}
	wantBadInput(t, "a group", s.GraphQL(t, apptest.AdminToken, q, map[string]any{"s": sess.ID, "i": []string{looked, "120363025246125888@g.us"}}), "ids[1]", "not a group")
	wantREST(t, "no ids", s.REST(t, "POST", "/session/"+sess.ID+"/contact/identity", apptest.AdminToken, `{"ids":[]}`), http.StatusBadRequest, "ids")
}

// TestBlocklist: block puts the contact on the account's block list as
// the network keeps it, blocklist lists it with its phone and LID, and a
// blocklist.update follows; unblock (REST) takes it off again. A number
// not on WhatsApp is refused as WhatsApp refuses it (422).
func TestBlocklist(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	const contact = "4915550450001"
	list := func() []string {
		var g struct{ Blocklist []identity }
		s.MustGraphQL(t, apptest.AdminToken, `query($s: ID!) { blocklist(sessionId: $s) { input jid phone lid } }`, map[string]any{"s": sess.ID}, &g)
		out := make([]string, len(g.Blocklist))
		for i, b := range g.Blocklist {
			out[i] = b.JID + " " + str(b.Phone) + " " + str(b.LID)
		}
		return out
	}
	network := func() []string {
		var sb struct{ SandboxAccount struct{ Blocklist []string } }
		s.MustGraphQL(t, apptest.AdminToken, `query($p: String!) { sandboxAccount(phone: $p) { blocklist } }`, map[string]any{"p": apptest.LinkedPhone}, &sb)
		return sb.SandboxAccount.Blocklist
	}
	updates := func(action string) int {
		n := 0
		for _, d := range eventData(t, s, sess.ID, "BLOCKLIST_UPDATE") {
			if d["phone"] == contact && d["action"] == action && d["jid"] == contact+"@s.whatsapp.net" && d["lid"] != nil {
				n++
			}
		}
		return n
	}

	var b struct{ Block bool }
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $n: String!) { block(sessionId: $s, number: $n) }`, map[string]any{"s": sess.ID, "n": contact}, &b)
	if got := network(); !slices.Equal(got, []string{contact}) {
		t.Errorf("the network's block list after block: %v", got)
	}
	if got, want := list(), []string{contact + "@s.whatsapp.net " + contact + " " + lidOf(t, s, contact)}; !slices.Equal(got, want) {
		t.Errorf("blocklist: %q, want %q", got, want)
	}
	testclient.Until(t, 10*time.Second, "blocklist.update (block)", func() bool { return updates("block") == 1 })

	res := s.REST(t, "GET", "/session/"+sess.ID+"/blocklist", apptest.AdminToken, "")
	var page struct {
		Data       []identity
		NextCursor *string
	}
	res.JSON(t, &page)
	if res.Status != http.StatusOK || len(page.Data) != 1 || str(page.Data[0].Phone) != contact || page.NextCursor != nil || !strings.Contains(string(res.Body), `"nextCursor":null`) {
		t.Errorf("REST blocklist: %d %s", res.Status, res.Body)
	}
	if r := s.REST(t, "DELETE", "/session/"+sess.ID+"/blocklist/"+contact, apptest.AdminToken, ""); r.Status != http.StatusOK {
		t.Fatalf("REST unblock: %d %s", r.Status, r.Body)
	}
	if got := network(); len(got) != 0 {
		t.Errorf("the network's block list after unblock: %v", got)
	}
	if got := list(); len(got) != 0 {
		t.Errorf("blocklist after unblock: %q", got)
	}
	testclient.Until(t, 10*time.Second, "blocklist.update (unblock)", func() bool { return updates("unblock") == 1 })

	wantREST(t, "block a number not on WhatsApp", s.REST(t, "PUT", "/session/"+sess.ID+"/blocklist/4915550450000", apptest.AdminToken, ""),
		http.StatusUnprocessableEntity, "not on WhatsApp")
}

// TestLookupsNeedConnection: every lookup of a session that is not
// connected is NOT_CONNECTED (409), and bad input is refused first.
func TestLookupsNeedConnection(t *testing.T) {
	t.Parallel()
	s := apptest.StartSandbox(t)
	id := s.CreateSession(t, "unlinked")
	tests := []struct{ method, path, body string }{
		{"POST", "/contact/check", `{"numbers":["491701234567"]}`},
		{"GET", "/contact/491701234567", ""},
		{"GET", "/contact/491701234567/picture", ""},
		{"POST", "/contact/identity", `{"ids":["491701234567"]}`},
		{"GET", "/blocklist", ""},
		{"PUT", "/blocklist/491701234567", ""},
		{"DELETE", "/blocklist/491701234567", ""},
	}
	for _, tt := range tests {
		r := s.REST(t, tt.method, "/session/"+id+tt.path, apptest.AdminToken, tt.body)
		wantREST(t, tt.method+" "+tt.path, r, http.StatusConflict, "not connected")
	}
	wantREST(t, "bad input first", s.REST(t, "POST", "/session/"+id+"/contact/check", apptest.AdminToken, `{"numbers":["12ab"]}`), http.StatusBadRequest, "numbers[0]")
	res := s.GraphQL(t, apptest.AdminToken, `query($s: ID!) { blocklist(sessionId: $s) { jid } }`, map[string]any{"s": id})
	if len(res.Errors) != 1 || res.Errors[0].Code() != "NOT_CONNECTED" {
		t.Errorf("GraphQL blocklist of an unlinked session: %+v, want NOT_CONNECTED", res.Errors)
	}
}

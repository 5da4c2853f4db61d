package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/media"
)

type sandboxAccount struct {
	Phone, PushName     string
	PictureSha256       *string
	DisappearingSeconds int
	Privacy             struct{ LastSeen, Online, ProfilePicture, Status, ReadReceipts, GroupsAdd, CallAdd string }
}

func accountView(t *testing.T, s *apptest.Server, phone string) sandboxAccount {
	t.Helper()
	var out struct{ SandboxAccount *sandboxAccount }
	s.MustGraphQL(t, apptest.AdminToken, `query($p: String!) { sandboxAccount(phone: $p) { phone pushName pictureSha256 disappearingSeconds
		privacy { lastSeen online profilePicture status readReceipts groupsAdd callAdd } } }`, map[string]any{"p": phone}, &out)
	if out.SandboxAccount == nil {
		t.Fatalf("the network has no account %s", phone)
	}
	return *out.SandboxAccount
}

// TestAccount: display pictures (own and group), profile name, privacy
// read and the four privacy updates, through REST and GraphQL, each checked
// in the network's view of the account.
func TestAccount(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	const phone, member = apptest.LinkedPhone, "4915550004002"
	base := "/session/" + sess.ID

	wide := pngImage(t, 300, 200)
	square, err := media.NewPreparer("", nil).SquareJPEG(t.Context(), wide)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("own display picture", func(t *testing.T) {
		res := s.REST(t, "PUT", base+"/display-picture", apptest.AdminToken, `{"identifier":"`+phone+`","source":"`+b64(wide)+`"}`)
		if res.Status != http.StatusOK {
			t.Fatalf("display-picture: %d %s", res.Status, res.Body)
		}
		if a := accountView(t, s, phone); str(a.PictureSha256) != sha(square) {
			t.Errorf("network picture %s, want the square JPEG %s", str(a.PictureSha256), sha(square))
		}
	})
	t.Run("group display picture by GraphQL", func(t *testing.T) {
		var g struct{ CreateGroup struct{ ID string } }
		s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!) { createGroup(sessionId: $s, input: {subject: "Pics", participants: ["`+member+`"]}) { id } }`,
			map[string]any{"s": sess.ID}, &g)
		s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $i: String!, $src: String!) { updateDisplayPicture(sessionId: $s, identifier: $i, source: $src) }`,
			map[string]any{"s": sess.ID, "i": g.CreateGroup.ID, "src": b64(wide)}, nil)
		if v := groupView(t, s, g.CreateGroup.ID); str(v.PictureSha256) != sha(square) {
			t.Errorf("group picture %s, want %s", str(v.PictureSha256), sha(square))
		}
	})
	t.Run("a non-image picture is 415", func(t *testing.T) {
		res := s.REST(t, "PUT", base+"/display-picture", apptest.AdminToken, `{"identifier":"`+phone+`","source":"`+b64([]byte("just some text, not an image"))+`"}`)
		if res.Status != http.StatusUnsupportedMediaType || !strings.Contains(res.Message(t), "text/plain") {
			t.Errorf("got %d %s", res.Status, res.Body)
		}
	})
	t.Run("profile name", func(t *testing.T) {
		res := s.REST(t, "PUT", base+"/update-profile-name", apptest.AdminToken, `{"name":"Acme Support"}`)
		if res.Status != http.StatusOK {
			t.Fatalf("update-profile-name: %d %s", res.Status, res.Body)
		}
		if a := accountView(t, s, phone); a.PushName != "Acme Support" {
			t.Errorf("network push name %q", a.PushName)
		}
		s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!) { updateProfileName(sessionId: $s, name: "Acme Sales") }`, map[string]any{"s": sess.ID}, nil)
		if a := accountView(t, s, phone); a.PushName != "Acme Sales" {
			t.Errorf("network push name %q", a.PushName)
		}
		s.WaitStatus(t, sess.ID, "CONNECTED", func(m map[string]any) bool { return m["pushName"] == "Acme Sales" })
	})
	t.Run("privacy", func(t *testing.T) {
		for _, tc := range []struct{ path, body string }{
			{"/privacy/read-receipts", `{"privacy":"none"}`},
			{"/privacy/groups-add", `{"privacy":"contacts"}`},
			{"/privacy/status", `{"privacy":"contact_blacklist"}`},
			{"/privacy/default-disappearing-mode", `{"mode":"ONE_WEEK"}`},
		} {
			if res := s.REST(t, "PUT", base+tc.path, apptest.AdminToken, tc.body); res.Status != http.StatusOK || string(res.Body) != `{"status":"success","data":{}}`+"\n" {
				t.Fatalf("PUT %s: %d %s", tc.path, res.Status, res.Body)
			}
		}
		a := accountView(t, s, phone)
		if a.Privacy.ReadReceipts != "none" || a.Privacy.GroupsAdd != "contacts" || a.Privacy.Status != "contact_blacklist" || a.DisappearingSeconds != 7*24*3600 {
			t.Errorf("network holds %+v", a)
		}
		res := s.REST(t, "GET", base+"/privacy", apptest.AdminToken, "")
		var got map[string]string
		res.JSON(t, &got)
		if res.Status != http.StatusOK || got["readReceipts"] != "none" || got["groupsAdd"] != "contacts" || got["status"] != "contact_blacklist" || got["lastSeen"] == "" {
			t.Errorf("GET privacy: %d %s", res.Status, res.Body)
		}
		var out struct{ SetDefaultDisappearingMode, SetReadReceiptsPrivacy struct{ ReadReceipts string } }
		s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!) { setDefaultDisappearingMode(sessionId: $s, mode: "THREE_MONTHS") { readReceipts } setReadReceiptsPrivacy(sessionId: $s, privacy: "all") { readReceipts } }`,
			map[string]any{"s": sess.ID}, &out)
		if out.SetReadReceiptsPrivacy.ReadReceipts != "all" {
			t.Errorf("setReadReceiptsPrivacy answered %+v", out)
		}
		if a := accountView(t, s, phone); a.DisappearingSeconds != 90*24*3600 || a.Privacy.ReadReceipts != "all" {
			t.Errorf("network holds %+v", a)
		}
		s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!) { setGroupsAddPrivacy(sessionId: $s, privacy: "none") { groupsAdd } setStatusPrivacy(sessionId: $s, privacy: "all") { status } }`,
			map[string]any{"s": sess.ID}, nil)
		if a := accountView(t, s, phone); a.Privacy.GroupsAdd != "none" || a.Privacy.Status != "all" {
			t.Errorf("network holds %+v", a)
		}
		res = s.REST(t, "PUT", base+"/privacy/groups-add", apptest.AdminToken, `{"privacy":"everyone"}`)
		if res.Status != http.StatusBadRequest || !strings.Contains(res.Message(t), "all, contacts, contact_blacklist, none") {
			t.Errorf("bad value: %d %s", res.Status, res.Body)
		}
	})
}

package webui_test

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"go.mau.fi/whatsmeow/types"

	"github.com/wagraph/wagraph/internal/apptest"
)

// TestGroupsInABrowser walks the groups page (issue 34) in Chromium against
// a sandbox server whose session is linked, checking the network's view of
// the group after each step: the page, reached by the Groups link under the
// session's name, lists the session's groups with their participants and
// roles; a number typed in is added; a participant is promoted, demoted and
// removed; the invite link is shown, copied and reset (the old one revoked);
// an add the person's privacy refuses is said as refused, with WhatsApp's
// reason, and the invite link sent instead; in a group where the session is
// a plain member a promote is refused per participant ("not an admin") and
// the invite link too, the group unchanged; the account removing itself
// takes the group off the page, which says so. The browser reports no console
// error, exception or request to another origin, and the page stays inside
// a desktop's and a phone's width.
func TestGroupsInABrowser(t *testing.T) {
	inABrowser(t)
	t.Parallel()
	const (
		alice   = "4915550034501"
		bob     = "4915550034502"
		carol   = "4915550034503" // added from the page
		private = "4915550034504" // lets only contacts add them
		host    = "4915550034505" // the admin of the group the session is a member of
		member  = "4915550034506"
	)
	srv, sess := apptest.StartLinked(t)
	phones := srv.Network(t)
	if err := phones.SetPrivacy(private, types.PrivacySettingTypeGroupAdd, types.PrivacySettingContacts); err != nil {
		t.Fatal(err)
	}
	var created struct{ CreateGroup struct{ ID string } }
	srv.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!) { createGroup(sessionId: $s, input: {subject: "Chorprobe", participants: ["`+alice+`", "`+bob+`"]}) { id } }`,
		map[string]any{"s": sess.ID}, &created)
	mine := created.CreateGroup.ID
	theirs, err := phones.CreateGroup(host, "Nachbarschaft", apptest.LinkedPhone, member)
	if err != nil {
		t.Fatal(err)
	}

	b := newBrowser(t, srv.URL, 3*time.Minute, nil)
	signIn(t, b)
	card := func(jid string) string { return fmt.Sprintf(`section.group[data-jid=%q]`, jid) }
	row := func(jid, phone string) string {
		return fmt.Sprintf(`%s tr.participant[data-phone=%q]`, card(jid), phone)
	}
	outcome := func(jid, participant, ok string) string {
		return fmt.Sprintf(`%s li.outcome[data-participant=%q][data-ok=%q]`, card(jid), participant, ok)
	}

	// The list, reached from the sessions page.
	b.run(t, "opening the groups page",
		chromedp.Click(fmt.Sprintf(`#session-rows tr[data-session-id=%q] a[data-action="groups"]`, sess.ID), chromedp.ByQuery),
		chromedp.WaitVisible(row(mine, bob), chromedp.ByQuery),
		chromedp.WaitVisible(row(theirs.String(), member), chromedp.ByQuery),
	)
	if got, want := pageRoles(t, b, card(mine)), (map[string]string{apptest.LinkedPhone: "superadmin", alice: "member", bob: "member"}); !maps.Equal(got, want) {
		t.Errorf("the page lists %s's participants %v, want %v", mine, got, want)
	}
	if got, want := pageRoles(t, b, card(theirs.String())), (map[string]string{host: "superadmin", apptest.LinkedPhone: "member", member: "member"}); !maps.Equal(got, want) {
		t.Errorf("the page lists %s's participants %v, want %v", theirs, got, want)
	}

	// Add, promote, demote, remove: each answered beside the group, and
	// done on the network.
	b.run(t, "adding a number",
		chromedp.SendKeys(card(mine)+" input.add-number", carol, chromedp.ByQuery),
		chromedp.Click(card(mine)+" button.add-submit", chromedp.ByQuery),
		waitText(outcome(mine, carol, "true"), "Add +"+carol+": added."),
		chromedp.WaitVisible(row(mine, carol)+`[data-role="member"]`, chromedp.ByQuery),
	)
	assertNetworkRoles(t, srv, mine, map[string]string{apptest.LinkedPhone: "superadmin", alice: "member", bob: "member", carol: "member"})
	b.run(t, "promoting",
		chromedp.Click(row(mine, carol)+` button[data-action="promote"]`, chromedp.ByQuery),
		chromedp.WaitVisible(row(mine, carol)+`[data-role="admin"]`, chromedp.ByQuery),
		waitText(outcome(mine, carol, "true"), "Promote +"+carol+": now an admin."),
	)
	assertNetworkRoles(t, srv, mine, map[string]string{apptest.LinkedPhone: "superadmin", alice: "member", bob: "member", carol: "admin"})
	b.run(t, "demoting",
		chromedp.Click(row(mine, carol)+` button[data-action="demote"]`, chromedp.ByQuery),
		chromedp.WaitVisible(row(mine, carol)+`[data-role="member"]`, chromedp.ByQuery),
		waitText(outcome(mine, carol, "true"), "Demote +"+carol+": no longer an admin."),
	)
	assertNetworkRoles(t, srv, mine, map[string]string{apptest.LinkedPhone: "superadmin", alice: "member", bob: "member", carol: "member"})
	remove := row(mine, bob) + ` button[data-action="remove"]`
	b.run(t, "removing (a second click confirms)",
		chromedp.Click(remove, chromedp.ByQuery),
		chromedp.WaitVisible(remove+`.armed`, chromedp.ByQuery),
		chromedp.Click(remove, chromedp.ByQuery),
		waitText(outcome(mine, bob, "true"), "Remove +"+bob+": removed."),
		chromedp.WaitNotPresent(row(mine, bob), chromedp.ByQuery),
	)
	assertNetworkRoles(t, srv, mine, map[string]string{apptest.LinkedPhone: "superadmin", alice: "member", carol: "member"})

	// The invite link: shown, copied (selected at least), reset.
	var shown, selected string
	b.run(t, "showing the invite link",
		chromedp.Click(card(mine)+" button.invite-show", chromedp.ByQuery),
		chromedp.WaitVisible(card(mine)+" input.invite-link", chromedp.ByQuery),
		chromedp.Value(card(mine)+" input.invite-link", &shown, chromedp.ByQuery),
		chromedp.Click(card(mine)+" button.invite-copy", chromedp.ByQuery),
		chromedp.Evaluate(`window.getSelection().toString() || (() => { const e = document.activeElement; return e && e.value ? e.value.slice(e.selectionStart, e.selectionEnd) : ""; })()`, &selected),
	)
	old := sandboxInviteCode(t, srv, mine)
	if shown != "https://chat.whatsapp.com/"+old {
		t.Errorf("the page shows the invite link %q; the network's code is %q", shown, old)
	}
	if selected != shown {
		t.Errorf("Copy left %q selected, want the link %q", selected, shown)
	}
	reset := card(mine) + ` button[data-action="reset the link"]`
	b.run(t, "resetting the invite link",
		chromedp.Click(reset, chromedp.ByQuery),
		chromedp.WaitVisible(reset+`.armed`, chromedp.ByQuery),
		chromedp.Click(reset, chromedp.ByQuery),
		chromedp.Poll(fmt.Sprintf(`document.querySelector(%s).value !== %s`, quote(card(mine)+" input.invite-link"), quote(shown)), nil),
		chromedp.Value(card(mine)+" input.invite-link", &shown, chromedp.ByQuery),
	)
	if now := sandboxInviteCode(t, srv, mine); now == old || shown != "https://chat.whatsapp.com/"+now {
		t.Errorf("after the reset the page shows %q; the network's code is %q (was %q)", shown, now, old)
	}

	// An add privacy refuses: WhatsApp's reason, and the invite to send.
	b.run(t, "adding a number whose privacy refuses",
		chromedp.SendKeys(card(mine)+" input.add-number", private, chromedp.ByQuery),
		chromedp.Click(card(mine)+" button.add-submit", chromedp.ByQuery),
		chromedp.WaitVisible(outcome(mine, private, "false")+` button.send-invite`, chromedp.ByQuery),
	)
	var refusal, code string
	b.run(t, "reading the refusal",
		chromedp.Text(outcome(mine, private, "false"), &refusal, chromedp.ByQuery),
		chromedp.AttributeValue(outcome(mine, private, "false"), "data-code", &code, nil, chromedp.ByQuery),
	)
	if !strings.Contains(refusal, "refused") || !strings.Contains(refusal, "privacy") || code != "403" {
		t.Errorf("the refused add reads %q (code %s), want WhatsApp's privacy refusal, 403", refusal, code)
	}
	assertNetworkRoles(t, srv, mine, map[string]string{apptest.LinkedPhone: "superadmin", alice: "member", carol: "member"})

	// Where the session is a plain member: refused per participant.
	b.run(t, "promoting in a group the session does not administer",
		chromedp.WaitVisible(card(theirs.String())+`[data-admin="false"]`, chromedp.ByQuery),
		chromedp.Click(row(theirs.String(), member)+` button[data-action="promote"]`, chromedp.ByQuery),
		chromedp.WaitVisible(outcome(theirs.String(), member, "false"), chromedp.ByQuery),
		chromedp.Text(outcome(theirs.String(), member, "false"), &refusal, chromedp.ByQuery),
		chromedp.AttributeValue(outcome(theirs.String(), member, "false"), "data-code", &code, nil, chromedp.ByQuery),
	)
	if !strings.Contains(refusal, "not an admin") || code != "403" {
		t.Errorf("a non-admin's promote reads %q (code %s), want WhatsApp's refusal: not an admin, 403", refusal, code)
	}
	var inviteError string
	b.run(t, "asking for the invite link of a group the session does not administer",
		chromedp.Click(card(theirs.String())+" button.invite-show", chromedp.ByQuery),
		chromedp.WaitVisible(card(theirs.String())+" .invite-error", chromedp.ByQuery),
		chromedp.Text(card(theirs.String())+" .invite-error", &inviteError, chromedp.ByQuery),
	)
	if !strings.Contains(inviteError, "not an admin") {
		t.Errorf("a non-admin's invite link reads %q, want WhatsApp's refusal", inviteError)
	}
	assertNetworkRoles(t, srv, theirs.String(), map[string]string{host: "superadmin", apptest.LinkedPhone: "member", member: "member"})
	var shot []byte
	b.run(t, "capturing the groups page",
		chromedp.Evaluate(`document.getElementById("notices").replaceChildren()`, nil), // the passing notices would cover the page
		chromedp.FullScreenshot(&shot, 100),
	)
	for _, v := range viewports {
		b.run(t, "the groups page at "+v.name+" width", v.emulate(), chromedp.WaitVisible(card(theirs.String()), chromedp.ByQuery))
		assertInside(t, b, v, "the groups page")
	}

	// The invite offered for the refused add reaches the person.
	b.run(t, "sending the invite link instead",
		chromedp.Click(outcome(mine, private, "false")+` button.send-invite`, chromedp.ByQuery),
		chromedp.WaitNotPresent(outcome(mine, private, "false")+` button.send-invite`, chromedp.ByQuery),
	)
	link := "https://chat.whatsapp.com/" + sandboxInviteCode(t, srv, mine)
	waitInbox(t, func() bool {
		for _, m := range phones.Inbox(private) {
			if strings.Contains(m.Message.GetConversation()+m.Message.GetExtendedTextMessage().GetText(), link) {
				return true
			}
		}
		return false
	}, "invite link on the refused person's phone")

	// The account removing itself: the group leaves the page, saying so.
	self := row(mine, apptest.LinkedPhone) + ` button[data-action="remove"]`
	b.run(t, "removing the session's own account",
		chromedp.Click(self, chromedp.ByQuery),
		chromedp.WaitVisible(self+`.armed`, chromedp.ByQuery),
		chromedp.Click(self, chromedp.ByQuery),
		chromedp.WaitNotPresent(card(mine), chromedp.ByQuery),
		chromedp.Poll(`[...document.querySelectorAll("#notices .notice")].some(n => n.textContent === "Chorprobe: this session's account is no longer in the group.")`, nil),
	)
	var errs []string
	b.run(t, "reading the error notices", chromedp.Evaluate(`[...document.querySelectorAll("#notices .notice.error")].map(n => n.textContent)`, &errs))
	if len(errs) != 0 {
		t.Errorf("the page showed errors after the account removed itself: %q", errs)
	}
	assertNetworkRoles(t, srv, mine, map[string]string{alice: "admin", carol: "member"}) // the network made the longest-standing member an admin

	b.report(t)
	writeShots(t, map[string][]byte{"groups.png": shot})
}

// waitText waits for the element of selector to read text.
func waitText(selector, text string) chromedp.Action {
	return chromedp.Poll(fmt.Sprintf(`(() => { const e = document.querySelector(%s); return e !== null && e.textContent === %s; })()`, quote(selector), quote(text)), nil)
}

// pageRoles reads the participants a group's card lists: number → role.
func pageRoles(t *testing.T, b *browser, card string) map[string]string {
	t.Helper()
	var pairs [][]string
	b.run(t, "reading the participants",
		chromedp.Evaluate(fmt.Sprintf(`[...document.querySelectorAll(%s)].map(r => [r.dataset.phone, r.dataset.role])`, quote(card+" tr.participant")), &pairs))
	out := map[string]string{}
	for _, p := range pairs {
		out[p[0]] = p[1]
	}
	return out
}

// sandboxGroupView is the network's view of a group (sandboxGroup).
type sandboxGroupView struct {
	InviteCode   string
	Participants []struct{ Phone, Role string }
}

func sandboxGroup(t *testing.T, srv *apptest.Server, jid string) sandboxGroupView {
	t.Helper()
	var out struct{ SandboxGroup *sandboxGroupView }
	srv.MustGraphQL(t, apptest.AdminToken, `query($j: ID!) { sandboxGroup(jid: $j) { inviteCode participants { phone role } } }`, map[string]any{"j": jid}, &out)
	if out.SandboxGroup == nil {
		t.Fatalf("the network has no group %s", jid)
	}
	return *out.SandboxGroup
}

func sandboxInviteCode(t *testing.T, srv *apptest.Server, jid string) string {
	t.Helper()
	return sandboxGroup(t, srv, jid).InviteCode
}

// assertNetworkRoles checks the network's members of group jid and their roles.
func assertNetworkRoles(t *testing.T, srv *apptest.Server, jid string, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	for _, p := range sandboxGroup(t, srv, jid).Participants {
		got[p.Phone] = p.Role
	}
	if !maps.Equal(got, want) {
		t.Errorf("the network's group %s: %v, want %v", jid, got, want)
	}
}

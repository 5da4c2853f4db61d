package wafake

import (
	"crypto/rand"
	"slices"
	"strconv"
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"
)

// Trusted-contact privacy tokens. After a direct message whatsmeow issues
// the recipient a token (issuePrivacyToken, tctoken.go): <iq xmlns=privacy
// type=set><tokens><token jid t type="trusted_contact"/></tokens></iq>. The
// server keeps it and hands the recipient's devices the token in a
// privacy_token notification; they then attach it (<tctoken>) to what they
// send the issuer, which shows they are a contact.

// tokenTrustedContact is the only token type whatsmeow issues or accepts.
const tokenTrustedContact = "trusted_contact"

// handlePrivacyTokens takes the tokens a client issues: each names an
// account (by LID or phone JID) and the time of issue.
func (n *Network) handlePrivacyTokens(c *conn, tokens waBinary.Node) ([]waBinary.Node, *iqError) {
	type grant struct {
		to   *account
		jid  types.JID
		when time.Time
	}
	var grants []grant
	n.mu.Lock()
	for _, tok := range tokens.GetChildrenByTag("token") {
		ag := tok.AttrGetter()
		jid, isJID := tok.Attrs["jid"].(types.JID)
		sec, err := strconv.ParseInt(ag.OptionalString("t"), 10, 64)
		phone, ok := n.phoneOfLocked(jid)
		if !isJID || err != nil || !ok || ag.OptionalString("type") != tokenTrustedContact {
			n.mu.Unlock()
			return nil, &iqError{400, "bad-request"}
		}
		grants = append(grants, grant{to: n.accounts[phone], jid: jid.ToNonAD(), when: time.Unix(sec, 0)})
	}
	if len(grants) == 0 {
		n.mu.Unlock()
		return nil, &iqError{400, "bad-request"}
	}
	issuer := c.dev.acct
	if issuer.state.trusted == nil {
		issuer.state.trusted = map[string]time.Time{}
	}
	type delivery struct {
		to   []*companion
		node waBinary.Node
	}
	var out []delivery
	for _, g := range grants {
		if g.to == nil || g.to == issuer {
			continue
		}
		issuer.state.trusted[g.to.phone] = g.when
		token := make([]byte, 24)
		_, _ = rand.Read(token)
		out = append(out, delivery{to: linkedLocked(g.to, nil), node: waBinary.Node{Tag: "tokens", Content: []waBinary.Node{{
			Tag:     "token",
			Attrs:   waBinary.Attrs{"jid": g.jid, "t": strconv.FormatInt(g.when.Unix(), 10), "type": tokenTrustedContact},
			Content: token,
		}}}})
	}
	n.mu.Unlock()
	for _, d := range out {
		// sender_lid names the issuer by LID, under which whatsmeow keeps
		// the token (handlePrivacyTokenNotification, notification.go).
		id := n.nextID()
		node := waBinary.Node{Tag: "notification", Attrs: waBinary.Attrs{
			"id": id, "from": issuer.jid(), "sender_lid": types.NewJID(issuer.lid, types.HiddenUserServer),
			"type": "privacy_token", "t": strconv.FormatInt(time.Now().Unix(), 10),
		}, Content: []waBinary.Node{d.node}}
		for _, comp := range d.to {
			n.queue(comp, id, node)
		}
	}
	return nil, nil
}

// TrustedContacts lists the accounts the linked devices of phone issued a
// trusted-contact token to, sorted.
func (n *Network) TrustedContacts(phone string) []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	a := n.accounts[phone]
	if a == nil {
		return nil
	}
	var out []string
	for p := range a.state.trusted {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

package wafake

import (
	"slices"

	"go.mau.fi/whatsmeow/appstate"
	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waVnameCert"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"
)

// What an account tells others about itself: its push name and verified
// business name ride on its messages (the notify attribute and a
// <verified_name> certificate), its "about" text is announced by a status
// notification. And its block list replaced wholesale.

// senderIdentityLocked is what a message from a carries about its sender:
// the push name (the one set through app state, else "Contact <phone>") and,
// for a business, the verified name certificate. n.mu must be held.
func (n *Network) senderIdentityLocked(a *account) (string, []waBinary.Node) {
	notify := "Contact " + a.phone
	if a.pushName != "" {
		notify = a.pushName
	}
	if a.state.businessName == "" {
		return notify, nil
	}
	return notify, []waBinary.Node{verifiedNameNode(a.state.businessName)}
}

// verifiedNameNode is the <verified_name> certificate of a business named
// name. whatsmeow reads the name from the certificate's details and does
// not check WhatsApp's signature on it.
func verifiedNameNode(name string) waBinary.Node {
	details, _ := proto.Marshal(&waVnameCert.VerifiedNameCertificate_Details{
		Serial: proto.Uint64(1), Issuer: proto.String("smb:wa"), VerifiedName: proto.String(name),
	})
	cert, _ := proto.Marshal(&waVnameCert.VerifiedNameCertificate{Details: details, Signature: make([]byte, 64)})
	return waBinary.Node{Tag: "verified_name", Attrs: waBinary.Attrs{"v": "1", "verified_level": "unknown"}, Content: cert}
}

// profileNodesLocked is what a user query answers of a besides its
// devices and LID, as WhatsApp's usync does: the verified name of a
// business (<business>), the about text (<status>) and the id of its
// profile picture (<picture>), which the account's picture privacy hides
// from others as it hides the picture itself (profilepic.go). c is the
// asking connection. n.mu must be held.
func (n *Network) profileNodesLocked(c *conn, a *account, business, status, picture bool) []waBinary.Node {
	var out []waBinary.Node
	if business {
		b := waBinary.Node{Tag: "business"}
		if a.state.businessName != "" {
			b.Content = []waBinary.Node{verifiedNameNode(a.state.businessName)}
		}
		out = append(out, b)
	}
	if status {
		out = append(out, waBinary.Node{Tag: "status", Content: []byte(a.state.about)})
	}
	if picture {
		p := waBinary.Node{Tag: "picture"}
		own := c.dev != nil && c.dev.acct == a
		hidden := !own && a.state.privacyOf(types.PrivacySettingTypeProfile) == types.PrivacySettingNone
		if a.state.pictureID != "" && !hidden {
			p.Attrs = waBinary.Attrs{"id": a.state.pictureID}
		}
		out = append(out, p)
	}
	return out
}

// SetPushName is the phone of account phone changing its profile name: an
// app state setting its linked devices fetch, and the name its messages
// carry from now on.
func (n *Network) SetPushName(phone, name string) error {
	return n.writeAppStateWith(phone, appstate.BuildSettingPushName(name), func(a *account) { a.pushName = name })
}

// SetBusinessName makes account phone a business with the verified name
// name ("" makes it a plain account again): its messages carry it.
func (n *Network) SetBusinessName(phone, name string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	a, err := n.accountLocked(phone)
	if err != nil {
		return err
	}
	a.state.businessName = name
	return nil
}

// SetAbout is the phone of account phone changing its "about" text; the
// linked devices of every account that has not blocked it are told.
func (n *Network) SetAbout(phone, text string) error {
	if len([]rune(text)) > MaxAbout {
		return &ValueError{What: "an about text", Value: text}
	}
	n.mu.Lock()
	a, err := n.accountLocked(phone)
	if err == nil {
		a.state.about = text
	}
	n.mu.Unlock()
	if err != nil {
		return err
	}
	n.announceAbout(a, text)
	return nil
}

// announceAbout tells the linked devices of the accounts that have not
// blocked a its new about text (events.UserAbout); the simulated world is
// one address book.
func (n *Network) announceAbout(a *account, text string) {
	n.mu.Lock()
	var to []*companion
	for _, o := range n.accounts {
		if o != a && !slices.Contains(o.state.blocked, a.jid()) {
			to = append(to, linkedLocked(o, nil)...)
		}
	}
	n.mu.Unlock()
	n.notify(to, a.jid(), "status", []waBinary.Node{{Tag: "set", Content: []byte(text)}})
}

// SetBlocklist is the phone of account phone replacing its whole block list
// (phone numbers). Its linked devices are told only that the list changed
// (action modify, no items), as WhatsApp does for a change of many, and
// fetch it again.
func (n *Network) SetBlocklist(phone string, blocked []string) error {
	var list []types.JID
	for _, b := range blocked {
		if err := ValidPhone(b); err != nil {
			return err
		}
		if j := pnJID(b); !slices.Contains(list, j) {
			list = append(list, j)
		}
	}
	n.mu.Lock()
	a, err := n.accountLocked(phone)
	if err != nil {
		n.mu.Unlock()
		return err
	}
	prev := blocklistHash(a.state.blocked)
	a.state.blocked = list
	dhash := blocklistHash(list)
	to := linkedLocked(a, nil)
	n.mu.Unlock()
	n.notify(to, a.jid(), "account_sync", []waBinary.Node{{
		Tag: "blocklist", Attrs: waBinary.Attrs{"action": "modify", "dhash": dhash, "prev_dhash": prev},
	}})
	return nil
}

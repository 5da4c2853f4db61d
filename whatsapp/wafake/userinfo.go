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
	// whatsmeow reads the name from the certificate's details and does not
	// check WhatsApp's signature on it.
	details, _ := proto.Marshal(&waVnameCert.VerifiedNameCertificate_Details{
		Serial: proto.Uint64(1), Issuer: proto.String("smb:wa"), VerifiedName: proto.String(a.state.businessName),
	})
	cert, _ := proto.Marshal(&waVnameCert.VerifiedNameCertificate{Details: details, Signature: make([]byte, 64)})
	return notify, []waBinary.Node{{Tag: "verified_name", Attrs: waBinary.Attrs{"v": "1", "verified_level": "unknown"}, Content: cert}}
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
	if len([]rune(text)) > maxAbout {
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

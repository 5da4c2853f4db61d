package wafake

import (
	"encoding/binary"
	"fmt"
	"strings"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"
)

// handleUsync answers user queries: device lists (every valid number is an
// account with a phone; the asking device is left out of its own list) and
// "is on WhatsApp" contact lookups. A user asked for by LID is answered by
// LID, as WhatsApp does: whatsmeow caches a device list under the JID the
// answer names and, since "send: always use LID for DMs", asks for the
// devices of LIDs (SendMessage, send.go).
func (n *Network) handleUsync(c *conn, node *waBinary.Node) ([]waBinary.Node, *iqError) {
	us, ok := node.GetOptionalChildByTag("usync")
	if !ok {
		return nil, &iqError{400, "bad-request"}
	}
	query := us.GetChildByTag("query")
	_, wantDevices := query.GetOptionalChildByTag("devices")
	contactQuery, wantContact := query.GetOptionalChildByTag("contact")
	_, wantLID := query.GetOptionalChildByTag("lid")
	// What GetUserInfo and IsOnWhatsApp ask besides: the verified name of
	// a business, the about text and the picture id (userinfo.go).
	_, wantBusiness := query.GetOptionalChildByTag("business")
	_, wantStatus := query.GetOptionalChildByTag("status")
	_, wantPicture := query.GetOptionalChildByTag("picture")
	// IsOnWhatsApp asks for contacts in LID addressing mode (user.go): the
	// answer names a registered user by LID, with its number as pn_jid.
	lidMode := contactQuery.AttrGetter().OptionalString("addressing_mode") == "lid"
	var users []waBinary.Node
	list := us.GetChildByTag("list")
	for _, u := range list.GetChildren() {
		jid, hasJID := u.Attrs["jid"].(types.JID)
		queried := ""
		if cn, ok := u.GetOptionalChildByTag("contact"); ok {
			queried = contentString(cn.Content)
			jid = types.NewJID(strings.TrimPrefix(strings.TrimSuffix(queried, "@"+types.LegacyUserServer), "+"), types.DefaultUserServer)
			hasJID = true
		}
		if !hasJID {
			continue
		}
		asked := jid.ToNonAD()
		n.mu.Lock()
		var acct *account
		var err error
		if jid.Server == types.HiddenUserServer {
			// A LID no account has is no user: its digits are not a
			// number to make an account of.
			if acct = n.accountOfLIDLocked(jid.User); acct == nil {
				err = fmt.Errorf("wafake: no account has LID %s", jid.User)
			} else {
				jid = acct.jid()
			}
		} else {
			acct, err = n.accountLocked(jid.User)
		}
		var devs []types.JID
		var lid string
		var profile []waBinary.Node
		if err == nil {
			devs, lid = acct.deviceJIDs(), acct.lid
			profile = n.profileNodesLocked(c, acct, wantBusiness, wantStatus, wantPicture)
		}
		n.mu.Unlock()
		var children []waBinary.Node
		if wantDevices {
			var devNodes []waBinary.Node
			for _, d := range devs {
				if c.dev != nil && c.dev.acct == acct && d.Device == c.dev.device {
					continue
				}
				devNodes = append(devNodes, waBinary.Node{Tag: "device", Attrs: waBinary.Attrs{"id": int(d.Device)}})
			}
			children = append(children, waBinary.Node{Tag: "devices", Content: []waBinary.Node{{Tag: "device-list", Content: devNodes}}})
		}
		attrs := waBinary.Attrs{"jid": asked}
		if wantContact {
			typ := "out"
			if err == nil {
				typ = "in"
			}
			children = append(children, waBinary.Node{Tag: "contact", Attrs: waBinary.Attrs{"type": typ}, Content: []byte(queried)})
			if lidMode && lid != "" {
				attrs = waBinary.Attrs{"jid": types.NewJID(lid, types.HiddenUserServer), "pn_jid": jid.ToNonAD()}
			}
		}
		if wantLID && lid != "" {
			children = append(children, waBinary.Node{Tag: "lid", Attrs: waBinary.Attrs{"val": types.NewJID(lid, types.HiddenUserServer)}})
		}
		children = append(children, profile...)
		users = append(users, waBinary.Node{Tag: "user", Attrs: attrs, Content: children})
	}
	return []waBinary.Node{{Tag: "usync", Content: []waBinary.Node{{Tag: "list", Content: users}}}}, nil
}

// handleKeyFetch answers a prekey bundle request for devices: a phone mints a
// one-time prekey, a linked device gives one it uploaded.
func (n *Network) handleKeyFetch(key waBinary.Node) []waBinary.Node {
	var users []waBinary.Node
	for _, u := range key.GetChildren() {
		jid, ok := u.Attrs["jid"].(types.JID)
		if !ok {
			continue
		}
		if jid.Server == types.HiddenUserServer {
			jid = n.pnOfLID(jid)
		}
		users = append(users, n.bundleNode(jid, u.Attrs["jid"].(types.JID)))
	}
	return []waBinary.Node{{Tag: "list", Content: users}}
}

func (n *Network) bundleNode(jid, asked types.JID) waBinary.Node {
	notFound := waBinary.Node{Tag: "user", Attrs: waBinary.Attrs{"jid": asked}, Content: []waBinary.Node{
		{Tag: "error", Attrs: waBinary.Attrs{"code": "404", "text": "item-not-found"}},
	}}
	n.mu.Lock()
	acct := n.accounts[jid.User]
	n.mu.Unlock()
	if acct == nil {
		return notFound
	}
	if jid.Device == 0 {
		s := acct.phoneDev
		pk := s.mintPreKey()
		return keyBundleNode(asked, s.regID, *s.identity.Pub,
			&keyNode{id: pk.KeyID, pub: *pk.Pub},
			keyNode{id: s.signed.KeyID, pub: *s.signed.Pub, sig: s.signed.Signature})
	}
	n.mu.Lock()
	comp := acct.devices[jid.Device]
	n.mu.Unlock()
	if comp == nil {
		return notFound
	}
	b, _ := n.companionBundle(comp)
	var one *keyNode
	if b.PreKeyID() != nil && !b.PreKeyID().IsEmpty {
		one = &keyNode{id: b.PreKeyID().Value, pub: b.PreKey().PublicKey()}
	}
	sig := comp.signed.sig
	return keyBundleNode(asked, comp.regID, comp.identity, one,
		keyNode{id: comp.signed.id, pub: comp.signed.pub, sig: &sig})
}

type keyNode struct {
	id  uint32
	pub [32]byte
	sig *[64]byte
}

func (k keyNode) node(tag string) waBinary.Node {
	var id [4]byte
	binary.BigEndian.PutUint32(id[:], k.id)
	children := []waBinary.Node{{Tag: "id", Content: id[1:]}, {Tag: "value", Content: k.pub[:]}}
	if k.sig != nil {
		children = append(children, waBinary.Node{Tag: "signature", Content: k.sig[:]})
	}
	return waBinary.Node{Tag: tag, Content: children}
}

func keyBundleNode(jid types.JID, regID uint32, identity [32]byte, one *keyNode, signed keyNode) waBinary.Node {
	var reg [4]byte
	binary.BigEndian.PutUint32(reg[:], regID)
	children := []waBinary.Node{
		{Tag: "registration", Content: reg[:]},
		{Tag: "type", Content: []byte{5}},
		{Tag: "identity", Content: identity[:]},
	}
	if one != nil {
		children = append(children, one.node("key"))
	}
	children = append(children, signed.node("skey"))
	return waBinary.Node{Tag: "user", Attrs: waBinary.Attrs{"jid": jid}, Content: children}
}

func contentString(v any) string {
	switch c := v.(type) {
	case []byte:
		return string(c)
	case string:
		return c
	}
	return ""
}

package wafake

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.mau.fi/libsignal/groups"
	"go.mau.fi/libsignal/protocol"
	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
)

// Group notifications, group messages and pictures.

// notifyGroup sends a w:gp2 notification to the given linked devices. It
// goes through the device queues: an offline device gets it when it logs
// in, and whatsmeow's <ack class="notification" id> clears it.
func (n *Network) notifyGroup(targets []*companion, gjid types.JID, actor string, children []waBinary.Node) {
	id := n.nextID()
	node := waBinary.Node{Tag: "notification", Attrs: waBinary.Attrs{
		"type": "w:gp2", "id": id, "from": gjid, "participant": pnJID(actor),
		"t": unixString(time.Now()),
	}, Content: children}
	for _, comp := range targets {
		n.queue(comp, id, node)
	}
}

// handleGroupMessage takes a message a linked device sent to a group: the
// <participants> carry, per member device, a Signal copy of the sender's
// SenderKeyDistributionMessage, and one <enc type="skmsg"> carries the
// message under that sender key. Every member's phone processes its copy
// and decrypts the skmsg into its inbox. Linked devices of members are not
// served yet, as for 1:1 messages.
func (n *Network) handleGroupMessage(c *conn, node *waBinary.Node) {
	ag := node.AttrGetter()
	id, chat := ag.String("id"), ag.JID("to")
	sender := c.dev.jid()
	ack := waBinary.Node{Tag: "ack", Attrs: waBinary.Attrs{
		"class": "message", "id": id, "from": chat, "t": unixString(time.Now()),
	}}
	n.mu.Lock()
	g := n.groups.byID[chat.User]
	code := 0
	switch {
	case g == nil:
		code = 404
	case g.role(sender.User) == "":
		code = 403
	case g.announce && !g.isAdmin(sender.User):
		// Announcement groups: only admins send.
		code = 401
	}
	members := map[string]*account{}
	if code == 0 {
		for _, p := range g.phones() {
			if a := n.accounts[p]; a != nil {
				members[p] = a
			}
		}
	}
	n.mu.Unlock()
	if code != 0 {
		// whatsmeow turns the ack's error attribute into ErrServerReturnedError.
		ack.Attrs["error"] = strconv.Itoa(code)
		_ = c.send(ack)
		return
	}

	// whatsmeow names its sender key after its own LID (send.go sendGroup),
	// whatever addressing the group uses.
	name := protocol.NewSenderKeyName(chat.String(), c.dev.lidJID().SignalAddress())
	for _, p := range node.GetChildrenByTag("participants") {
		for _, t := range p.GetChildrenByTag("to") {
			dest, ok := t.Attrs["jid"].(types.JID)
			if !ok {
				continue
			}
			if dest.Server == types.HiddenUserServer {
				dest = n.pnOfLID(dest)
			}
			acct := members[dest.User]
			if acct == nil || dest.Device != 0 {
				continue
			}
			for _, enc := range t.GetChildrenByTag("enc") {
				if err := n.phoneTakeSenderKey(acct, sender, name, enc); err != nil {
					n.log.Warn("wafake: phone could not take the sender key", "to", dest.String(), "from", sender.String(), "err", err)
				}
			}
		}
	}
	for _, enc := range node.GetChildrenByTag("enc") {
		if enc.AttrGetter().OptionalString("type") != "skmsg" {
			continue
		}
		for _, acct := range members {
			msg, err := phoneGroupDecrypt(acct, name, enc)
			if err != nil {
				n.log.Warn("wafake: phone could not decrypt a group message", "to", acct.phone, "from", sender.String(), "err", err)
				continue
			}
			n.mu.Lock()
			acct.inbox = append(acct.inbox, Received{ID: id, From: sender, Chat: chat, To: chat, Message: msg, Timestamp: time.Now()})
			n.mu.Unlock()
		}
	}
	_ = c.send(ack)
}

// phoneTakeSenderKey decrypts one pairwise copy as the phone of acct and
// stores the sender key it distributes.
func (n *Network) phoneTakeSenderKey(acct *account, sender types.JID, name *protocol.SenderKeyName, enc waBinary.Node) error {
	msg, err := n.phoneDecrypt(acct, sender, enc)
	if err != nil {
		return err
	}
	skdm := msg.GetSenderKeyDistributionMessage()
	if skdm == nil {
		return nil
	}
	if skdm.GetGroupID() != name.GroupID() {
		return fmt.Errorf("sender key for %q in a message to %q", skdm.GetGroupID(), name.GroupID())
	}
	dm, err := protocol.NewSenderKeyDistributionMessageFromBytes(skdm.GetAxolotlSenderKeyDistributionMessage(), serializer.SenderKeyDistributionMessage)
	if err != nil {
		return err
	}
	return groups.NewGroupSessionBuilder(acct.phoneDev, serializer).Process(context.Background(), name, dm)
}

func phoneGroupDecrypt(acct *account, name *protocol.SenderKeyName, enc waBinary.Node) (*waE2E.Message, error) {
	ct, ok := enc.Content.([]byte)
	if !ok {
		return nil, errors.New("skmsg without bytes")
	}
	m, err := protocol.NewSenderKeyMessageFromBytes(ct, serializer.SenderKeyMessage)
	if err != nil {
		return nil, err
	}
	builder := groups.NewGroupSessionBuilder(acct.phoneDev, serializer)
	plain, err := groups.NewGroupCipher(builder, name, acct.phoneDev).Decrypt(context.Background(), m)
	if err != nil {
		return nil, err
	}
	return unpadMessage(plain)
}

// groupPicture is the current picture of a group.
type groupPicture struct {
	id   string
	jpeg []byte
}

// handleGroupPicture serves w:profile:picture for a group target
// (account.go's handleProfilePicture routes them here): set (SetGroupPhoto,
// no content removes) and get (GetProfilePictureInfo). Members' linked
// devices get a picture notification (events.Picture).
func (n *Network) handleGroupPicture(c *conn, node *waBinary.Node) ([]waBinary.Node, *iqError) {
	actor := c.dev.acct.phone
	target, _ := node.Attrs["target"].(types.JID)
	n.mu.Lock()
	g := n.groups.byID[target.User]
	if g == nil {
		n.mu.Unlock()
		return nil, errGroupNotFound
	}
	if node.AttrGetter().String("type") == "get" {
		defer n.mu.Unlock()
		return groupPictureInfo(g, actor, node)
	}
	reply, change, err := setGroupPicture(g, actor, node)
	var targets []*companion
	if err == nil {
		targets = n.devicesLocked(g.phones())
	}
	n.mu.Unlock()
	if err != nil {
		return nil, err
	}
	n.notify(targets, g.jid(), "picture", []waBinary.Node{change})
	return reply, nil
}

// setGroupPicture stores or removes the picture and returns the IQ result
// and the <set>/<delete> change of the picture notification.
func setGroupPicture(g *group, actor string, node *waBinary.Node) ([]waBinary.Node, waBinary.Node, *iqError) {
	switch {
	case g.role(actor) == "":
		return nil, waBinary.Node{}, errNotInGroup
	case g.locked && !g.isAdmin(actor):
		return nil, waBinary.Node{}, errNotAdmin
	}
	change := waBinary.Node{Tag: "delete", Attrs: waBinary.Attrs{"jid": g.jid(), "author": pnJID(actor)}}
	pic, ok := node.GetOptionalChildByTag("picture")
	if !ok {
		g.picture = groupPicture{}
		return nil, change, nil
	}
	jpeg, _ := pic.Content.([]byte)
	if !isJPEG(jpeg) {
		return nil, waBinary.Node{}, errNotAcceptable // whatsmeow: ErrInvalidImageFormat
	}
	id := strconv.FormatInt(time.Now().UnixMicro(), 10)
	if id == g.picture.id {
		id += "1"
	}
	g.picture = groupPicture{id: id, jpeg: bytes.Clone(jpeg)}
	change.Tag, change.Attrs["id"] = "set", id
	return []waBinary.Node{{Tag: "picture", Attrs: waBinary.Attrs{"id": id}}}, change, nil
}

// groupPictureInfo answers the URL of the current picture (served by
// serveGroupPicture), nothing when the asker has it already, 404 without
// one.
func groupPictureInfo(g *group, actor string, node *waBinary.Node) ([]waBinary.Node, *iqError) {
	switch {
	case g.role(actor) == "":
		return nil, errNotAdmin // whatsmeow: ErrProfilePictureUnauthorized
	case g.picture.jpeg == nil:
		return nil, errGroupNotFound // whatsmeow: ErrProfilePictureNotSet
	}
	pic, _ := node.GetOptionalChildByTag("picture")
	if pic.AttrGetter().OptionalString("id") == g.picture.id {
		return nil, nil // whatsmeow reads no <picture> as "unchanged"
	}
	sum := sha256.Sum256(g.picture.jpeg)
	path := "/ppg/" + g.id + "/" + g.picture.id + ".jpg"
	return []waBinary.Node{{Tag: "picture", Attrs: waBinary.Attrs{
		"id": g.picture.id, "type": "image", "url": "https://pps.whatsapp.net" + path, "direct_path": path,
		"hash": base64.StdEncoding.EncodeToString(sum[:]),
	}}}, nil
}

// serveGroupPicture serves /ppg/<group>/<id>.jpg while that picture is
// current.
func (n *Network) serveGroupPicture(w http.ResponseWriter, r *http.Request) {
	id, file, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/ppg/"), "/")
	var jpeg []byte
	n.mu.Lock()
	if g := n.groups.byID[id]; g != nil && g.picture.jpeg != nil && file == g.picture.id+".jpg" {
		jpeg = g.picture.jpeg
	}
	n.mu.Unlock()
	writeJPEG(w, r, jpeg)
}

package wafake

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"
)

// Profile pictures of accounts (w:profile:picture without a group target).
// The picture is kept in the account's state (account.go).

// handleProfilePicture routes w:profile:picture by its target: groups are
// groupmsg.go's, users (and no target: the own account) are handled here.
func (n *Network) handleProfilePicture(c *conn, node *waBinary.Node) ([]waBinary.Node, *iqError) {
	if t, ok := node.Attrs["target"].(types.JID); ok && t.Server == types.GroupServer {
		return n.handleGroupPicture(c, node)
	}
	return n.handleUserPicture(c, node)
}

// handleUserPicture serves w:profile:picture for users: a set without a
// target (or with the own JID) replaces the own picture, a get answers the
// picture of the target user.
func (n *Network) handleUserPicture(c *conn, node *waBinary.Node) ([]waBinary.Node, *iqError) {
	target, hasTarget := node.Attrs["target"].(types.JID)
	if hasTarget && target.Server == types.HiddenUserServer {
		target = n.pnOfLID(target)
	}
	if node.AttrGetter().String("type") == "set" {
		if hasTarget && target.User != c.dev.acct.phone {
			return nil, &iqError{403, "forbidden"}
		}
		var jpeg []byte
		if pic, ok := node.GetOptionalChildByTag("picture"); ok {
			jpeg, _ = pic.Content.([]byte)
			if !isJPEG(jpeg) {
				return nil, &iqError{406, "not-acceptable"} // → whatsmeow's ErrInvalidImageFormat
			}
		}
		id := n.setPicture(c.dev.acct, c.dev, jpeg)
		if jpeg == nil {
			return nil, nil
		}
		return []waBinary.Node{{Tag: "picture", Attrs: waBinary.Attrs{"id": id}}}, nil
	}
	if !hasTarget {
		return nil, &iqError{400, "bad-request"}
	}
	pic, _ := node.GetOptionalChildByTag("picture")
	n.mu.Lock()
	var (
		jpeg   []byte
		id     string
		hidden bool
	)
	if a := n.accounts[target.User]; a != nil {
		// The slice is replaced, never changed in place: safe to read unlocked.
		jpeg, id = a.state.picture, a.state.pictureID
		hidden = a != c.dev.acct && a.state.privacyOf(types.PrivacySettingTypeProfile) == types.PrivacySettingNone
	}
	n.mu.Unlock()
	switch {
	case jpeg == nil:
		return nil, &iqError{404, "item-not-found"} // → ErrProfilePictureNotSet
	case hidden:
		return nil, &iqError{401, "not-authorized"} // → ErrProfilePictureUnauthorized
	case pic.AttrGetter().OptionalString("id") == id:
		// The asker has this picture already: whatsmeow reads no <picture> as
		// "unchanged".
		return nil, nil
	}
	sum := sha256.Sum256(jpeg)
	path := "/pp/" + target.User + "/" + id + ".jpg"
	typ := pic.AttrGetter().OptionalString("type")
	if typ == "" {
		typ = "image"
	}
	return []waBinary.Node{{Tag: "picture", Attrs: waBinary.Attrs{
		"id": id, "type": typ, "url": "https://pps.whatsapp.net" + path, "direct_path": path,
		"hash": base64.StdEncoding.EncodeToString(sum[:]),
	}}}, nil
}

func isJPEG(b []byte) bool { return bytes.HasPrefix(b, []byte{0xFF, 0xD8, 0xFF}) }

// setPicture replaces (nil removes) the picture of a and tells everyone: its
// other linked devices by account_sync, the linked devices of every other
// account by a picture notification (the simulated world is one address
// book). It returns the new picture id.
func (n *Network) setPicture(a *account, skip *companion, jpeg []byte) string {
	id := strconv.FormatInt(time.Now().Unix(), 10) + strconv.FormatUint(n.ids.Add(1), 10)
	n.mu.Lock()
	a.state.picture, a.state.pictureID = slices.Clone(jpeg), id
	if jpeg == nil {
		a.state.pictureID = ""
	}
	own := linkedLocked(a, skip)
	var others []*companion
	for _, o := range n.accounts {
		if o != a && !slices.Contains(o.state.blocked, a.jid()) {
			others = append(others, linkedLocked(o, nil)...)
		}
	}
	n.mu.Unlock()
	n.notify(own, a.jid(), "account_sync", []waBinary.Node{{Tag: "picture"}})
	change := waBinary.Node{Tag: "set", Attrs: waBinary.Attrs{"jid": a.jid(), "id": id, "author": a.jid()}}
	if jpeg == nil {
		change = waBinary.Node{Tag: "delete", Attrs: waBinary.Attrs{"jid": a.jid(), "author": a.jid()}}
	}
	n.notify(others, a.jid(), "picture", []waBinary.Node{change})
	return id
}

// SetPicture is the phone of account phone setting its profile picture (a
// JPEG; nil removes it). It returns the picture id.
func (n *Network) SetPicture(phone string, jpeg []byte) (string, error) {
	if jpeg != nil && !isJPEG(jpeg) {
		return "", &ValueError{What: "a profile picture", Value: "non-JPEG data"}
	}
	n.mu.Lock()
	a, err := n.accountLocked(phone)
	n.mu.Unlock()
	if err != nil {
		return "", err
	}
	return n.setPicture(a, nil, jpeg), nil
}

// serveProfilePicture serves the URL a picture IQ answers:
// /pp/<phone>/<id>.jpg, only while that picture is current.
func (n *Network) serveProfilePicture(w http.ResponseWriter, r *http.Request) {
	phone, file, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/pp/"), "/")
	n.mu.Lock()
	var pic []byte
	if a := n.accounts[phone]; a != nil && a.state.picture != nil && file == a.state.pictureID+".jpg" {
		pic = a.state.picture
	}
	n.mu.Unlock()
	writeJPEG(w, r, pic)
}

// writeJPEG serves a picture, or 404 when there is none.
func writeJPEG(w http.ResponseWriter, r *http.Request, jpeg []byte) {
	if jpeg == nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "image/jpeg")
	_, _ = w.Write(jpeg)
}

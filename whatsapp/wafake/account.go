package wafake

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"
)

// accountState is what an account keeps besides its devices. Its zero value
// is an account with every privacy setting "all" and nothing else set. Guarded
// by n.mu.
type accountState struct {
	pushName     string
	privacy      map[types.PrivacySettingType]types.PrivacySetting
	disappearing uint32 // default timer for new chats, seconds
	about        string
	picture      []byte // JPEG; nil when none
	pictureID    string
	blocked      []types.JID
	// receipts are those linked devices sent about this account's messages.
	receipts []ReceiptInfo
	// subs are the presence subscriptions of this account's connections, by
	// subscribed phone. WhatsApp forgets them when a connection ends, so they
	// are kept per connection and dropped with it.
	subs map[*conn]map[string]bool
	// presence is the last availability the account announced.
	presence *presenceState
}

type presenceState struct {
	available bool
	last      time.Time
}

// AccountInfo is the network's view of an account.
type AccountInfo struct {
	Phone               string
	PushName            string // the name its linked devices last announced, if any
	PictureID           string
	PictureSHA256       string // hex; "" without a picture
	Privacy             types.PrivacySettings
	DisappearingSeconds uint32
	Status              string // the "about" text
	Blocked             []types.JID
	LinkedDevices       []types.JID
}

// privacyAllowed reports whether a category accepts value (types/user.go).
func privacyAllowed(name types.PrivacySettingType, value types.PrivacySetting) bool {
	switch name {
	case types.PrivacySettingTypeReadReceipts:
		return value == types.PrivacySettingAll || value == types.PrivacySettingNone
	case types.PrivacySettingTypeGroupAdd, types.PrivacySettingTypeLastSeen, types.PrivacySettingTypeStatus, types.PrivacySettingTypeProfile:
		switch value {
		case types.PrivacySettingAll, types.PrivacySettingContacts, types.PrivacySettingContactBlacklist, types.PrivacySettingNone:
			return true
		}
	case types.PrivacySettingTypeOnline:
		return value == types.PrivacySettingAll || value == types.PrivacySettingMatchLastSeen
	case types.PrivacySettingTypeCallAdd:
		return value == types.PrivacySettingAll || value == types.PrivacySettingKnown
	}
	return false
}

// privacyOrder lists the categories in the order they are answered.
func privacyOrder() []types.PrivacySettingType {
	return []types.PrivacySettingType{
		types.PrivacySettingTypeReadReceipts, types.PrivacySettingTypeGroupAdd, types.PrivacySettingTypeLastSeen,
		types.PrivacySettingTypeStatus, types.PrivacySettingTypeProfile, types.PrivacySettingTypeOnline,
		types.PrivacySettingTypeCallAdd,
	}
}

// disappearingAllowed reports whether d is a default timer WhatsApp offers:
// off, 24 h, 7 d, 90 d.
func disappearingAllowed(d uint64) bool {
	return d == 0 || d == 86400 || d == 604800 || d == 7776000
}

func (s *accountState) privacyOf(name types.PrivacySettingType) types.PrivacySetting {
	if v, ok := s.privacy[name]; ok {
		return v
	}
	return types.PrivacySettingAll
}

// Account returns the network's view of the account of phone; false when
// phone is not on WhatsApp. An account nobody used yet has the defaults.
func (n *Network) Account(phone string) (AccountInfo, bool) {
	if ValidPhone(phone) != nil {
		return AccountInfo{}, false
	}
	info := AccountInfo{Phone: phone}
	n.mu.Lock()
	defer n.mu.Unlock()
	a := n.accounts[phone]
	var s accountState
	if a != nil {
		s = a.state
		info.LinkedDevices = a.deviceJIDs()[1:]
	}
	info.PushName, info.DisappearingSeconds, info.Status = s.pushName, s.disappearing, s.about
	if a != nil && a.pushName != "" {
		info.PushName = a.pushName // app state is the phone's own record of it
	}
	info.Blocked = slices.Clone(s.blocked)
	if s.picture != nil {
		sum := sha256.Sum256(s.picture)
		info.PictureID, info.PictureSHA256 = s.pictureID, hex.EncodeToString(sum[:])
	}
	info.Privacy = types.PrivacySettings{
		GroupAdd: s.privacyOf(types.PrivacySettingTypeGroupAdd), LastSeen: s.privacyOf(types.PrivacySettingTypeLastSeen),
		Status: s.privacyOf(types.PrivacySettingTypeStatus), Profile: s.privacyOf(types.PrivacySettingTypeProfile),
		ReadReceipts: s.privacyOf(types.PrivacySettingTypeReadReceipts), Online: s.privacyOf(types.PrivacySettingTypeOnline),
		CallAdd: s.privacyOf(types.PrivacySettingTypeCallAdd),
	}
	return info, true
}

// linkedLocked lists the linked devices of a, leaving out skip. n.mu must be
// held.
func linkedLocked(a *account, skip *companion) []*companion {
	var out []*companion
	for _, j := range a.deviceJIDs()[1:] {
		if c := a.devices[j.Device]; c != skip {
			out = append(out, c)
		}
	}
	return out
}

// notify queues a <notification> for each device: the ones offline get it
// when they log in, and the client's ack (class="notification") releases it.
func (n *Network) notify(to []*companion, from types.JID, typ string, content []waBinary.Node) {
	if len(to) == 0 {
		return
	}
	id := n.nextID()
	node := waBinary.Node{Tag: "notification", Attrs: waBinary.Attrs{
		"id": id, "from": from, "type": typ, "t": strconv.FormatInt(time.Now().Unix(), 10),
	}, Content: content}
	for _, comp := range to {
		n.queue(comp, id, node)
	}
}

// handlePrivacy answers the privacy IQs: get lists every category, set
// changes one or more and tells the account's other linked devices
// (account_sync), whose clients then emit events.PrivacySettings.
func (n *Network) handlePrivacy(c *conn, node *waBinary.Node) ([]waBinary.Node, *iqError) {
	if c.dev == nil {
		return nil, &iqError{401, "not-authorized"}
	}
	p, ok := node.GetOptionalChildByTag("privacy")
	if !ok {
		return nil, &iqError{400, "bad-request"}
	}
	if node.AttrGetter().String("type") == "get" {
		n.mu.Lock()
		cats := privacyCategories(&c.dev.acct.state, privacyOrder())
		n.mu.Unlock()
		return []waBinary.Node{{Tag: "privacy", Content: cats}}, nil
	}
	changes := map[types.PrivacySettingType]types.PrivacySetting{}
	for _, cat := range p.GetChildrenByTag("category") {
		ag := cat.AttrGetter()
		name, value := types.PrivacySettingType(ag.String("name")), types.PrivacySetting(ag.String("value"))
		if !privacyAllowed(name, value) {
			return nil, &iqError{400, "bad-request"}
		}
		changes[name] = value
	}
	if len(changes) == 0 {
		return nil, &iqError{400, "bad-request"}
	}
	n.setPrivacy(c.dev.acct, c.dev, changes)
	return nil, nil
}

// privacyCategories renders the categories names of s. n.mu must be held.
func privacyCategories(s *accountState, names []types.PrivacySettingType) []waBinary.Node {
	var out []waBinary.Node
	for _, name := range privacyOrder() {
		if slices.Contains(names, name) {
			out = append(out, waBinary.Node{Tag: "category", Attrs: waBinary.Attrs{"name": string(name), "value": string(s.privacyOf(name))}})
		}
	}
	return out
}

// setPrivacy stores validated changes and tells the linked devices but skip.
func (n *Network) setPrivacy(a *account, skip *companion, changes map[types.PrivacySettingType]types.PrivacySetting) {
	n.mu.Lock()
	if a.state.privacy == nil {
		a.state.privacy = map[types.PrivacySettingType]types.PrivacySetting{}
	}
	var names []types.PrivacySettingType
	for name, value := range changes {
		a.state.privacy[name] = value
		names = append(names, name)
	}
	cats := privacyCategories(&a.state, names)
	to := linkedLocked(a, skip)
	n.mu.Unlock()
	n.notify(to, a.jid(), "account_sync", []waBinary.Node{{Tag: "privacy", Content: cats}})
}

// SetPrivacy is the phone of account phone changing one privacy setting; its
// linked devices are told.
func (n *Network) SetPrivacy(phone string, name types.PrivacySettingType, value types.PrivacySetting) error {
	if !privacyAllowed(name, value) {
		return &ValueError{What: "privacy setting " + string(name), Value: string(value)}
	}
	n.mu.Lock()
	a, err := n.accountLocked(phone)
	n.mu.Unlock()
	if err != nil {
		return err
	}
	n.setPrivacy(a, nil, map[types.PrivacySettingType]types.PrivacySetting{name: value})
	return nil
}

// ValueError is a value the simulated WhatsApp does not accept.
type ValueError struct{ What, Value string }

func (e *ValueError) Error() string {
	return "wafake: " + e.What + " does not accept " + strconv.Quote(e.Value)
}

// handleDisappearingMode stores the default disappearing timer; WhatsApp only
// offers a few durations.
func (n *Network) handleDisappearingMode(c *conn, node *waBinary.Node) ([]waBinary.Node, *iqError) {
	if c.dev == nil {
		return nil, &iqError{401, "not-authorized"}
	}
	dm, ok := node.GetOptionalChildByTag("disappearing_mode")
	if !ok || node.AttrGetter().String("type") != "set" {
		return nil, &iqError{400, "bad-request"}
	}
	d, err := strconv.ParseUint(dm.AttrGetter().String("duration"), 10, 32)
	if err != nil || !disappearingAllowed(d) {
		return nil, &iqError{400, "bad-request"}
	}
	n.mu.Lock()
	c.dev.acct.state.disappearing = uint32(d)
	n.mu.Unlock()
	return nil, nil
}

// handleStatus stores the "about" text (SetStatusMessage).
func (n *Network) handleStatus(c *conn, node *waBinary.Node) ([]waBinary.Node, *iqError) {
	if c.dev == nil {
		return nil, &iqError{401, "not-authorized"}
	}
	st, ok := node.GetOptionalChildByTag("status")
	if !ok || node.AttrGetter().String("type") != "set" {
		return nil, &iqError{400, "bad-request"}
	}
	text := contentString(st.Content)
	if len([]rune(text)) > 139 { // WhatsApp's limit for the about text
		return nil, &iqError{406, "not-acceptable"}
	}
	n.mu.Lock()
	c.dev.acct.state.about = text
	n.mu.Unlock()
	return nil, nil
}

// handleBlocklist answers GetBlocklist and UpdateBlocklist; a change is told
// to the account's other linked devices.
func (n *Network) handleBlocklist(c *conn, node *waBinary.Node) ([]waBinary.Node, *iqError) {
	if c.dev == nil {
		return nil, &iqError{401, "not-authorized"}
	}
	a := c.dev.acct
	if node.AttrGetter().String("type") == "set" {
		item, ok := node.GetOptionalChildByTag("item")
		jid, isJID := item.Attrs["jid"].(types.JID)
		action := item.AttrGetter().OptionalString("action")
		if !ok || !isJID || (action != "block" && action != "unblock") {
			return nil, &iqError{400, "bad-request"}
		}
		if jid.Server == types.HiddenUserServer {
			jid = n.pnOfLID(jid)
		}
		if ValidPhone(jid.User) != nil || jid.Server != types.DefaultUserServer {
			return nil, &iqError{404, "item-not-found"}
		}
		n.setBlocked(a, c.dev, jid.ToNonAD(), action == "block")
	}
	n.mu.Lock()
	list := blocklistNode(a.state.blocked)
	n.mu.Unlock()
	return []waBinary.Node{list}, nil
}

func blocklistNode(blocked []types.JID) waBinary.Node {
	items := make([]waBinary.Node, len(blocked))
	for i, j := range blocked {
		items[i] = waBinary.Node{Tag: "item", Attrs: waBinary.Attrs{"jid": j}}
	}
	return waBinary.Node{Tag: "list", Attrs: waBinary.Attrs{"dhash": blocklistHash(blocked)}, Content: items}
}

// blocklistHash stands in for WhatsApp's list hash: clients only compare it.
func blocklistHash(blocked []types.JID) string {
	parts := make([]string, len(blocked))
	for i, j := range blocked {
		parts[i] = j.String()
	}
	slices.Sort(parts)
	sum := sha256.Sum256([]byte(strings.Join(parts, ",")))
	return base64.StdEncoding.EncodeToString(sum[:8])
}

// setBlocked changes the blocklist of a and, when it changed, tells its
// linked devices but skip (account_sync → events.Blocklist).
func (n *Network) setBlocked(a *account, skip *companion, jid types.JID, block bool) {
	n.mu.Lock()
	prev := blocklistHash(a.state.blocked)
	i := slices.Index(a.state.blocked, jid)
	switch {
	case block && i < 0:
		a.state.blocked = append(a.state.blocked, jid)
	case !block && i >= 0:
		a.state.blocked = slices.Delete(a.state.blocked, i, i+1)
	default:
		n.mu.Unlock()
		return
	}
	dhash := blocklistHash(a.state.blocked)
	to := linkedLocked(a, skip)
	n.mu.Unlock()
	action := "unblock"
	if block {
		action = "block"
	}
	n.notify(to, a.jid(), "account_sync", []waBinary.Node{{
		Tag:     "blocklist",
		Attrs:   waBinary.Attrs{"dhash": dhash, "prev_dhash": prev},
		Content: []waBinary.Node{{Tag: "item", Attrs: waBinary.Attrs{"jid": jid, "action": action}}},
	}})
}

// SetBlocked is the phone of account phone blocking (or unblocking) target;
// its linked devices are told. Blocked contacts cannot send the account
// presence, receipts, reactions or calls through the network.
func (n *Network) SetBlocked(phone, target string, blocked bool) error {
	if err := ValidPhone(target); err != nil {
		return err
	}
	n.mu.Lock()
	a, err := n.accountLocked(phone)
	n.mu.Unlock()
	if err != nil {
		return err
	}
	n.setBlocked(a, nil, types.NewJID(target, types.DefaultUserServer), blocked)
	return nil
}

// blockedLocked reports whether the account of phone blocked from. n.mu must
// be held.
func (n *Network) blockedLocked(phone, from string) bool {
	a := n.accounts[phone]
	return a != nil && slices.Contains(a.state.blocked, types.NewJID(from, types.DefaultUserServer))
}

// handleProfilePicture routes w:profile:picture by its target: groups are
// groups.go's, users (and no target: the own account) are handled here.
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
	if c.dev == nil {
		return nil, &iqError{401, "not-authorized"}
	}
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
	if pic == nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "image/jpeg")
	_, _ = w.Write(pic)
}

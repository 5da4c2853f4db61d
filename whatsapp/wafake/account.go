package wafake

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
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
	businessName string // the verified name of a business account (userinfo.go)
	blocked      []types.JID
	// receipts are those linked devices sent about this account's messages.
	receipts []ReceiptInfo
	// subs are the presence subscriptions of this account's connections, by
	// subscribed phone. WhatsApp forgets them when a connection ends, so they
	// are kept per connection and dropped with it.
	subs map[*conn]map[string]bool
	// presence is the last availability the account announced.
	presence *presenceState
	// trusted are the accounts its devices issued a trusted-contact token
	// to (tctoken.go), with the time of issue, by phone.
	trusted map[string]time.Time
	// lastCall is the call the account last offered (Call), and whether a
	// linked device of the callee rejected it.
	lastCall         string
	lastCallRejected bool
	// reachoutUntil is when the reach-out timelock on the account ends
	// (reachout.go); contacted are the accounts it exchanged a message
	// with, by phone: no new contacts of its.
	reachoutUntil time.Time
	contacted     map[string]bool
}

type presenceState struct {
	available bool
	last      time.Time
}

// AccountInfo is the network's view of an account.
type AccountInfo struct {
	Phone string
	// LID is the account's LID, the address whatsmeow sends direct messages
	// to; empty until the account is first used (it gets one then).
	LID                 types.JID
	PushName            string // the name its linked devices last announced, if any
	PictureID           string
	PictureSHA256       string // hex; "" without a picture
	Privacy             types.PrivacySettings
	DisappearingSeconds uint32
	Status              string // the "about" text
	Blocked             []types.JID
	LinkedDevices       []types.JID
	// Presence is the availability the account last showed its contacts
	// (nil: never); PresenceAt when.
	Presence   *bool
	PresenceAt time.Time
	// LastCallRejected is whether the last call the account offered was
	// rejected; nil when it offered none.
	LastCallRejected *bool
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
		info.LID = types.NewJID(a.lid, types.HiddenUserServer)
	}
	info.PushName, info.DisappearingSeconds, info.Status = s.pushName, s.disappearing, s.about
	if a != nil && a.pushName != "" {
		info.PushName = a.pushName // app state is the phone's own record of it
	}
	info.Blocked = slices.Clone(s.blocked)
	if s.lastCall != "" {
		rejected := s.lastCallRejected
		info.LastCallRejected = &rejected
	}
	if p := s.presence; p != nil {
		available := p.available
		info.Presence, info.PresenceAt = &available, p.last
	}
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
	if tokens, ok := node.GetOptionalChildByTag("tokens"); ok && node.AttrGetter().String("type") == "set" {
		return n.handlePrivacyTokens(c, tokens)
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

// handleStatus answers GetStatusPrivacy (the status broadcast audience).
// The "about" text no longer comes this way: whatsmeow sets it through a
// GraphQL mutation (mex.go).
func (n *Network) handleStatus(c *conn, node *waBinary.Node) ([]waBinary.Node, *iqError) {
	if node.AttrGetter().String("type") == "get" {
		// whatsmeow reads 404 as "the default", contacts.
		return nil, &iqError{404, "item-not-found"}
	}
	return nil, &iqError{400, "bad-request"}
}

// handleBlocklist answers GetBlocklist and UpdateBlocklist; a change is told
// to the account's other linked devices.
func (n *Network) handleBlocklist(c *conn, node *waBinary.Node) ([]waBinary.Node, *iqError) {
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

package wafake

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/util/keys"
)

// account is a simulated WhatsApp account: a phone (device 0) and the
// companion devices linked to it.
type account struct {
	phone    string
	lid      string // the account's LID user
	identity *keys.KeyPair
	devices  map[uint16]*companion
	nextDev  uint16
	phoneDev *signalStore // the phone (device 0) as a Signal device
	inbox    []Received
	inboxRaw []json.RawMessage // persist.go: the first entries of inbox, encoded
	state    accountState      // settings, blocklist, presence, receipts (account.go)
	appState *appState         // encrypted app state patches (appstate.go)
	pushName string            // as set through app state
	// history is every message of each chat the phone holds, by chat JID,
	// oldest first (phonehistory.go); not kept across a restart.
	history map[string][]HistoryMessage
	// chatStates are the chat states clients showed the account
	// (chatstate.go); not kept across a restart, as they pass.
	chatStates []ChatStateInfo
	// passkey, when set, gates linking behind the account's passkey
	// (passkey.go); not kept across a restart.
	passkey *passkeyCred
}

// companion is a linked device, as the server knows it: its keys and the
// prekeys it uploaded, which are what a sender encrypts to.
type companion struct {
	acct     *account
	device   uint16
	noisePub [32]byte
	identity [32]byte
	regID    uint32
	signed   signedPreKey
	prekeys  map[uint32][32]byte
	loggedIn *conn // the connection logged in as this device, if any
	// unacked holds stanzas sent to the device and not yet acknowledged, in
	// order: they are sent again when it logs in, as WhatsApp's offline
	// queue does, so a client that crashed before acking loses nothing.
	unacked   []queued
	queued    uint64 // how many stanzas were ever queued: the seq of the last
	keyShared bool   // the phone has given it the app state key
	// fetched holds the app state collections the device has fetched at
	// least once (AppStateSynced).
	fetched map[string]bool
	// sent is what the network's phones sent the device, kept to send it
	// again on a retry receipt (retryresend.go).
	sent sentLog
}

type queued struct {
	id   string
	node waBinary.Node
	seq  uint64 // the order in which it was queued
	raw  []byte // persist.go: node encoded, once saved
	// acksOwed counts acks still to come for earlier copies of this
	// message that the device could not decrypt: they must not take
	// the re-sent copy off the queue (retryresend.go).
	acksOwed int
}

type signedPreKey struct {
	id  uint32
	pub [32]byte
	sig [64]byte
}

func (c *companion) jid() types.JID {
	return types.JID{User: c.acct.phone, Device: c.device, Server: types.DefaultUserServer}
}

func (a *account) jid() types.JID { return types.NewJID(a.phone, types.DefaultUserServer) }

// deviceJIDs lists the account's devices: the phone, then its companions.
func (a *account) deviceJIDs() []types.JID {
	out := []types.JID{{User: a.phone, Server: types.DefaultUserServer}}
	for d := uint16(1); d < a.nextDev; d++ {
		if c := a.devices[d]; c != nil {
			out = append(out, c.jid())
		}
	}
	return out
}

func (c *companion) lidJID() types.JID {
	return types.JID{User: c.acct.lid, Device: c.device, Server: types.HiddenUserServer}
}

// ValidPhone reports whether phone is a WhatsApp account of the simulated
// world: 7 to 15 digits, not ending in 0000 (those are not on WhatsApp).
func ValidPhone(phone string) error {
	if len(phone) < 7 || len(phone) > 15 || strings.IndexFunc(phone, func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
		return fmt.Errorf("wafake: %q is not a phone number of 7 to 15 digits", phone)
	}
	if strings.HasSuffix(phone, "0000") {
		return fmt.Errorf("wafake: %s is not on WhatsApp (numbers ending in 0000 never are)", phone)
	}
	return nil
}

// accountLocked returns the account of phone, creating it on first use.
// n.mu must be held.
func (n *Network) accountLocked(phone string) (*account, error) {
	if err := ValidPhone(phone); err != nil {
		return nil, err
	}
	a := n.accounts[phone]
	if a == nil {
		n.lidSeq++
		id := keys.NewKeyPair()
		a = &account{
			phone:    phone,
			lid:      strconv.FormatUint(200000000000000+n.lidSeq, 10),
			identity: id,
			devices:  map[uint16]*companion{},
			nextDev:  1,
			phoneDev: newSignalStore(id, uint32(1+n.lidSeq%16000)),
			appState: newAppState(),
		}
		a.phoneDev.gen = &n.mu.gen
		n.accounts[phone] = a
	}
	return a, nil
}

// companionLocked finds the companion a login payload names. n.mu must be
// held.
func (n *Network) companionLocked(phone string, device uint16) *companion {
	if a := n.accounts[phone]; a != nil {
		return a.devices[device]
	}
	return nil
}

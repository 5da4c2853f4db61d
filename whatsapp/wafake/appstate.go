package wafake

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/proto/waServerSync"
	"go.mau.fi/whatsmeow/proto/waSyncAction"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/util/cbcutil"
	"go.mau.fi/whatsmeow/util/hkdfutil"
	"google.golang.org/protobuf/proto"
)

// App state (contacts, settings such as the push name, chat flags) is kept by
// the server as encrypted patches per collection; only devices holding the
// account's sync key can read them. The primary phone hands that key to each
// new linked device in a peer message; the network keeps every patch a
// device uploads and stamps its version, because whatsmeow leaves the
// version out and checks its MACs against the version the server assigns.

// appState is an account's app state on the server.
type appState struct {
	keyID   []byte
	keyData []byte
	// patches per collection, each stamped with its version (1, 2, …).
	collections map[string][][]byte
	// integrity per collection: the LTHash its patches chain to, which
	// the phone's own patches must continue (appstatephone.go).
	integrity map[string]*collectionIntegrity
}

func newAppState() *appState {
	id := make([]byte, 6)
	data := make([]byte, 32)
	_, _ = rand.Read(id)
	_, _ = rand.Read(data)
	return &appState{keyID: id, keyData: data, collections: map[string][][]byte{}, integrity: map[string]*collectionIntegrity{}}
}

// enqueueKeyShare queues, for a device that has not got it yet, the peer
// message by which the phone shares the app state key. Queued (not sent):
// the login flushes the queue right after <success>.
func (n *Network) enqueueKeyShare(comp *companion) error {
	n.mu.Lock()
	acct := comp.acct
	if comp.keyShared {
		n.mu.Unlock()
		return nil
	}
	comp.keyShared = true
	st := acct.appState
	err := n.linkPushNameLocked(acct)
	if err == nil {
		err = n.seedAppStateLocked(acct)
	}
	history := linkHistoryLocked(acct)
	n.mu.Unlock()
	if err != nil {
		return err
	}
	msg := &waE2E.Message{ProtocolMessage: &waE2E.ProtocolMessage{
		Type: waE2E.ProtocolMessage_APP_STATE_SYNC_KEY_SHARE.Enum(),
		AppStateSyncKeyShare: &waE2E.AppStateSyncKeyShare{Keys: []*waE2E.AppStateSyncKey{{
			KeyID: &waE2E.AppStateSyncKeyId{KeyID: st.keyID},
			KeyData: &waE2E.AppStateSyncKeyData{
				KeyData:     st.keyData,
				Fingerprint: &waE2E.AppStateSyncKeyFingerprint{RawID: proto.Uint32(1), CurrentIndex: proto.Uint32(0)},
				Timestamp:   proto.Int64(time.Now().UnixMilli()),
			},
		}}},
	}}
	id, node, err := n.peerMessage(acct, comp, msg)
	if err != nil {
		return err
	}
	n.mu.Lock()
	n.enqueueLocked(comp, id, node)
	n.mu.Unlock()
	if history == nil {
		return nil
	}
	// Then the phone's history: each chat's most recent message
	// (phonehistory.go).
	node, id, err = n.historyNotification(comp, history, "")
	if err != nil {
		return err
	}
	n.mu.Lock()
	n.enqueueLocked(comp, id, node)
	n.mu.Unlock()
	return nil
}

// peerMessage encrypts msg from the account's phone to one of its own linked
// devices. whatsmeow acts on protocol messages (key shares, history sync)
// only when they come from its own account, marked as peer traffic.
func (n *Network) peerMessage(acct *account, comp *companion, msg *waE2E.Message) (string, waBinary.Node, error) {
	plain, err := proto.Marshal(msg)
	if err != nil {
		return "", waBinary.Node{}, err
	}
	enc, err := n.phoneEncrypt(acct, comp, plain)
	if err != nil {
		return "", waBinary.Node{}, err
	}
	id := newMessageID()
	return id, waBinary.Node{Tag: "message", Attrs: waBinary.Attrs{
		"id": id, "from": acct.jid(), "type": "protocol", "category": "peer",
		"t": strconv.FormatInt(time.Now().Unix(), 10),
	}, Content: []waBinary.Node{enc}}, nil
}

// handleAppStateSync serves w:sync:app:state: uploads of patches and fetches
// of the patches after a version.
//
// An upload names the version it was built on. The server takes it only if
// that is the collection's current version: the patch's MACs chain from
// that version's LTHash, so a patch built on an older one would break the
// chain for every device that replays it. A stale upload is refused with a
// 409 conflict carrying the patches the uploader missed, as WhatsApp does;
// whatsmeow applies them and uploads again. An accepted patch is announced
// to the account's other linked devices (server_sync), which fetch it.
//
// A fetch with return_snapshot (a full sync) is answered with every patch
// from version 1: WhatsApp sends a snapshot blob there, which whatsmeow
// turns into the same state as replaying the patches from an empty one.
func (n *Network) handleAppStateSync(c *conn, node *waBinary.Node) ([]waBinary.Node, *iqError) {
	sync, ok := node.GetOptionalChildByTag("sync")
	if !ok {
		return nil, &iqError{400, "bad-request"}
	}
	var out []waBinary.Node
	for _, col := range sync.GetChildrenByTag("collection") {
		ag := col.AttrGetter()
		name := ag.String("name")
		from := uint64(0)
		if v, ok := col.Attrs["version"]; ok {
			from, _ = strconv.ParseUint(fmt.Sprint(v), 10, 64)
		}
		if p, ok := col.GetOptionalChildByTag("patch"); ok {
			raw, _ := p.Content.([]byte)
			res, err := n.storePatch(c.dev, name, from, raw)
			if err != nil {
				return nil, &iqError{400, "bad-request"}
			}
			out = append(out, res)
			continue
		}
		n.mu.Lock()
		all := c.dev.acct.appState.collections[name]
		patches := patchesAfter(all, from)
		if c.dev.fetched == nil {
			c.dev.fetched = map[string]bool{}
		}
		c.dev.fetched[name] = true
		n.mu.Unlock()
		out = append(out, waBinary.Node{Tag: "collection", Attrs: waBinary.Attrs{"name": name, "version": len(all)},
			Content: []waBinary.Node{{Tag: "patches", Content: patches}}})
	}
	return []waBinary.Node{{Tag: "sync", Content: out}}, nil
}

// patchesAfter renders the patches of a collection after version from; all
// is read under n.mu.
func patchesAfter(all [][]byte, from uint64) []waBinary.Node {
	var patches []waBinary.Node
	for i := from; i < uint64(len(all)); i++ {
		patches = append(patches, waBinary.Node{Tag: "patch", Content: all[i]})
	}
	return patches
}

// storePatch takes a patch dev uploaded on version base of collection name:
// stamped with the next version and kept when base is the current version,
// refused with a 409 conflict and the missed patches otherwise. It returns
// the <collection> of the answer. What the network understands of a kept
// patch (the push name) applies in the same step as keeping it, so the
// network's name is always that of the collection's latest patch.
func (n *Network) storePatch(dev *companion, name string, base uint64, raw []byte) (waBinary.Node, error) {
	var patch waServerSync.SyncdPatch
	if err := proto.Unmarshal(raw, &patch); err != nil {
		return waBinary.Node{}, err
	}
	acct := dev.acct
	st := acct.appState // its key never changes
	var pushName *string
	for _, m := range patch.GetMutations() {
		action, err := decryptMutation(st, m)
		if err != nil {
			n.log.Warn("wafake: undecryptable app state mutation", "err", err)
			continue
		}
		if pn := action.GetValue().GetPushNameSetting(); pn != nil {
			pushName = pn.Name
		}
	}
	n.mu.Lock()
	all := st.collections[name]
	if base != uint64(len(all)) {
		missed := patchesAfter(all, base)
		n.mu.Unlock()
		return waBinary.Node{Tag: "collection", Attrs: waBinary.Attrs{"name": name, "type": "error"}, Content: []waBinary.Node{
			{Tag: "error", Attrs: waBinary.Attrs{"code": "409", "text": "conflict"}},
			{Tag: "patches", Content: missed},
		}}, nil
	}
	version, err := st.keepLocked(name, &patch)
	if err != nil {
		n.mu.Unlock()
		return waBinary.Node{}, err
	}
	if pushName != nil {
		acct.pushName = *pushName
	}
	to := linkedLocked(acct, dev)
	n.mu.Unlock()
	n.notify(to, types.ServerJID, "server_sync", []waBinary.Node{{Tag: "collection", Attrs: waBinary.Attrs{"name": name, "version": version}}})
	return waBinary.Node{Tag: "collection", Attrs: waBinary.Attrs{"name": name, "version": version}}, nil
}

// decryptMutation reads one mutation with the account's sync key: the value
// key is bytes 32-64 of the key's "WhatsApp Mutation Keys" expansion, and the
// blob is IV ‖ AES-CBC ciphertext ‖ 32-byte MAC.
func decryptMutation(st *appState, m *waServerSync.SyncdMutation) (*waSyncAction.SyncActionData, error) {
	if !bytes.Equal(m.GetRecord().GetKeyID().GetID(), st.keyID) {
		return nil, errors.New("mutation encrypted with an unknown key")
	}
	expanded := hkdfutil.SHA256(st.keyData, nil, []byte("WhatsApp Mutation Keys"), 160)
	blob := m.GetRecord().GetValue().GetBlob()
	if len(blob) < 16+32+16 {
		return nil, errors.New("mutation blob too short")
	}
	content := append([]byte(nil), blob[16:len(blob)-32]...) // cbcutil decrypts in place
	plain, err := cbcutil.Decrypt(expanded[32:64], blob[:16], content)
	if err != nil {
		return nil, err
	}
	var action waSyncAction.SyncActionData
	if err := proto.Unmarshal(plain, &action); err != nil {
		return nil, err
	}
	return &action, nil
}

// PushName is the profile name account phone set through app state ("" until
// one of its devices sets it).
func (n *Network) PushName(phone string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if a := n.accounts[phone]; a != nil {
		return a.pushName
	}
	return ""
}

// AppStateVersion is the version of the app state collection name (such as
// "critical_block", where the push name is) of account phone: how many
// patches its devices uploaded to it and the network took.
func (n *Network) AppStateVersion(phone, name string) uint64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	if a := n.accounts[phone]; a != nil {
		return uint64(len(a.appState.collections[name]))
	}
	return 0
}

// AppStateSynced reports whether the linked device has fetched every app
// state collection the simulated phone writes to (chat flags, stars,
// labels, the address book) at least once. A device's first fetch of a
// collection is a full sync, which whatsmeow applies without events; what
// the phone writes after that fetch was served reaches the device as a
// change with its event (whatsmeow serialises its fetches of a collection,
// so the change is fetched after the full sync was applied). Tests wait
// for it before the phone writes.
func (n *Network) AppStateSynced(device types.JID) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := n.companionLocked(device.User, device.Device)
	if c == nil {
		return false
	}
	for _, name := range seededCollections {
		if !c.fetched[string(name)] {
			return false
		}
	}
	return true
}

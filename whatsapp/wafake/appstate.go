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
}

func newAppState() *appState {
	id := make([]byte, 6)
	data := make([]byte, 32)
	_, _ = rand.Read(id)
	_, _ = rand.Read(data)
	return &appState{keyID: id, keyData: data, collections: map[string][][]byte{}}
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
	n.mu.Unlock()
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
	comp.unacked = append(comp.unacked, queued{id: id, node: node})
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

// handleAppStateSync serves w:sync:app:state: uploads of patches, answered
// with the new version, and fetches of the patches after a version.
func (n *Network) handleAppStateSync(c *conn, node *waBinary.Node) ([]waBinary.Node, *iqError) {
	sync, ok := node.GetOptionalChildByTag("sync")
	if !ok {
		return nil, &iqError{400, "bad-request"}
	}
	var out []waBinary.Node
	for _, col := range sync.GetChildrenByTag("collection") {
		ag := col.AttrGetter()
		name := ag.String("name")
		if p, ok := col.GetOptionalChildByTag("patch"); ok {
			raw, _ := p.Content.([]byte)
			version, err := n.storePatch(c.dev.acct, name, raw)
			if err != nil {
				return nil, &iqError{400, "bad-request"}
			}
			out = append(out, waBinary.Node{Tag: "collection", Attrs: waBinary.Attrs{"name": name, "version": version}})
			continue
		}
		from := uint64(0)
		if v, ok := col.Attrs["version"]; ok {
			from, _ = strconv.ParseUint(fmt.Sprint(v), 10, 64)
		}
		n.mu.Lock()
		all := c.dev.acct.appState.collections[name]
		var patches []waBinary.Node
		for i := from; i < uint64(len(all)); i++ {
			patches = append(patches, waBinary.Node{Tag: "patch", Content: all[i]})
		}
		n.mu.Unlock()
		out = append(out, waBinary.Node{Tag: "collection", Attrs: waBinary.Attrs{"name": name, "version": len(all)},
			Content: []waBinary.Node{{Tag: "patches", Content: patches}}})
	}
	return []waBinary.Node{{Tag: "sync", Content: out}}, nil
}

// storePatch stamps an uploaded patch with the collection's next version,
// keeps it, and applies what the network understands of it (the push name).
func (n *Network) storePatch(acct *account, name string, raw []byte) (uint64, error) {
	var patch waServerSync.SyncdPatch
	if err := proto.Unmarshal(raw, &patch); err != nil {
		return 0, err
	}
	n.mu.Lock()
	st := acct.appState
	version := uint64(len(st.collections[name]) + 1)
	patch.Version = &waServerSync.SyncdVersion{Version: proto.Uint64(version)}
	stamped, err := proto.Marshal(&patch)
	if err != nil {
		n.mu.Unlock()
		return 0, err
	}
	st.collections[name] = append(st.collections[name], stamped)
	n.mu.Unlock()
	for _, m := range patch.GetMutations() {
		action, err := decryptMutation(st, m)
		if err != nil {
			n.log.Warn("wafake: undecryptable app state mutation", "err", err)
			continue
		}
		if pn := action.GetValue().GetPushNameSetting(); pn != nil {
			n.mu.Lock()
			acct.pushName = pn.GetName()
			n.mu.Unlock()
		}
	}
	return version, nil
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

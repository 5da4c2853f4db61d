package wafake

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"go.mau.fi/whatsmeow/appstate"
	"go.mau.fi/whatsmeow/appstate/lthash"
	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waServerSync"
	"go.mau.fi/whatsmeow/proto/waSyncAction"
	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/types"
	waLog "go.mau.fi/whatsmeow/util/log"
	"google.golang.org/protobuf/proto"
)

// The phone's own app state writes: what the user does on the phone to
// chats, messages, contacts and labels becomes a patch the account's linked
// devices fetch (server_sync), decrypt and verify, exactly as a patch one of
// them uploaded. A patch's MACs chain from the LTHash of every record the
// collection holds, so the network keeps that hash for each collection as
// patches arrive, from devices and from the phone alike, and the phone
// builds its patches on it with whatsmeow's own encoder.

// collectionIntegrity is the LTHash of a collection's current records and
// each record's value MAC, by index MAC.
type collectionIntegrity struct {
	hash [128]byte
	macs map[string][]byte
}

// integrityLocked returns the integrity of collection name. n.mu must be
// held.
func (st *appState) integrityLocked(name string) *collectionIntegrity {
	ci := st.integrity[name]
	if ci == nil {
		ci = &collectionIntegrity{macs: map[string][]byte{}}
		st.integrity[name] = ci
	}
	return ci
}

// keepLocked stamps patch with the collection's next version, keeps it, and
// folds its mutations into the collection's LTHash the way a device that
// replays it does: a record set again or removed takes its earlier value
// out, a record set puts its new value in. n.mu must be held.
func (st *appState) keepLocked(name string, patch *waServerSync.SyncdPatch) (uint64, error) {
	all := st.collections[name]
	version := uint64(len(all)) + 1
	patch.Version = &waServerSync.SyncdVersion{Version: proto.Uint64(version)}
	stamped, err := proto.Marshal(patch)
	if err != nil {
		return 0, err
	}
	ci := st.integrityLocked(name)
	var added, removed [][]byte
	for _, m := range patch.GetMutations() {
		index := string(m.GetRecord().GetIndex().GetBlob())
		if prev, ok := ci.macs[index]; ok {
			removed = append(removed, prev)
			delete(ci.macs, index)
		}
		if m.GetOperation() == waServerSync.SyncdMutation_SET {
			blob := m.GetRecord().GetValue().GetBlob()
			if len(blob) < 32 {
				return 0, errors.New("wafake: app state mutation without a value MAC")
			}
			mac := bytes.Clone(blob[len(blob)-32:])
			added = append(added, mac)
			ci.macs[index] = mac
		}
	}
	lthash.WAPatchIntegrity.SubtractThenAddInPlace(ci.hash[:], removed, added)
	st.collections[name] = append(all, stamped)
	return version, nil
}

// phoneKeys is the phone's view of its app state for whatsmeow's encoder:
// the account's sync key and the value MACs of one collection. Only the
// reads the encoder makes are served.
type phoneKeys struct {
	st *appState
	ci *collectionIntegrity
}

var errPhoneKeysReadOnly = errors.New("wafake: the phone's app state view is read-only")

func (p phoneKeys) GetAppStateSyncKey(_ context.Context, id []byte) (*store.AppStateSyncKey, error) {
	if !bytes.Equal(id, p.st.keyID) {
		return nil, nil
	}
	return &store.AppStateSyncKey{Data: p.st.keyData}, nil
}

func (p phoneKeys) GetAppStateMutationMAC(_ context.Context, _ string, indexMAC []byte) ([]byte, error) {
	return p.ci.macs[string(indexMAC)], nil
}

func (p phoneKeys) PutAppStateSyncKey(context.Context, []byte, store.AppStateSyncKey) error {
	return errPhoneKeysReadOnly
}
func (p phoneKeys) GetLatestAppStateSyncKeyID(context.Context) ([]byte, error) {
	return p.st.keyID, nil
}
func (p phoneKeys) GetAllAppStateSyncKeys(ctx context.Context) ([]*store.AppStateSyncKey, error) {
	k, _ := p.GetAppStateSyncKey(ctx, p.st.keyID)
	return []*store.AppStateSyncKey{k}, nil
}
func (p phoneKeys) PutAppStateVersion(context.Context, string, uint64, [128]byte) error {
	return errPhoneKeysReadOnly
}
func (p phoneKeys) GetAppStateVersion(context.Context, string) (uint64, [128]byte, error) {
	return 0, [128]byte{}, errPhoneKeysReadOnly
}
func (p phoneKeys) DeleteAppStateVersion(context.Context, string) error { return errPhoneKeysReadOnly }
func (p phoneKeys) PutAppStateMutationMACs(context.Context, string, uint64, []store.AppStateMutationMAC) error {
	return errPhoneKeysReadOnly
}
func (p phoneKeys) DeleteAppStateMutationMACs(context.Context, string, [][]byte) error {
	return errPhoneKeysReadOnly
}

// phonePatchLocked builds the phone's patch of info on the collection's
// current state and keeps it; it returns the new version. n.mu must be held
// (the encoder only computes: it reads the phone's view, nothing else).
func (n *Network) phonePatchLocked(a *account, info appstate.PatchInfo) (uint64, error) {
	st := a.appState
	name := string(info.Type)
	ci := st.integrityLocked(name)
	proc := appstate.NewProcessor(&store.Device{AppStateKeys: phoneKeys{st, ci}, AppState: phoneKeys{st, ci}}, waLog.Noop)
	base := appstate.HashState{Version: uint64(len(st.collections[name])), Hash: ci.hash}
	raw, err := proc.EncodePatch(context.Background(), st.keyID, base, info)
	if err != nil {
		return 0, fmt.Errorf("wafake: encode the phone's %s patch: %w", name, err)
	}
	var patch waServerSync.SyncdPatch
	if err := proto.Unmarshal(raw, &patch); err != nil {
		return 0, err
	}
	return st.keepLocked(name, &patch)
}

// writeAppState is the phone of account phone writing info to its app
// state; every linked device is told (server_sync) and fetches the patch.
func (n *Network) writeAppState(phone string, info appstate.PatchInfo) error {
	return n.writeAppStateWith(phone, info, nil)
}

// writeAppStateWith is writeAppState that also applies what the network
// understands of the patch (apply, may be nil) in the step that keeps it.
func (n *Network) writeAppStateWith(phone string, info appstate.PatchInfo, apply func(*account)) error {
	n.mu.Lock()
	a, err := n.accountLocked(phone)
	if err != nil {
		n.mu.Unlock()
		return err
	}
	version, err := n.phonePatchLocked(a, info)
	if err == nil && apply != nil {
		apply(a)
	}
	to := linkedLocked(a, nil)
	n.mu.Unlock()
	if err != nil {
		return err
	}
	n.notify(to, types.ServerJID, "server_sync", []waBinary.Node{{Tag: "collection", Attrs: waBinary.Attrs{"name": string(info.Type), "version": version}}})
	return nil
}

// seededCollections are the collections the phone writes a first record
// to when the account links its first device. A real account always has
// state there; an empty collection would be fetched by a new device as a
// full sync at its first change, and whatsmeow applies full syncs without
// emitting events, so the phone's first change of each would go unseen.
// critical_block (the push name) is left as it is: the devices write it.
var seededCollections = []appstate.WAPatchName{
	appstate.WAPatchRegular, appstate.WAPatchRegularLow, appstate.WAPatchRegularHigh, appstate.WAPatchCriticalUnblockLow,
}

// seedAppStateLocked writes the phone's version record (primary_version,
// which whatsmeow keeps without acting on it) to each seeded collection
// that is still empty. n.mu must be held; no device has the key yet, so
// none is told.
func (n *Network) seedAppStateLocked(a *account) error {
	for _, name := range seededCollections {
		if len(a.appState.collections[string(name)]) > 0 {
			continue
		}
		_, err := n.phonePatchLocked(a, appstate.PatchInfo{Type: name, Mutations: []appstate.MutationInfo{{
			Index: []string{appstate.IndexPrimaryVersion}, Version: 7,
			Value: &waSyncAction.SyncActionValue{PrimaryVersionAction: &waSyncAction.PrimaryVersionAction{Version: proto.String(phoneAppVersion)}},
		}}})
		if err != nil {
			return err
		}
	}
	return nil
}

// phoneAppVersion is the WhatsApp version the simulated phones run.
const phoneAppVersion = "2.25.21.80"

// MessageKey names a message in a chat of the phone: its id, whether the
// account sent it, and in a group who sent it (empty otherwise).
type MessageKey struct {
	ID     string
	FromMe bool
	Sender types.JID
}

// indexParts are the fromMe and sender parts of a message's app state
// index: "1"/"0", and the sender's JID in a group ("0" otherwise).
func (k MessageKey) indexParts() (string, string) {
	fromMe, sender := "0", "0"
	if k.FromMe {
		fromMe = "1"
	}
	if !k.Sender.IsEmpty() {
		sender = k.Sender.ToNonAD().String()
	}
	return fromMe, sender
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// ArchiveChat is the phone of account phone archiving (or unarchiving)
// chat. Archiving also unpins it, as the apps do.
func (n *Network) ArchiveChat(phone string, chat types.JID, archived bool) error {
	return n.writeAppState(phone, appstate.BuildArchive(chat, archived, time.Time{}, nil))
}

// PinChat is the phone pinning (or unpinning) chat.
func (n *Network) PinChat(phone string, chat types.JID, pinned bool) error {
	return n.writeAppState(phone, appstate.BuildPin(chat, pinned))
}

// MuteChat is the phone muting chat until the given time (zero: for ever),
// or unmuting it (muted false).
func (n *Network) MuteChat(phone string, chat types.JID, muted bool, until time.Time) error {
	var end *int64
	if muted && !until.IsZero() {
		end = proto.Int64(until.UnixMilli())
	}
	return n.writeAppState(phone, appstate.BuildMuteAbs(chat, muted, end))
}

// MarkChatRead is the phone marking chat read (or unread).
func (n *Network) MarkChatRead(phone string, chat types.JID, read bool) error {
	return n.writeAppState(phone, appstate.BuildMarkChatAsRead(chat, read, time.Time{}, nil))
}

// ClearChat is the phone clearing the messages of chat; the chat stays.
func (n *Network) ClearChat(phone string, chat types.JID, deleteMedia bool) error {
	return n.writeAppState(phone, appstate.PatchInfo{Type: appstate.WAPatchRegularHigh, Mutations: []appstate.MutationInfo{{
		// [clearChat, chat, starred messages deleted too, media deleted too]
		Index: []string{appstate.IndexClearChat, chat.String(), "0", flag(deleteMedia)}, Version: 6,
		Value: &waSyncAction.SyncActionValue{ClearChatAction: &waSyncAction.ClearChatAction{
			MessageRange: &waSyncAction.SyncActionMessageRange{LastMessageTimestamp: proto.Int64(time.Now().Unix())},
		}},
	}}})
}

// DeleteChat is the phone deleting chat.
func (n *Network) DeleteChat(phone string, chat types.JID, deleteMedia bool) error {
	return n.writeAppState(phone, appstate.BuildDeleteChat(chat, time.Time{}, nil, deleteMedia))
}

// DeleteMessageForMe is the phone deleting a message of chat for itself
// only.
func (n *Network) DeleteMessageForMe(phone string, chat types.JID, msg MessageKey, deleteMedia bool) error {
	fromMe, sender := msg.indexParts()
	return n.writeAppState(phone, appstate.PatchInfo{Type: appstate.WAPatchRegularHigh, Mutations: []appstate.MutationInfo{{
		Index: []string{appstate.IndexDeleteMessageForMe, chat.String(), msg.ID, fromMe, sender}, Version: 3,
		Value: &waSyncAction.SyncActionValue{DeleteMessageForMeAction: &waSyncAction.DeleteMessageForMeAction{
			DeleteMedia: proto.Bool(deleteMedia), MessageTimestamp: proto.Int64(time.Now().Unix()),
		}},
	}}})
}

// StarMessage is the phone starring (or unstarring) a message of chat.
func (n *Network) StarMessage(phone string, chat types.JID, msg MessageKey, starred bool) error {
	fromMe, sender := msg.indexParts()
	return n.writeAppState(phone, appstate.PatchInfo{Type: appstate.WAPatchRegularHigh, Mutations: []appstate.MutationInfo{{
		Index: []string{appstate.IndexStar, chat.String(), msg.ID, fromMe, sender}, Version: 2,
		Value: &waSyncAction.SyncActionValue{StarAction: &waSyncAction.StarAction{Starred: proto.Bool(starred)}},
	}}})
}

// EditContact is the phone saving contact (a phone number of the
// simulated world) in its address book under fullName and firstName.
func (n *Network) EditContact(phone, contact, fullName, firstName string) error {
	if err := ValidPhone(contact); err != nil {
		return err
	}
	n.mu.Lock()
	c, err := n.accountLocked(contact)
	n.mu.Unlock()
	if err != nil {
		return err
	}
	jid := pnJID(contact)
	return n.writeAppState(phone, appstate.PatchInfo{Type: appstate.WAPatchCriticalUnblockLow, Mutations: []appstate.MutationInfo{{
		Index: []string{appstate.IndexContact, jid.String()}, Version: 2,
		Value: &waSyncAction.SyncActionValue{ContactAction: &waSyncAction.ContactAction{
			FullName: proto.String(fullName), FirstName: proto.String(firstName),
			LidJID:                   proto.String(types.NewJID(c.lid, types.HiddenUserServer).String()),
			PnJID:                    proto.String(jid.String()),
			SaveOnPrimaryAddressbook: proto.Bool(true),
		}},
	}}})
}

// EditLabel is the phone creating, changing or deleting label id
// (WhatsApp Business).
func (n *Network) EditLabel(phone, id, name string, color int32, deleted bool) error {
	return n.writeAppState(phone, appstate.BuildLabelEdit(id, name, color, deleted))
}

// LabelChat is the phone putting label id on chat (or taking it off).
func (n *Network) LabelChat(phone, id string, chat types.JID, labeled bool) error {
	return n.writeAppState(phone, appstate.BuildLabelChat(chat, id, labeled))
}

// LabelMessage is the phone putting label id on a message of chat (or
// taking it off).
func (n *Network) LabelMessage(phone, id string, chat types.JID, messageID string, labeled bool) error {
	return n.writeAppState(phone, appstate.BuildLabelMessage(chat, id, messageID, labeled))
}

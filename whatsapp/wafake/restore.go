package wafake

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/util/keys"
	"google.golang.org/protobuf/proto"
)

// The way back from network.json (persist.go): a world taken over by a new
// network before it serves.

// restore takes over a world read from disk, before the network serves.
func (n *Network) restore(st *stateFile) error {
	if len(st.Static) != 32 {
		return errors.New("staticKey is not 32 bytes")
	}
	n.static = keys.NewKeyPairFromPrivateKey([32]byte(st.Static))
	n.ids.Store(st.IDs)
	n.lidSeq = st.LIDSeq
	for _, af := range st.Accounts {
		a, err := n.restoreAccount(af)
		if err != nil {
			return fmt.Errorf("account %s: %w", af.Phone, err)
		}
		n.accounts[a.phone] = a
	}
	for _, gf := range st.Groups {
		if n.groups.byID == nil {
			n.groups.byID = map[string]*group{}
		}
		n.groups.byID[gf.ID] = restoreGroup(gf)
	}
	n.version.minimum = st.MinVersion
	n.media.auth = st.MediaAuth
	n.media.files = st.Media
	for id, p := range st.Polls {
		if n.polls.polls == nil {
			n.polls.polls = map[string]pollRecord{}
		}
		n.polls.polls[id] = pollRecord{secret: p.Secret, creator: p.Creator}
	}
	for id, r := range st.Retries {
		blob, err := os.ReadFile(filepath.Join(n.media.dir, r.Blob))
		if err != nil {
			n.log.Warn("wafake: a phone's media for retries is gone", "id", id, "err", err)
			continue
		}
		if n.retries.sent == nil {
			n.retries.sent = map[string]sentMedia{}
		}
		n.retries.sent[id] = sentMedia{mediaKey: r.MediaKey, blob: blob, path: r.Path}
	}
	return nil
}

func (n *Network) restoreAccount(af accountFile) (*account, error) {
	sig := af.Signal
	if len(sig.Identity) != 32 {
		return nil, errors.New("identityKey is not 32 bytes")
	}
	id := keys.NewKeyPairFromPrivateKey([32]byte(sig.Identity))
	signed, err := restorePreKey(sig.Signed)
	if err != nil {
		return nil, fmt.Errorf("signed prekey: %w", err)
	}
	ps := &signalStore{
		identity: id, regID: sig.RegID, signed: signed, identities: map[string][32]byte{}, prekeys: map[uint32]*keys.PreKey{},
		nextPreKey: sig.NextPreKey, sessions: orEmpty(sig.Sessions), senderKeys: orEmpty(sig.SenderKeys), gen: &n.mu.gen,
	}
	for addr, k := range sig.Identities {
		if len(k) != 32 {
			return nil, fmt.Errorf("identity of %s is not 32 bytes", addr)
		}
		ps.identities[addr] = [32]byte(k)
	}
	for _, pf := range sig.PreKeys {
		k, err := restorePreKey(pf)
		if err != nil {
			return nil, fmt.Errorf("prekey %d: %w", pf.ID, err)
		}
		ps.prekeys[k.KeyID] = k
	}
	a := &account{
		phone: af.Phone, lid: af.LID, identity: id, devices: map[uint16]*companion{}, nextDev: af.NextDev,
		phoneDev: ps, state: restoreAccountState(af.State), pushName: af.PushName,
	}
	if a.appState, err = restoreAppState(af.AppState); err != nil {
		return nil, err
	}
	for _, raw := range af.Inbox {
		var rf receivedFile
		if err := json.Unmarshal(raw, &rf); err != nil {
			return nil, fmt.Errorf("inbox: %w", err)
		}
		var msg waE2E.Message
		if err := proto.Unmarshal(rf.Message, &msg); err != nil {
			return nil, fmt.Errorf("inbox message %s: %w", rf.ID, err)
		}
		a.inbox = append(a.inbox, Received{ID: rf.ID, From: parseJID(rf.From), Chat: parseJID(rf.Chat), To: parseJID(rf.To), Message: &msg, Timestamp: rf.Timestamp})
		a.inboxRaw = append(a.inboxRaw, raw)
	}
	for _, cf := range af.Devices {
		c, err := restoreCompanion(a, cf)
		if err != nil {
			return nil, fmt.Errorf("device %d: %w", cf.Device, err)
		}
		a.devices[c.device] = c
	}
	return a, nil
}

func restoreCompanion(a *account, cf companionFile) (*companion, error) {
	if len(cf.NoisePub) != 32 || len(cf.Identity) != 32 || len(cf.SignedPub) != 32 || len(cf.SignedSig) != 64 {
		return nil, errors.New("a key is not of its size")
	}
	c := &companion{
		acct: a, device: cf.Device, noisePub: [32]byte(cf.NoisePub), identity: [32]byte(cf.Identity), regID: cf.RegID,
		signed:  signedPreKey{id: cf.SignedID, pub: [32]byte(cf.SignedPub), sig: [64]byte(cf.SignedSig)},
		prekeys: map[uint32][32]byte{}, queued: cf.Queued, keyShared: cf.KeyShared, fetched: map[string]bool{},
	}
	for id, pub := range cf.PreKeys {
		if len(pub) != 32 {
			return nil, fmt.Errorf("prekey %d is not 32 bytes", id)
		}
		c.prekeys[id] = [32]byte(pub)
	}
	for _, qf := range cf.Unacked {
		// Marshal's output starts with the frame's flags byte, as sent.
		data, err := waBinary.Unpack(qf.Node)
		if err != nil {
			return nil, fmt.Errorf("queued stanza %s: %w", qf.ID, err)
		}
		node, err := waBinary.Unmarshal(data)
		if err != nil {
			return nil, fmt.Errorf("queued stanza %s: %w", qf.ID, err)
		}
		c.unacked = append(c.unacked, queued{id: qf.ID, node: *node, seq: qf.Seq, raw: qf.Node})
	}
	for _, name := range cf.Fetched {
		c.fetched[name] = true
	}
	return c, nil
}

func restorePreKey(pf preKeyFile) (*keys.PreKey, error) {
	if len(pf.Priv) != 32 || (pf.Signature != nil && len(pf.Signature) != 64) {
		return nil, errors.New("a key is not of its size")
	}
	k := &keys.PreKey{KeyPair: *keys.NewKeyPairFromPrivateKey([32]byte(pf.Priv)), KeyID: pf.ID}
	if pf.Signature != nil {
		sig := [64]byte(pf.Signature)
		k.Signature = &sig
	}
	return k, nil
}

func restoreAccountState(sf accountStateFile) accountState {
	s := accountState{
		pushName: sf.PushName, disappearing: sf.Disappearing, about: sf.About, picture: sf.Picture,
		pictureID: sf.PictureID, businessName: sf.BusinessName, trusted: sf.Trusted,
		reachoutUntil: sf.Reachout,
	}
	for _, phone := range sf.Contacted {
		if s.contacted == nil {
			s.contacted = map[string]bool{}
		}
		s.contacted[phone] = true
	}
	for name, v := range sf.Privacy {
		if s.privacy == nil {
			s.privacy = map[types.PrivacySettingType]types.PrivacySetting{}
		}
		s.privacy[types.PrivacySettingType(name)] = types.PrivacySetting(v)
	}
	for _, j := range sf.Blocked {
		s.blocked = append(s.blocked, parseJID(j))
	}
	for _, r := range sf.Receipts {
		s.receipts = append(s.receipts, ReceiptInfo{From: parseJID(r.From), Chat: parseJID(r.Chat), MessageIDs: r.MessageIDs, Type: types.ReceiptType(r.Type), Timestamp: r.Timestamp})
	}
	if sf.Available != nil {
		s.presence = &presenceState{available: *sf.Available, last: sf.LastSeen}
	}
	return s
}

func restoreAppState(af appStateFile) (*appState, error) {
	st := &appState{keyID: af.KeyID, keyData: af.KeyData, collections: map[string][][]byte{}, integrity: map[string]*collectionIntegrity{}}
	if len(st.keyID) == 0 || len(st.keyData) != 32 {
		return nil, errors.New("app state key missing")
	}
	maps.Copy(st.collections, af.Collections)
	for name, inf := range af.Integrity {
		if len(inf.Hash) != 128 {
			return nil, fmt.Errorf("app state %s: hash is not 128 bytes", name)
		}
		ci := &collectionIntegrity{hash: [128]byte(inf.Hash), macs: map[string][]byte{}}
		for _, m := range inf.MACs {
			ci.macs[string(m.Index)] = m.MAC
		}
		st.integrity[name] = ci
	}
	return st, nil
}

func restoreGroup(gf groupFile) *group {
	g := &group{
		id: gf.ID, created: gf.Created, creator: gf.Creator, subject: gf.Subject, subjectAt: gf.SubjectAt, subjectBy: gf.SubjectBy,
		desc: gf.Desc, descID: gf.DescID, descAt: gf.DescAt, descBy: gf.DescBy, announce: gf.Announce, locked: gf.Locked,
		ephemeral: gf.Ephemeral, invite: gf.Invite, picture: groupPicture{id: gf.PictureID, jpeg: gf.Picture}, version: gf.Version,
		approval: gf.Approval, requests: gf.Requests, requestedAt: gf.RequestedAt,
		allAdd: gf.AllAdd, revoked: gf.Revoked,
	}
	for _, m := range gf.Members {
		g.members = append(g.members, groupMember{phone: m.Phone, role: m.Role})
	}
	return g
}

// parseJID reads a JID jidString wrote; "" is the empty JID.
func parseJID(s string) types.JID {
	if s == "" {
		return types.JID{}
	}
	j, err := types.ParseJID(s)
	if err != nil {
		return types.JID{}
	}
	return j
}

package wafake

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/util/keys"
	"google.golang.org/protobuf/proto"
)

// What the network keeps across restarts (statefile.go writes it): every
// account with its phone's Signal state (identity, prekeys, sessions,
// sender keys), its linked devices (keys, uploaded prekeys, the stanzas
// they have not acknowledged), its inbox, settings, receipts and app
// state; the LID sequence; groups; polls' secrets; the phones' media for
// retries; the media host's index; the minimum client version; the
// server's static key and the id counter. Not kept: connections, pairings
// under way, presence subscriptions (WhatsApp drops those with the
// connection too) and the connection counts.

// stateVersion is the layout of network.json; a network refuses another.
const stateVersion = 1

type (
	stateFile struct {
		Version    int                      `json:"version"`
		SavedAt    time.Time                `json:"savedAt"`
		Static     []byte                   `json:"staticKey"` // the Noise static private key
		IDs        uint64                   `json:"ids"`
		LIDSeq     uint64                   `json:"lidSeq"`
		MinVersion store.WAVersionContainer `json:"minimumClientVersion"`
		MediaAuth  string                   `json:"mediaAuth,omitempty"`
		Media      map[string]string        `json:"media,omitempty"` // path → blob file
		Accounts   []accountFile            `json:"accounts"`
		Groups     []groupFile              `json:"groups,omitempty"`
		Polls      map[string]pollFile      `json:"polls,omitempty"`
		Retries    map[string]retryFile     `json:"mediaRetries,omitempty"`
	}
	accountFile struct {
		Phone    string            `json:"phone"`
		LID      string            `json:"lid"`
		NextDev  uint16            `json:"nextDevice"`
		Signal   signalFile        `json:"signal"` // the phone as a Signal device
		Devices  []companionFile   `json:"devices,omitempty"`
		Inbox    []json.RawMessage `json:"inbox,omitempty"` // receivedFile
		State    accountStateFile  `json:"state"`
		AppState appStateFile      `json:"appState"`
		PushName string            `json:"pushName,omitempty"`
	}
	signalFile struct {
		Identity   []byte            `json:"identityKey"` // private
		RegID      uint32            `json:"registrationId"`
		Signed     preKeyFile        `json:"signedPreKey"`
		Identities map[string][]byte `json:"identities,omitempty"`
		PreKeys    []preKeyFile      `json:"preKeys,omitempty"`
		NextPreKey uint32            `json:"nextPreKey"`
		Sessions   map[string][]byte `json:"sessions,omitempty"`
		SenderKeys map[string][]byte `json:"senderKeys,omitempty"`
	}
	preKeyFile struct {
		ID        uint32 `json:"id"`
		Priv      []byte `json:"key"`
		Signature []byte `json:"signature,omitempty"`
	}
	companionFile struct {
		Device    uint16            `json:"device"`
		NoisePub  []byte            `json:"noiseKey"`
		Identity  []byte            `json:"identityKey"`
		RegID     uint32            `json:"registrationId"`
		SignedID  uint32            `json:"signedPreKeyId"`
		SignedPub []byte            `json:"signedPreKey"`
		SignedSig []byte            `json:"signedPreKeySignature"`
		PreKeys   map[uint32][]byte `json:"preKeys,omitempty"`
		Unacked   []queuedFile      `json:"unacked,omitempty"`
		Queued    uint64            `json:"queued"`
		KeyShared bool              `json:"keyShared"`
		Fetched   []string          `json:"fetched,omitempty"`
	}
	queuedFile struct {
		ID   string `json:"id"`
		Node []byte `json:"node"` // binary XML
		Seq  uint64 `json:"seq"`
	}
	receivedFile struct {
		ID        string    `json:"id"`
		From      string    `json:"from"`
		Chat      string    `json:"chat"`
		To        string    `json:"to,omitempty"`
		Message   []byte    `json:"message"` // waE2E.Message
		Timestamp time.Time `json:"t"`
	}
	accountStateFile struct {
		PushName     string               `json:"pushName,omitempty"`
		Privacy      map[string]string    `json:"privacy,omitempty"`
		Disappearing uint32               `json:"disappearing,omitempty"`
		About        string               `json:"about,omitempty"`
		Picture      []byte               `json:"picture,omitempty"`
		PictureID    string               `json:"pictureId,omitempty"`
		BusinessName string               `json:"businessName,omitempty"`
		Blocked      []string             `json:"blocked,omitempty"`
		Receipts     []receiptFile        `json:"receipts,omitempty"`
		Available    *bool                `json:"available,omitempty"`
		LastSeen     time.Time            `json:"lastSeen,omitzero"`
		Trusted      map[string]time.Time `json:"trusted,omitempty"`
		Reachout     time.Time            `json:"reachoutTimelockUntil,omitzero"`
		Contacted    []string             `json:"contacted,omitempty"`
	}
	receiptFile struct {
		From       string    `json:"from"`
		Chat       string    `json:"chat"`
		MessageIDs []string  `json:"ids"`
		Type       string    `json:"type,omitempty"`
		Timestamp  time.Time `json:"t"`
	}
	appStateFile struct {
		KeyID       []byte                   `json:"keyId"`
		KeyData     []byte                   `json:"keyData"`
		Collections map[string][][]byte      `json:"collections,omitempty"`
		Integrity   map[string]integrityFile `json:"integrity,omitempty"`
	}
	integrityFile struct {
		Hash []byte    `json:"hash"`
		MACs []macFile `json:"macs,omitempty"`
	}
	macFile struct {
		Index []byte `json:"index"`
		MAC   []byte `json:"mac"`
	}
	groupFile struct {
		ID        string       `json:"id"`
		Created   time.Time    `json:"created"`
		Creator   string       `json:"creator"`
		Subject   string       `json:"subject"`
		SubjectAt time.Time    `json:"subjectAt"`
		SubjectBy string       `json:"subjectBy,omitempty"`
		Desc      string       `json:"description,omitempty"`
		DescID    string       `json:"descriptionId,omitempty"`
		DescAt    time.Time    `json:"descriptionAt,omitzero"`
		DescBy    string       `json:"descriptionBy,omitempty"`
		Announce  bool         `json:"announce,omitempty"`
		Locked    bool         `json:"locked,omitempty"`
		Ephemeral uint32       `json:"ephemeral,omitempty"`
		Invite    string       `json:"invite,omitempty"`
		PictureID string       `json:"pictureId,omitempty"`
		Picture   []byte       `json:"picture,omitempty"`
		Version   int          `json:"version"`
		Members   []memberFile `json:"members"`
		Approval  bool         `json:"approval,omitempty"`
		Requests  []string     `json:"requests,omitempty"`
		// RequestedAt is when each request was made, by phone.
		RequestedAt map[string]time.Time `json:"requestedAt,omitempty"`
		AllAdd      bool                 `json:"allMembersAdd,omitempty"`
		Revoked     []string             `json:"revokedInvites,omitempty"`
	}
	memberFile struct {
		Phone string `json:"phone"`
		Role  string `json:"role"`
	}
	pollFile struct {
		Secret  []byte `json:"secret"`
		Creator string `json:"creator"`
	}
	retryFile struct {
		MediaKey []byte `json:"mediaKey"`
		Blob     string `json:"blob"` // its file in media/
		Path     string `json:"path"`
	}
)

// snapshot copies the world, consistent as of one moment, and returns it
// with the change count it holds (that of the moment, plus its own unlock).
func (n *Network) snapshot() (*stateFile, uint64, error) {
	n.mu.Lock()
	gen := n.mu.gen.Load()
	st := &stateFile{
		Version: stateVersion, SavedAt: time.Now().UTC(), Static: slices.Clone(n.static.Priv[:]),
		IDs: n.ids.Load(), LIDSeq: n.lidSeq, Accounts: make([]accountFile, 0, len(n.accounts)),
	}
	var err error
	for _, phone := range slices.Sorted(maps.Keys(n.accounts)) {
		var af accountFile
		if af, err = saveAccount(n.accounts[phone]); err != nil {
			break
		}
		st.Accounts = append(st.Accounts, af)
	}
	for _, id := range slices.Sorted(maps.Keys(n.groups.byID)) {
		st.Groups = append(st.Groups, saveGroup(n.groups.byID[id]))
	}
	n.version.mu.Lock()
	st.MinVersion = n.version.minimum
	n.version.mu.Unlock()
	n.media.mu.Lock()
	st.MediaAuth, st.Media = n.media.auth, maps.Clone(n.media.files)
	n.media.mu.Unlock()
	n.polls.mu.Lock()
	for id, p := range n.polls.polls {
		if st.Polls == nil {
			st.Polls = map[string]pollFile{}
		}
		st.Polls[id] = pollFile{Secret: p.secret, Creator: p.creator}
	}
	n.polls.mu.Unlock()
	n.retries.mu.Lock()
	for id, m := range n.retries.sent {
		if st.Retries == nil {
			st.Retries = map[string]retryFile{}
		}
		sum := sha256.Sum256(m.blob)
		st.Retries[id] = retryFile{MediaKey: m.mediaKey, Blob: hex.EncodeToString(sum[:]), Path: m.path}
	}
	n.retries.mu.Unlock()
	n.mu.Unlock()
	if err != nil {
		return nil, 0, err
	}
	return st, gen + 1, nil
}

// saveAccount copies an account. n.mu must be held; the encodings of its
// inbox and queues are kept, as those only grow or shrink.
func saveAccount(a *account) (accountFile, error) {
	af := accountFile{
		Phone: a.phone, LID: a.lid, NextDev: a.nextDev, Signal: saveSignal(a.phoneDev),
		State: saveAccountState(&a.state), AppState: saveAppState(a.appState), PushName: a.pushName,
	}
	for i := len(a.inboxRaw); i < len(a.inbox); i++ {
		r := a.inbox[i]
		msg, err := proto.Marshal(r.Message)
		if err != nil {
			return af, fmt.Errorf("encode message %s of %s: %w", r.ID, a.phone, err)
		}
		raw, err := jsonOf(receivedFile{ID: r.ID, From: jidString(r.From), Chat: jidString(r.Chat), To: jidString(r.To), Message: msg, Timestamp: r.Timestamp})
		if err != nil {
			return af, err
		}
		a.inboxRaw = append(a.inboxRaw, raw)
	}
	af.Inbox = slices.Clone(a.inboxRaw)
	for _, d := range slices.Sorted(maps.Keys(a.devices)) {
		c := a.devices[d]
		cf := companionFile{
			Device: c.device, NoisePub: slices.Clone(c.noisePub[:]), Identity: slices.Clone(c.identity[:]), RegID: c.regID,
			SignedID: c.signed.id, SignedPub: slices.Clone(c.signed.pub[:]), SignedSig: slices.Clone(c.signed.sig[:]),
			PreKeys: map[uint32][]byte{}, Queued: c.queued, KeyShared: c.keyShared,
		}
		for id, pub := range c.prekeys {
			cf.PreKeys[id] = slices.Clone(pub[:])
		}
		for i := range c.unacked {
			q := &c.unacked[i]
			if q.raw == nil {
				raw, err := marshalNode(q.node)
				if err != nil {
					return af, err
				}
				q.raw = raw
			}
			cf.Unacked = append(cf.Unacked, queuedFile{ID: q.id, Node: q.raw, Seq: q.seq})
		}
		for name, ok := range c.fetched {
			if ok {
				cf.Fetched = append(cf.Fetched, name)
			}
		}
		slices.Sort(cf.Fetched)
		af.Devices = append(af.Devices, cf)
	}
	return af, nil
}

// marshalNode encodes a queued stanza; the encoder panics on attribute
// types it does not know, which no queued stanza has (it was sent).
func marshalNode(node waBinary.Node) (raw []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("encode a queued %s: %v", node.Tag, r)
		}
	}()
	return waBinary.Marshal(node)
}

func saveSignal(s *signalStore) signalFile {
	s.mu.Lock()
	defer s.mu.Unlock()
	sf := signalFile{
		Identity: slices.Clone(s.identity.Priv[:]), RegID: s.regID, Signed: savePreKey(s.signed),
		Identities: map[string][]byte{}, NextPreKey: s.nextPreKey,
		Sessions: maps.Clone(s.sessions), SenderKeys: maps.Clone(s.senderKeys),
	}
	for addr, k := range s.identities {
		sf.Identities[addr] = slices.Clone(k[:])
	}
	for _, id := range slices.Sorted(maps.Keys(s.prekeys)) {
		sf.PreKeys = append(sf.PreKeys, savePreKey(s.prekeys[id]))
	}
	return sf
}

func savePreKey(k *keys.PreKey) preKeyFile {
	pf := preKeyFile{ID: k.KeyID, Priv: slices.Clone(k.Priv[:])}
	if k.Signature != nil {
		pf.Signature = k.Signature[:]
	}
	return pf
}

func saveAccountState(s *accountState) accountStateFile {
	sf := accountStateFile{
		PushName: s.pushName, Disappearing: s.disappearing, About: s.about, Picture: s.picture,
		PictureID: s.pictureID, BusinessName: s.businessName, Trusted: maps.Clone(s.trusted),
		Reachout: s.reachoutUntil, Contacted: slices.Sorted(maps.Keys(s.contacted)),
	}
	for name, v := range s.privacy {
		if sf.Privacy == nil {
			sf.Privacy = map[string]string{}
		}
		sf.Privacy[string(name)] = string(v)
	}
	for _, j := range s.blocked {
		sf.Blocked = append(sf.Blocked, j.String())
	}
	for _, r := range s.receipts {
		sf.Receipts = append(sf.Receipts, receiptFile{From: jidString(r.From), Chat: jidString(r.Chat), MessageIDs: r.MessageIDs, Type: string(r.Type), Timestamp: r.Timestamp})
	}
	if p := s.presence; p != nil {
		available := p.available
		sf.Available, sf.LastSeen = &available, p.last
	}
	return sf
}

func saveAppState(st *appState) appStateFile {
	af := appStateFile{KeyID: st.keyID, KeyData: st.keyData, Collections: map[string][][]byte{}, Integrity: map[string]integrityFile{}}
	for name, patches := range st.collections {
		af.Collections[name] = slices.Clone(patches)
	}
	for name, ci := range st.integrity {
		inf := integrityFile{Hash: slices.Clone(ci.hash[:])}
		for _, idx := range slices.Sorted(maps.Keys(ci.macs)) {
			inf.MACs = append(inf.MACs, macFile{Index: []byte(idx), MAC: ci.macs[idx]})
		}
		af.Integrity[name] = inf
	}
	return af
}

func saveGroup(g *group) groupFile {
	gf := groupFile{
		ID: g.id, Created: g.created, Creator: g.creator, Subject: g.subject, SubjectAt: g.subjectAt, SubjectBy: g.subjectBy,
		Desc: g.desc, DescID: g.descID, DescAt: g.descAt, DescBy: g.descBy, Announce: g.announce, Locked: g.locked,
		Ephemeral: g.ephemeral, Invite: g.invite, PictureID: g.picture.id, Picture: g.picture.jpeg, Version: g.version,
		Approval: g.approval, Requests: slices.Clone(g.requests), RequestedAt: maps.Clone(g.requestedAt),
		AllAdd: g.allAdd, Revoked: slices.Clone(g.revoked),
	}
	for _, m := range g.members {
		gf.Members = append(gf.Members, memberFile{Phone: m.phone, Role: m.role})
	}
	return gf
}

// jsonOf encodes an inbox entry; it is kept encoded (account.inboxRaw).
func jsonOf(v receivedFile) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode message %s: %w", v.ID, err)
	}
	return b, nil
}

func orEmpty(m map[string][]byte) map[string][]byte {
	if m == nil {
		return map[string][]byte{}
	}
	return m
}

func jidString(j types.JID) string {
	if j.IsEmpty() {
		return ""
	}
	return j.String()
}

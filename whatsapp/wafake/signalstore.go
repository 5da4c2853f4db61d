package wafake

import (
	"context"
	"sync"
	"sync/atomic"

	"go.mau.fi/libsignal/ecc"
	grouprecord "go.mau.fi/libsignal/groups/state/record"
	"go.mau.fi/libsignal/keys/identity"
	"go.mau.fi/libsignal/protocol"
	"go.mau.fi/libsignal/state/record"
	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/util/keys"
)

var serializer = store.SignalProtobufSerializer

// signalStore is the Signal state of one simulated device, in memory. Records
// are kept serialized and keyed by address strings: libsignal's test stores
// key by pointer and never find a session again, and a record handed out
// must not change under the store when a decryption fails halfway.
type signalStore struct {
	identity *keys.KeyPair
	regID    uint32
	signed   *keys.PreKey

	mu         sync.Mutex
	identities map[string][32]byte
	prekeys    map[uint32]*keys.PreKey
	nextPreKey uint32
	sessions   map[string][]byte
	senderKeys map[string][]byte
	gen        *atomic.Uint64 // the network's change count (statefile.go)
}

// changedLocked counts a change of the store. s.mu must be held.
func (s *signalStore) changedLocked() {
	if s.gen != nil {
		s.gen.Add(1)
	}
}

func newSignalStore(identityKey *keys.KeyPair, regID uint32) *signalStore {
	return &signalStore{
		identity:   identityKey,
		regID:      regID,
		signed:     identityKey.CreateSignedPreKey(1),
		identities: map[string][32]byte{},
		prekeys:    map[uint32]*keys.PreKey{},
		nextPreKey: 1,
		sessions:   map[string][]byte{},
		senderKeys: map[string][]byte{},
	}
}

// mintPreKey creates a one-time prekey for a bundle.
func (s *signalStore) mintPreKey() *keys.PreKey {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := keys.NewPreKey(s.nextPreKey)
	s.nextPreKey++
	s.prekeys[k.KeyID] = k
	s.changedLocked()
	return k
}

func (s *signalStore) GetIdentityKeyPair() *identity.KeyPair {
	return identity.NewKeyPair(identity.NewKey(ecc.NewDjbECPublicKey(*s.identity.Pub)), ecc.NewDjbECPrivateKey(*s.identity.Priv))
}

func (s *signalStore) GetLocalRegistrationID() uint32 { return s.regID }

func (s *signalStore) SaveIdentity(_ context.Context, addr *protocol.SignalAddress, key *identity.Key) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.identities[addr.String()] = key.PublicKey().PublicKey()
	s.changedLocked()
	return nil
}

// IsTrustedIdentity trusts on first use, and a changed key too: the
// simulated world has no attackers, and a relinked device has a new key.
func (s *signalStore) IsTrustedIdentity(context.Context, *protocol.SignalAddress, *identity.Key) (bool, error) {
	return true, nil
}

func (s *signalStore) LoadPreKey(_ context.Context, id uint32) (*record.PreKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.prekeys[id]
	if k == nil {
		return nil, nil
	}
	return record.NewPreKey(k.KeyID, ecc.NewECKeyPair(ecc.NewDjbECPublicKey(*k.Pub), ecc.NewDjbECPrivateKey(*k.Priv)), nil), nil
}

func (s *signalStore) StorePreKey(context.Context, uint32, *record.PreKey) error { return nil }

func (s *signalStore) ContainsPreKey(_ context.Context, id uint32) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.prekeys[id]
	return ok, nil
}

func (s *signalStore) RemovePreKey(_ context.Context, id uint32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.prekeys, id)
	s.changedLocked()
	return nil
}

func (s *signalStore) LoadSession(_ context.Context, addr *protocol.SignalAddress) (*record.Session, error) {
	s.mu.Lock()
	raw := s.sessions[addr.String()]
	s.mu.Unlock()
	if raw == nil {
		return record.NewSession(serializer.Session, serializer.State), nil
	}
	return record.NewSessionFromBytes(raw, serializer.Session, serializer.State)
}

func (s *signalStore) GetSubDeviceSessions(context.Context, string) ([]uint32, error) {
	return nil, nil
}

func (s *signalStore) StoreSession(_ context.Context, addr *protocol.SignalAddress, r *record.Session) error {
	raw := r.Serialize()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sessions[addr.String()] = raw
	s.changedLocked()
	return nil
}

func (s *signalStore) ContainsSession(_ context.Context, addr *protocol.SignalAddress) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.sessions[addr.String()]
	return ok, nil
}

func (s *signalStore) DeleteSession(_ context.Context, addr *protocol.SignalAddress) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sessions, addr.String())
	s.changedLocked()
	return nil
}

func (s *signalStore) DeleteAllSessions(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sessions = map[string][]byte{}
	s.changedLocked()
	return nil
}

func (s *signalStore) LoadSignedPreKey(_ context.Context, id uint32) (*record.SignedPreKey, error) {
	if id != s.signed.KeyID {
		return nil, nil
	}
	k := s.signed
	return record.NewSignedPreKey(k.KeyID, 0, ecc.NewECKeyPair(ecc.NewDjbECPublicKey(*k.Pub), ecc.NewDjbECPrivateKey(*k.Priv)), *k.Signature, nil), nil
}

func (s *signalStore) LoadSignedPreKeys(ctx context.Context) ([]*record.SignedPreKey, error) {
	k, err := s.LoadSignedPreKey(ctx, s.signed.KeyID)
	return []*record.SignedPreKey{k}, err
}

func (s *signalStore) StoreSignedPreKey(context.Context, uint32, *record.SignedPreKey) error {
	return nil
}

func (s *signalStore) ContainsSignedPreKey(_ context.Context, id uint32) (bool, error) {
	return id == s.signed.KeyID, nil
}

func (s *signalStore) RemoveSignedPreKey(context.Context, uint32) error { return nil }

func (s *signalStore) StoreSenderKey(_ context.Context, name *protocol.SenderKeyName, r *grouprecord.SenderKey) error {
	raw := r.Serialize()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.senderKeys[name.GroupID()+"|"+name.Sender().String()] = raw
	s.changedLocked()
	return nil
}

func (s *signalStore) LoadSenderKey(_ context.Context, name *protocol.SenderKeyName) (*grouprecord.SenderKey, error) {
	s.mu.Lock()
	raw := s.senderKeys[name.GroupID()+"|"+name.Sender().String()]
	s.mu.Unlock()
	if raw == nil {
		return grouprecord.NewSenderKey(serializer.SenderKeyRecord, serializer.SenderKeyState), nil
	}
	return grouprecord.NewSenderKeyFromBytes(raw, serializer.SenderKeyRecord, serializer.SenderKeyState)
}

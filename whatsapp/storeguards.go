package whatsapp

// The wrapped device stores of storefail.go: each call goes through its
// storeGuard, whose errors whatsmeow takes for cancellations.

import (
	"context"
	"time"

	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/util/keys"
)

type guardedIdentities struct {
	store.IdentityStore
	g *storeGuard
}

func (s guardedIdentities) PutIdentity(ctx context.Context, address string, key [32]byte) error {
	return guard(ctx, s.g, func() error { return s.IdentityStore.PutIdentity(ctx, address, key) })
}

func (s guardedIdentities) DeleteAllIdentities(ctx context.Context, phone string) error {
	return guard(ctx, s.g, func() error { return s.IdentityStore.DeleteAllIdentities(ctx, phone) })
}

func (s guardedIdentities) DeleteIdentity(ctx context.Context, address string) error {
	return guard(ctx, s.g, func() error { return s.IdentityStore.DeleteIdentity(ctx, address) })
}

func (s guardedIdentities) IsTrustedIdentity(ctx context.Context, address string, key [32]byte) (bool, error) {
	return guard1(ctx, s.g, func() (bool, error) { return s.IdentityStore.IsTrustedIdentity(ctx, address, key) })
}

type guardedSessions struct {
	store.SessionStore
	g *storeGuard
}

func (s guardedSessions) GetSession(ctx context.Context, address string) ([]byte, error) {
	return guard1(ctx, s.g, func() ([]byte, error) { return s.SessionStore.GetSession(ctx, address) })
}

func (s guardedSessions) HasSession(ctx context.Context, address string) (bool, error) {
	return guard1(ctx, s.g, func() (bool, error) { return s.SessionStore.HasSession(ctx, address) })
}

func (s guardedSessions) GetManySessions(ctx context.Context, addresses []string) (map[string][]byte, error) {
	return guard1(ctx, s.g, func() (map[string][]byte, error) { return s.SessionStore.GetManySessions(ctx, addresses) })
}

func (s guardedSessions) PutSession(ctx context.Context, address string, session []byte) error {
	return guard(ctx, s.g, func() error { return s.SessionStore.PutSession(ctx, address, session) })
}

func (s guardedSessions) PutManySessions(ctx context.Context, sessions map[string][]byte) error {
	return guard(ctx, s.g, func() error { return s.SessionStore.PutManySessions(ctx, sessions) })
}

func (s guardedSessions) DeleteAllSessions(ctx context.Context, phone string) error {
	return guard(ctx, s.g, func() error { return s.SessionStore.DeleteAllSessions(ctx, phone) })
}

func (s guardedSessions) DeleteSession(ctx context.Context, address string) error {
	return guard(ctx, s.g, func() error { return s.SessionStore.DeleteSession(ctx, address) })
}

func (s guardedSessions) MigratePNToLID(ctx context.Context, pn, lid types.JID) error {
	return guard(ctx, s.g, func() error { return s.SessionStore.MigratePNToLID(ctx, pn, lid) })
}

type guardedPreKeys struct {
	store.PreKeyStore
	g *storeGuard
}

func (s guardedPreKeys) GetOrGenPreKeys(ctx context.Context, count uint32) ([]*keys.PreKey, error) {
	return guard1(ctx, s.g, func() ([]*keys.PreKey, error) { return s.PreKeyStore.GetOrGenPreKeys(ctx, count) })
}

func (s guardedPreKeys) GenOnePreKey(ctx context.Context) (*keys.PreKey, error) {
	return guard1(ctx, s.g, func() (*keys.PreKey, error) { return s.PreKeyStore.GenOnePreKey(ctx) })
}

func (s guardedPreKeys) GetPreKey(ctx context.Context, id uint32) (*keys.PreKey, error) {
	return guard1(ctx, s.g, func() (*keys.PreKey, error) { return s.PreKeyStore.GetPreKey(ctx, id) })
}

func (s guardedPreKeys) RemovePreKey(ctx context.Context, id uint32) error {
	return guard(ctx, s.g, func() error { return s.PreKeyStore.RemovePreKey(ctx, id) })
}

func (s guardedPreKeys) MarkPreKeysAsUploaded(ctx context.Context, upToID uint32) error {
	return guard(ctx, s.g, func() error { return s.PreKeyStore.MarkPreKeysAsUploaded(ctx, upToID) })
}

func (s guardedPreKeys) UploadedPreKeyCount(ctx context.Context) (int, error) {
	return guard1(ctx, s.g, func() (int, error) { return s.PreKeyStore.UploadedPreKeyCount(ctx) })
}

type guardedSenderKeys struct {
	store.SenderKeyStore
	g *storeGuard
}

func (s guardedSenderKeys) PutSenderKey(ctx context.Context, group, user string, session []byte) error {
	return guard(ctx, s.g, func() error { return s.SenderKeyStore.PutSenderKey(ctx, group, user, session) })
}

func (s guardedSenderKeys) GetSenderKey(ctx context.Context, group, user string) ([]byte, error) {
	return guard1(ctx, s.g, func() ([]byte, error) { return s.SenderKeyStore.GetSenderKey(ctx, group, user) })
}

type guardedMsgSecrets struct {
	store.MsgSecretStore
	g *storeGuard
}

func (s guardedMsgSecrets) PutMessageSecrets(ctx context.Context, inserts []store.MessageSecretInsert) error {
	return guard(ctx, s.g, func() error { return s.MsgSecretStore.PutMessageSecrets(ctx, inserts) })
}

func (s guardedMsgSecrets) PutMessageSecret(ctx context.Context, chat, sender types.JID, id types.MessageID, secret []byte) error {
	return guard(ctx, s.g, func() error { return s.MsgSecretStore.PutMessageSecret(ctx, chat, sender, id, secret) })
}

func (s guardedMsgSecrets) GetMessageSecret(ctx context.Context, chat, sender types.JID, id types.MessageID) ([]byte, types.JID, error) {
	if err := s.g.check(); err != nil {
		return nil, types.EmptyJID, err
	}
	secret, who, err := s.MsgSecretStore.GetMessageSecret(ctx, chat, sender, id)
	return secret, who, s.g.wrap(ctx, err)
}

type guardedEventBuffer struct {
	store.EventBuffer
	g *storeGuard
}

func (s guardedEventBuffer) GetBufferedEvent(ctx context.Context, hash [32]byte) (*store.BufferedEvent, error) {
	return guard1(ctx, s.g, func() (*store.BufferedEvent, error) { return s.EventBuffer.GetBufferedEvent(ctx, hash) })
}

func (s guardedEventBuffer) PutBufferedEvent(ctx context.Context, hash [32]byte, plaintext []byte, serverTS time.Time) error {
	return guard(ctx, s.g, func() error { return s.EventBuffer.PutBufferedEvent(ctx, hash, plaintext, serverTS) })
}

// DoDecryptionTxn: an error of fn is the decryption's (a bad MAC, an old
// counter: whatsmeow must see those as they are) or already a guarded
// store's; only the transaction's own failures are the store's.
func (s guardedEventBuffer) DoDecryptionTxn(ctx context.Context, fn func(context.Context) error) error {
	if err := s.g.check(); err != nil {
		return err
	}
	var fnErr error
	err := s.EventBuffer.DoDecryptionTxn(ctx, func(ctx context.Context) error {
		fnErr = fn(ctx)
		return fnErr
	})
	if err == nil || (fnErr != nil && err == fnErr) {
		return err
	}
	return s.g.wrap(ctx, err)
}

func (s guardedEventBuffer) ClearBufferedEventPlaintext(ctx context.Context, hash [32]byte) error {
	return guard(ctx, s.g, func() error { return s.EventBuffer.ClearBufferedEventPlaintext(ctx, hash) })
}

type guardedLIDs struct {
	store.LIDStore
	g *storeGuard
}

func (s guardedLIDs) PutManyLIDMappings(ctx context.Context, mappings []store.LIDMapping) error {
	return guard(ctx, s.g, func() error { return s.LIDStore.PutManyLIDMappings(ctx, mappings) })
}

func (s guardedLIDs) PutLIDMapping(ctx context.Context, lid, jid types.JID) error {
	return guard(ctx, s.g, func() error { return s.LIDStore.PutLIDMapping(ctx, lid, jid) })
}

func (s guardedLIDs) GetPNForLID(ctx context.Context, lid types.JID) (types.JID, error) {
	return guard1(ctx, s.g, func() (types.JID, error) { return s.LIDStore.GetPNForLID(ctx, lid) })
}

func (s guardedLIDs) GetLIDForPN(ctx context.Context, pn types.JID) (types.JID, error) {
	return guard1(ctx, s.g, func() (types.JID, error) { return s.LIDStore.GetLIDForPN(ctx, pn) })
}

func (s guardedLIDs) GetManyLIDsForPNs(ctx context.Context, pns []types.JID) (map[types.JID]types.JID, error) {
	return guard1(ctx, s.g, func() (map[types.JID]types.JID, error) { return s.LIDStore.GetManyLIDsForPNs(ctx, pns) })
}

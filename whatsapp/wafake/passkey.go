package wafake

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waCompanionReg"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/util/gcmutil"
	"go.mau.fi/whatsmeow/util/hkdfutil"
	"go.mau.fi/whatsmeow/util/keys"
	"golang.org/x/crypto/curve25519"
	"google.golang.org/protobuf/proto"
)

// Linking an account that requires a passkey (whatsmeow pair-passkey.go).
// Once the phone scanned the QR code (or took the pairing code), the
// network does not link at once: it sends the client a
// passkey_prologue_request notification with WebAuthn request options. The
// client asks for a ref (IQ ref), then sends the assertion with a
// commitment to an ephemeral key (IQ passkey_prologue); the network checks
// the assertion (webauthn.go) and answers with the phone's ephemeral key
// and a nonce (notification crsc_continuation). The client reveals its
// nonce (IQ companion_nonce), which must match the commitment; both sides
// now derive the same confirmation code and an X25519 key, under which the
// client sends its keys and ADV secret (IQ encrypted_pairing_request); the
// network then links it as after a QR scan.
//
// A refused or late assertion ends the step: the client gets an IQ error
// naming the reason and fresh QR references, and may try again.

// DefaultPasskeyTimeout is how long a passkey challenge stays valid.
const DefaultPasskeyTimeout = 2 * time.Minute

// handoffInfo derives the key of the pairing handoff proof from the QR's
// ADV secret (shortcake-passkey-handoff-v1 in pair-passkey.go).
const handoffInfo = "shortcake-passkey-handoff-v1"

// linkingBase32 is the alphabet of pairing and confirmation codes.
var linkingBase32 = base32.NewEncoding("123456789ABCDEFGHJKLMNPQRSTVWXYZ")

// passkeyStep is a pairing client in the passkey step, under Network.mu.
type passkeyStep struct {
	c         *conn
	phone     string
	challenge []byte
	expires   time.Time
	timer     *time.Timer
	handoff   []byte // the key of the handoff proof; nil when linking by code
	ref       string // the ref the client asked for

	// Set once the assertion was accepted.
	ident      []byte // the client's CompanionEphemeralIdentity, marshalled
	companion  *waCompanionReg.CompanionEphemeralIdentity
	commitment []byte
	primary    *keys.KeyPair
	nonce      []byte

	// Set once the client revealed its nonce.
	code string // the confirmation code the phone shows
	key  []byte // the key of the encrypted pairing request
}

// RequirePasskey makes linking a device of phone ask for the account's
// passkey from now on; the account's authenticator gets a new P-256 key
// unless it has one.
func (n *Network) RequirePasskey(phone string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	acct, err := n.accountLocked(phone)
	if err != nil {
		return err
	}
	if acct.passkey != nil {
		return nil
	}
	cred, err := newPasskeyCred()
	if err != nil {
		return err
	}
	acct.passkey = cred
	return nil
}

// PasskeyAssertion is the authenticator of phone's passkey answering
// options (WebAuthn request options in JSON form): a PublicKeyCredential in
// its toJSON() form, signed with the account's P-256 key.
func (n *Network) PasskeyAssertion(phone string, options []byte) ([]byte, error) {
	var opts passkeyOptions
	if err := json.Unmarshal(options, &opts); err != nil {
		return nil, fmt.Errorf("wafake: the request options are not WebAuthn request options in JSON form: %w", err)
	}
	if len(opts.Challenge) == 0 {
		return nil, errors.New("wafake: the request options have no challenge")
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	acct, err := n.accountLocked(phone)
	if err != nil {
		return nil, err
	}
	cred := acct.passkey
	if cred == nil {
		return nil, fmt.Errorf("wafake: %s has no passkey (sandboxRequirePasskey first)", phone)
	}
	if opts.RPID != PasskeyRPID {
		return nil, fmt.Errorf("wafake: the passkey of %s is for %s, not %q", phone, PasskeyRPID, opts.RPID)
	}
	allowed := len(opts.AllowCredentials) == 0
	for _, a := range opts.AllowCredentials {
		allowed = allowed || bytes.Equal(a.ID, cred.id)
	}
	if !allowed {
		return nil, fmt.Errorf("wafake: the request options do not allow the passkey of %s", phone)
	}
	// The authenticator's counter is the network's plus one: both live in
	// the simulated world, and only the network's moves on acceptance.
	return cred.assert(ceremony{
		typ: "webauthn.get", origin: PasskeyOrigin, rpID: opts.RPID, challenge: opts.Challenge,
		flags: flagUserPresent | flagUserVerified,
	}, cred.count+1)
}

// PasskeyCode is the confirmation code the phone of phone shows while a
// client links with its passkey ("" when none is shown): the client must
// show the same one.
func (n *Network) PasskeyCode(phone string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, st := range n.passkeys {
		if st.phone == phone && st.code != "" && st.c.ctx.Err() == nil {
			return st.code
		}
	}
	return ""
}

// needsPasskey reports whether linking a device of phone asks for a
// passkey.
func (n *Network) needsPasskey(phone string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	a := n.accounts[phone]
	return a != nil && a.passkey != nil
}

// askPasskey starts the passkey step of pairing client c with phone's
// account: the QR references it showed are withdrawn and the notification
// with the request options sent. advSecret is the QR's (nil by code).
func (n *Network) askPasskey(c *conn, phone string, advSecret []byte) error {
	challenge := make([]byte, 32)
	_, _ = rand.Read(challenge)
	st := &passkeyStep{c: c, phone: phone, challenge: challenge, expires: time.Now().Add(n.passkeyTimeout)}
	if advSecret != nil {
		st.handoff = hkdfutil.SHA256(advSecret, nil, []byte(handoffInfo), 32)
	}
	n.mu.Lock()
	cred := n.accounts[phone].passkey
	for ref, pc := range n.pairing {
		if pc == c {
			delete(n.pairing, ref)
		}
	}
	if old := n.passkeys[c]; old != nil {
		old.timer.Stop()
	}
	n.passkeys[c] = st
	// An assertion that comes after the challenge expired is refused as
	// late (verifyAssertion); a client that never answers gets fresh QR
	// references a while after, so the pairing never stays stuck.
	st.timer = time.AfterFunc(n.passkeyTimeout*3/2, func() { n.endPasskey(st, errPasskeyExpired) })
	n.mu.Unlock()
	opts, err := json.Marshal(passkeyOptions{
		Challenge: challenge, Timeout: int(n.passkeyTimeout / time.Millisecond), RPID: PasskeyRPID,
		AllowCredentials: []passkeyCredential{{ID: cred.id, Type: "public-key", Transports: []string{"internal", "hybrid"}}},
		UserVerification: "required",
	})
	if err != nil {
		return err
	}
	err = c.send(waBinary.Node{
		Tag: "notification",
		Attrs: waBinary.Attrs{
			"id": n.nextID(), "type": "passkey_prologue_request", "from": types.ServerJID,
			"t": strconv.FormatInt(time.Now().Unix(), 10),
		},
		Content: []waBinary.Node{{Tag: "passkey_request_options", Content: opts}},
	})
	if err != nil {
		return fmt.Errorf("wafake: send passkey request: %w", err)
	}
	return nil
}

// endPasskey ends st if it is still the client's step and has not reached
// the confirmation: the client is offered fresh QR references.
func (n *Network) endPasskey(st *passkeyStep, why error) {
	n.mu.Lock()
	current := n.passkeys[st.c] == st && st.code == ""
	if current {
		delete(n.passkeys, st.c)
		st.timer.Stop()
	}
	n.mu.Unlock()
	if !current || st.c.ctx.Err() != nil {
		return
	}
	n.log.Debug("passkey step ended", "phone", st.phone, "why", why)
	if err := n.startPairing(st.c); err != nil {
		n.log.Debug("fresh QR references not sent", "err", err)
	}
}

// handlePasskeyIQ answers the md IQs of the passkey step; ok is false for
// any other IQ.
func (n *Network) handlePasskeyIQ(c *conn, node *waBinary.Node) (content []waBinary.Node, iqErr *iqError, ok bool) {
	children := node.GetChildren()
	if len(children) != 1 {
		return nil, nil, false
	}
	child := children[0]
	switch child.Tag {
	case "ref", "passkey_request_options", "passkey_prologue", "companion_nonce", "encrypted_pairing_request":
	default:
		return nil, nil, false
	}
	n.mu.Lock()
	st := n.passkeys[c]
	n.mu.Unlock()
	if st == nil || c.dev != nil {
		return nil, &iqError{400, "bad-request"}, true
	}
	switch child.Tag {
	case "ref":
		b := make([]byte, 18)
		_, _ = rand.Read(b)
		ref := "2@" + base64.StdEncoding.EncodeToString(b)
		n.mu.Lock()
		st.ref = ref
		n.mu.Unlock()
		return []waBinary.Node{{Tag: "ref", Content: []byte(ref)}}, nil, true
	case "passkey_prologue":
		return nil, n.passkeyPrologue(st, &child), true
	case "companion_nonce":
		return nil, n.passkeyNonce(st, &child), true
	case "encrypted_pairing_request":
		return nil, n.passkeyPairingRequest(st, &child), true
	}
	return nil, &iqError{400, "bad-request"}, true // passkey_request_options: sent in the notification only
}

// refuse ends st for why, after the IQ error has gone out: the client
// reads the error first, then gets fresh references.
func (n *Network) refuse(st *passkeyStep, why error) *iqError {
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		time.Sleep(10 * time.Millisecond)
		n.endPasskey(st, why)
	}()
	return &iqError{401, why.Error()}
}

// passkeyPrologue checks the assertion and the client's prologue, then
// sends the phone's ephemeral identity.
func (n *Network) passkeyPrologue(st *passkeyStep, node *waBinary.Node) *iqError {
	credentialID, assertion, payload := childBytes(node, "credential_id"), childBytes(node, "webauthn_assertion"), childBytes(node, "prologue_payload")
	n.mu.Lock()
	cred := n.accounts[st.phone].passkey
	count, err := verifyAssertion(cred, st.challenge, st.expires, time.Now(), credentialID, assertion)
	stale := st.ident != nil || st.ref == ""
	n.mu.Unlock()
	if err != nil {
		return n.refuse(st, err)
	}
	if stale {
		return n.refuse(st, errors.New("passkey-out-of-order"))
	}
	var prologue waCompanionReg.ProloguePayload
	var ident waCompanionReg.CompanionEphemeralIdentity
	if proto.Unmarshal(payload, &prologue) != nil || proto.Unmarshal(prologue.GetCompanionEphemeralIdentity(), &ident) != nil ||
		len(ident.GetPublicKey()) != 32 || len(prologue.GetCommitment().GetHash()) != sha256.Size {
		return n.refuse(st, errors.New("passkey-prologue-malformed"))
	}
	if ident.GetRef() != st.ref {
		return n.refuse(st, errors.New("passkey-ref-mismatch"))
	}
	// The handoff proof shows the client holds the ADV secret of the QR
	// code the phone scanned. By code the phone never saw that secret, so
	// there is nothing to check it against.
	if proof := childBytes(node, "pairing_handoff_proof"); proof != nil && st.handoff != nil {
		mac := hmac.New(sha256.New, st.handoff)
		mac.Write(payload)
		if !hmac.Equal(mac.Sum(nil), proof) {
			return n.refuse(st, errors.New("passkey-handoff-proof-invalid"))
		}
	}
	primary := keys.NewKeyPair()
	nonce := make([]byte, 32)
	_, _ = rand.Read(nonce)
	n.mu.Lock()
	cred.count = count
	st.ident, st.companion, st.commitment = prologue.GetCompanionEphemeralIdentity(), &ident, prologue.GetCommitment().GetHash()
	st.primary, st.nonce = primary, nonce
	st.timer.Stop() // accepted: the rest is the client's and the person's
	n.mu.Unlock()
	pei, err := proto.Marshal(&waCompanionReg.PrimaryEphemeralIdentity{PublicKey: primary.Pub[:], Nonce: nonce})
	if err != nil {
		return &iqError{500, "internal-error"}
	}
	n.wg.Add(1)
	go func() { // after the IQ result, as the server's continuation comes
		defer n.wg.Done()
		time.Sleep(10 * time.Millisecond)
		_ = st.c.send(waBinary.Node{
			Tag: "notification",
			Attrs: waBinary.Attrs{
				"id": n.nextID(), "type": "crsc_continuation", "from": types.ServerJID,
				"t": strconv.FormatInt(time.Now().Unix(), 10),
			},
			Content: []waBinary.Node{{Tag: "primary_ephemeral_identity", Content: pei}},
		})
	}()
	return nil
}

// passkeyNonce checks the client's nonce against its commitment and derives
// the confirmation code and the key of the pairing request.
func (n *Network) passkeyNonce(st *passkeyStep, node *waBinary.Node) *iqError {
	nonce, ok := node.Content.([]byte)
	n.mu.Lock()
	ident, commitment, companion, primary, primaryNonce := st.ident, st.commitment, st.companion, st.primary, st.nonce
	n.mu.Unlock()
	if ident == nil || !ok || len(nonce) != 32 {
		return &iqError{400, "bad-request"}
	}
	if sum := sha256.Sum256(concat(ident, nonce)); !bytes.Equal(sum[:], commitment) {
		return n.refuse(st, errors.New("passkey-commitment-mismatch"))
	}
	shared, err := curve25519.X25519(primary.Priv[:], companion.GetPublicKey())
	if err != nil {
		return n.refuse(st, errors.New("passkey-prologue-malformed"))
	}
	salt := fmt.Sprintf("Companion Pairing %d with ref %s", companion.GetDeviceType(), companion.GetRef())
	key := hkdfutil.SHA256(shared, []byte(salt), []byte("Pairing Information Encryption Key"), 32)
	digest := sha256.Sum256(concat(nonce, primary.Pub[:]))
	code := make([]byte, 5)
	for i := range code {
		code[i] = primaryNonce[i] ^ digest[i]
	}
	enc := linkingBase32.EncodeToString(code)
	n.mu.Lock()
	st.code, st.key = enc[:4]+"-"+enc[4:], key
	n.mu.Unlock()
	return nil
}

// passkeyPairingRequest decrypts the client's pairing request and links it
// with the ADV secret it sent.
func (n *Network) passkeyPairingRequest(st *passkeyStep, node *waBinary.Node) *iqError {
	raw, _ := node.Content.([]byte)
	n.mu.Lock()
	key := st.key
	n.mu.Unlock()
	var wrapped waCompanionReg.EncryptedPairingRequest
	if key == nil || proto.Unmarshal(raw, &wrapped) != nil {
		return &iqError{400, "bad-request"}
	}
	plain, err := gcmutil.Decrypt(key, wrapped.GetIV(), wrapped.GetEncryptedPayload(), nil)
	var req waCompanionReg.PairingRequest
	if err != nil || proto.Unmarshal(plain, &req) != nil {
		return &iqError{401, "pairing-request-undecryptable"}
	}
	c := st.c
	if !bytes.Equal(req.GetCompanionPublicKey(), c.noisePub[:]) ||
		!bytes.Equal(req.GetCompanionIdentityKey(), c.payload.GetDevicePairingData().GetEIdent()) || len(req.GetAdvSecret()) == 0 {
		return &iqError{401, "pairing-request-keys-mismatch"}
	}
	n.mu.Lock()
	if n.passkeys[c] == st {
		delete(n.passkeys, c)
	}
	n.mu.Unlock()
	n.wg.Add(1)
	go func() { // pair waits for the client's answer: not on its read loop
		defer n.wg.Done()
		if err := n.pair(c, st.phone, req.GetAdvSecret()); err != nil {
			n.log.Debug("passkey pairing failed", "phone", st.phone, "err", err)
		}
	}()
	return nil
}

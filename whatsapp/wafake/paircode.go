package wafake

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/util/hkdfutil"
	"go.mau.fi/whatsmeow/util/keys"
	"golang.org/x/crypto/curve25519"
)

// Pairing by phone code (whatsmeow pair-code.go). The client shows an
// 8-character code and sends its ephemeral key wrapped with it; the user
// types the code on the phone, which wraps its own ephemeral key with the
// code it was given. Neither side can tell a wrong code by itself: the two
// ephemeral secrets just differ, and the phone finds out when the client's
// key bundle does not decrypt. The server never learns the code.

// linkCodeIterations is the PBKDF2 round count whatsmeow uses (2<<16).
const linkCodeIterations = 2 << 16

// codeReg is a client waiting for its pairing code to be entered on the
// phone of an account.
type codeReg struct {
	ref     string
	c       *conn
	phone   string
	seq     uint64 // the latest registration of a phone is the one the phone sees
	wrapped []byte // the client's ephemeral key, wrapped with the code

	// Set while the phone waits for the client's companion_finish.
	secret   []byte        // ECDH of the two ephemeral keys, as the phone sees it
	identity *keys.KeyPair // the phone's identity key
	done     chan codeResult
}

type codeResult struct {
	advSecret []byte
	err       error
}

// handleLinkCode takes the client's two steps of pairing by code:
// companion_hello (from PairPhone) and companion_finish (its answer to the
// phone's primary_hello).
func (n *Network) handleLinkCode(c *conn, reg *waBinary.Node) ([]waBinary.Node, *iqError) {
	badRequest := &iqError{400, "bad-request"}
	if c.dev != nil || c.payload.GetDevicePairingData() == nil {
		return nil, badRequest // only a client that is pairing may link by code
	}
	switch reg.AttrGetter().String("stage") {
	case "companion_hello":
		jid, _ := reg.Attrs["jid"].(types.JID)
		wrapped := childBytes(reg, "link_code_pairing_wrapped_companion_ephemeral_pub")
		authKey := childBytes(reg, "companion_server_auth_key_pub")
		if ValidPhone(jid.User) != nil || len(wrapped) != 80 || !bytes.Equal(authKey, c.noisePub[:]) {
			return nil, badRequest
		}
		b := make([]byte, 18)
		_, _ = rand.Read(b)
		r := &codeReg{ref: base64.RawURLEncoding.EncodeToString(b), c: c, phone: jid.User, seq: n.ids.Add(1), wrapped: wrapped}
		n.mu.Lock()
		if n.codeRegs == nil {
			n.codeRegs = map[string]*codeReg{}
		}
		// A client asking again replaces its earlier code; registrations of
		// clients that went away are dropped here rather than on disconnect.
		for ref, old := range n.codeRegs {
			if old.c == c || old.c.ctx.Err() != nil {
				delete(n.codeRegs, ref)
			}
		}
		n.codeRegs[r.ref] = r
		n.mu.Unlock()
		return []waBinary.Node{{Tag: "link_code_companion_reg", Content: []waBinary.Node{
			{Tag: "link_code_pairing_ref", Content: []byte(r.ref)},
		}}}, nil
	case "companion_finish":
		ref := string(childBytes(reg, "link_code_pairing_ref"))
		n.mu.Lock()
		r := n.codeRegs[ref]
		if r == nil || r.c != c || r.done == nil {
			n.mu.Unlock()
			return nil, badRequest
		}
		secret, identity, done := r.secret, r.identity, r.done
		r.secret, r.done = nil, nil // one answer per code entered
		n.mu.Unlock()
		adv, err := openKeyBundle(secret, identity, childBytes(reg, "link_code_pairing_wrapped_key_bundle"),
			c.payload.GetDevicePairingData().GetEIdent(), childBytes(reg, "companion_identity_public"))
		done <- codeResult{adv, err}
		if err != nil {
			return nil, &iqError{401, "not-authorized"}
		}
		return nil, nil
	}
	return nil, badRequest
}

// EnterPairingCode is the simulated phone of account phone entering the code
// a client showed after PairPhone: the client becomes a linked device of the
// account, then reconnects and logs in, as after ScanQR. A wrong code links
// nothing and returns an error; the client keeps waiting and the right code
// may still be entered.
func (n *Network) EnterPairingCode(phone, code string) error {
	code = strings.ToUpper(strings.NewReplacer("-", "", " ", "").Replace(code))
	if len(code) != 8 {
		return errors.New("wafake: a pairing code has 8 characters")
	}
	n.mu.Lock()
	acct, err := n.accountLocked(phone)
	if err != nil {
		n.mu.Unlock()
		return err
	}
	var r *codeReg
	for _, x := range n.codeRegs {
		if x.phone == phone && x.c.ctx.Err() == nil && (r == nil || x.seq > r.seq) {
			r = x
		}
	}
	n.mu.Unlock()
	if r == nil {
		return fmt.Errorf("wafake: no client is waiting for a pairing code of %s", phone)
	}
	if n.needsPasskey(phone) {
		return n.codeToPasskey(r, acct)
	}

	// The phone wraps its own key under the client's salt with a fresh IV:
	// the client reads the salt from the message either way, and one PBKDF2
	// derivation (131072 rounds) per attempt keeps tests fast.
	salt := r.wrapped[:32]
	block, err := linkCodeCipher(code, salt)
	if err != nil {
		return err
	}
	companionEph := make([]byte, 32)
	cipher.NewCTR(block, r.wrapped[32:48]).XORKeyStream(companionEph, r.wrapped[48:])
	primaryEph := keys.NewKeyPair()
	iv := make([]byte, 16)
	_, _ = rand.Read(iv)
	wrappedPub := make([]byte, 32)
	cipher.NewCTR(block, iv).XORKeyStream(wrappedPub, primaryEph.Pub[:])
	wrappedPrimary := concat(salt, iv, wrappedPub)
	secret, err := curve25519.X25519(primaryEph.Priv[:], companionEph)
	if err != nil {
		// A wrong code unwraps to an arbitrary point; a low-order one is as
		// wrong as any other.
		return fmt.Errorf("wafake: the pairing code entered on %s is wrong", phone)
	}

	done := make(chan codeResult, 1)
	n.mu.Lock()
	if r.done != nil {
		n.mu.Unlock()
		return errors.New("wafake: a pairing code is already being entered for this client")
	}
	r.secret, r.identity, r.done = secret, acct.identity, done
	n.mu.Unlock()
	defer func() {
		n.mu.Lock()
		if r.done == done {
			r.secret, r.done = nil, nil
		}
		n.mu.Unlock()
	}()

	err = r.c.send(waBinary.Node{
		Tag: "notification",
		Attrs: waBinary.Attrs{
			"id": n.nextID(), "type": "link_code_companion_reg", "from": types.ServerJID,
			"t": strconv.FormatInt(time.Now().Unix(), 10),
		},
		Content: []waBinary.Node{{Tag: "link_code_companion_reg", Attrs: waBinary.Attrs{"stage": "primary_hello"}, Content: []waBinary.Node{
			{Tag: "link_code_pairing_ref", Content: []byte(r.ref)},
			{Tag: "link_code_pairing_wrapped_primary_ephemeral_pub", Content: wrappedPrimary},
			{Tag: "primary_identity_pub", Content: acct.identity.Pub[:]},
		}}},
	})
	if err != nil {
		return fmt.Errorf("wafake: send primary_hello: %w", err)
	}
	timer := time.NewTimer(30 * time.Second)
	defer timer.Stop()
	var res codeResult
	select {
	case res = <-done:
	case <-r.c.ctx.Done():
		return errors.New("wafake: the pairing client went away")
	case <-timer.C:
		return errors.New("wafake: the client did not finish pairing by code within 30 s")
	}
	if res.err != nil {
		return fmt.Errorf("wafake: the pairing code entered on %s is wrong: %w", phone, res.err)
	}
	n.mu.Lock()
	delete(n.codeRegs, r.ref)
	n.mu.Unlock()
	return n.pair(r.c, phone, res.advSecret)
}

// linkCodeCipher is the AES key that wraps the ephemeral keys with the
// pairing code (AES-CTR, as whatsmeow's generateCompanionEphemeralKey).
func linkCodeCipher(code string, salt []byte) (cipher.Block, error) {
	k, err := pbkdf2.Key(sha256.New, code, salt, linkCodeIterations, 32)
	if err != nil {
		return nil, err
	}
	return aes.NewCipher(k)
}

// openKeyBundle decrypts the client's companion_finish key bundle,
// salt(32)‖nonce(12)‖AES-GCM(companion identity‖primary identity‖adv random),
// and derives the ADV secret the client now holds (pair-code.go): the HMAC
// key of pair-success. A bundle that does not decrypt means the two sides
// used different codes.
func openKeyBundle(secret []byte, primary *keys.KeyPair, wrapped, companionIdentity, claimedIdentity []byte) ([]byte, error) {
	if len(wrapped) != 32+12+96+16 {
		return nil, errors.New("key bundle of the wrong size")
	}
	key := hkdfutil.SHA256(secret, wrapped[:32], []byte("link_code_pairing_key_bundle_encryption_key"), 32)
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	plain, err := gcm.Open(nil, wrapped[32:44], wrapped[44:], nil)
	if err != nil {
		return nil, errors.New("the client's key bundle does not decrypt")
	}
	companion, primaryPub, advRandom := plain[:32], plain[32:64], plain[64:]
	if !bytes.Equal(companion, companionIdentity) || !bytes.Equal(companion, claimedIdentity) || !bytes.Equal(primaryPub, primary.Pub[:]) {
		return nil, errors.New("the key bundle names other identity keys than the client and the phone")
	}
	identityShared, err := curve25519.X25519(primary.Priv[:], companion)
	if err != nil {
		return nil, err
	}
	return hkdfutil.SHA256(concat(secret, identityShared, advRandom), nil, []byte("adv_secret"), 32), nil
}

// childBytes is the byte content of the child tag of node, or nil.
func childBytes(node *waBinary.Node, tag string) []byte {
	child, ok := node.GetOptionalChildByTag(tag)
	if !ok {
		return nil
	}
	switch v := child.Content.(type) {
	case []byte:
		return v
	case string:
		return []byte(v)
	}
	return nil
}

// codeToPasskey is the phone taking a pairing code on an account that
// requires a passkey. As WhatsApp does since mid-2026 (whatsmeow #1188,
// #1233), its primary_hello carries no wrapped ephemeral key, so there is
// no key bundle to exchange: the passkey step (passkey.go) links the
// client, and the confirmation code, not the pairing code, binds the two
// sides.
func (n *Network) codeToPasskey(r *codeReg, acct *account) error {
	n.mu.Lock()
	delete(n.codeRegs, r.ref)
	n.mu.Unlock()
	err := r.c.send(waBinary.Node{
		Tag: "notification",
		Attrs: waBinary.Attrs{
			"id": n.nextID(), "type": "link_code_companion_reg", "from": types.ServerJID,
			"t": strconv.FormatInt(time.Now().Unix(), 10),
		},
		Content: []waBinary.Node{{Tag: "link_code_companion_reg", Attrs: waBinary.Attrs{"stage": "primary_hello"}, Content: []waBinary.Node{
			{Tag: "link_code_pairing_ref", Content: []byte(r.ref)},
			{Tag: "primary_identity_pub", Content: acct.identity.Pub[:]},
		}}},
	})
	if err != nil {
		return fmt.Errorf("wafake: send primary_hello: %w", err)
	}
	return n.askPasskey(r.c, r.phone, nil)
}

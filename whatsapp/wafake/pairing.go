package wafake

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.mau.fi/libsignal/ecc"
	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waAdv"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"
)

// The prefixes of the ADV signatures (pair.go in whatsmeow).
var (
	advAccountSignaturePrefix = []byte{6, 0}
	advDeviceSignaturePrefix  = []byte{6, 1}
)

// QRLinkPrefix starts every QR code a pairing client shows: the code is a
// wa.me link whose fragment carries the pairing data (makeQRData, pair.go).
const QRLinkPrefix = "https://wa.me/settings/linked_devices#"

// QRCode is the pairing data a client shows as its QR code:
// QRLinkPrefix + ref,noise key,identity key,adv secret,client type (the
// keys and the secret base64).
type QRCode struct {
	Ref         string   // the reference the network gave the client
	NoiseKey    [32]byte // the client's Noise static key
	IdentityKey [32]byte // the client's Signal identity key
	AdvSecret   []byte   // the secret the phone signs the device identity with
	// ClientType is the kind of client, as whatsmeow's PairClientType:
	// "1" Chrome … "9" other web client, "c" macOS, "e" Android.
	ClientType string
}

// ParseQR reads a QR code a pairing client shows.
func ParseQR(code string) (QRCode, error) {
	data, ok := strings.CutPrefix(code, QRLinkPrefix)
	if !ok {
		return QRCode{}, fmt.Errorf("wafake: a QR code is a link starting %s", QRLinkPrefix)
	}
	parts := strings.Split(data, ",")
	if len(parts) != 5 || parts[0] == "" || parts[4] == "" {
		return QRCode{}, errors.New("wafake: a QR code carries five comma-separated parts: ref, noise key, identity key, secret, client type")
	}
	noisePub, err1 := base64.StdEncoding.DecodeString(parts[1])
	identityPub, err2 := base64.StdEncoding.DecodeString(parts[2])
	advSecret, err3 := base64.StdEncoding.DecodeString(parts[3])
	if err := errors.Join(err1, err2, err3); err != nil || len(noisePub) != 32 || len(identityPub) != 32 || len(advSecret) == 0 {
		return QRCode{}, fmt.Errorf("wafake: malformed QR code: the keys must be 32 bytes of base64 and the secret base64 (%v)", err)
	}
	return QRCode{Ref: parts[0], NoiseKey: [32]byte(noisePub), IdentityKey: [32]byte(identityPub), AdvSecret: advSecret, ClientType: parts[4]}, nil
}

// ScanQR is the simulated phone of account phone scanning a QR code shown by
// a client that is pairing: the client becomes a linked device of that
// account, then reconnects and logs in.
func (n *Network) ScanQR(code, phone string) error {
	qr, err := ParseQR(code)
	if err != nil {
		return err
	}
	n.mu.Lock()
	c := n.pairing[qr.Ref]
	n.mu.Unlock()
	if c == nil {
		return fmt.Errorf("wafake: no client is showing QR reference %s", qr.Ref)
	}
	reg := c.payload.GetDevicePairingData()
	if qr.NoiseKey != c.noisePub || string(qr.IdentityKey[:]) != string(reg.GetEIdent()) {
		return errors.New("wafake: the QR code does not match the keys of the client showing it")
	}
	if n.needsPasskey(phone) {
		// The phone scanned: the rest is the client's passkey step
		// (passkey.go), which ends in pair as well.
		return n.askPasskey(c, phone, qr.AdvSecret)
	}
	return n.pair(c, phone, qr.AdvSecret)
}

// pair links the pairing client c to the account of phone: it sends the
// signed device identity and, when the client has countersigned it,
// registers the companion and asks the client to reconnect (515).
func (n *Network) pair(c *conn, phone string, advSecret []byte) error {
	reg := c.payload.GetDevicePairingData()
	n.mu.Lock()
	acct, err := n.accountLocked(phone)
	if err != nil {
		n.mu.Unlock()
		return err
	}
	dev := acct.nextDev
	acct.nextDev++
	comp := &companion{acct: acct, device: dev, noisePub: c.noisePub, prekeys: map[uint32][32]byte{}}
	n.mu.Unlock()

	if len(reg.GetEIdent()) != 32 || len(reg.GetESkeyVal()) != 32 || len(reg.GetESkeySig()) != 64 || len(reg.GetERegid()) != 4 || len(reg.GetESkeyID()) != 3 {
		return errors.New("wafake: the client's registration payload is incomplete")
	}
	comp.identity = [32]byte(reg.GetEIdent())
	comp.regID = binary.BigEndian.Uint32(reg.GetERegid())
	comp.signed = signedPreKey{
		id:  uint32(reg.GetESkeyID()[0])<<16 | uint32(reg.GetESkeyID()[1])<<8 | uint32(reg.GetESkeyID()[2]),
		pub: [32]byte(reg.GetESkeyVal()),
		sig: [64]byte(reg.GetESkeySig()),
	}

	var rawID [4]byte
	_, _ = rand.Read(rawID[:])
	details, err := proto.Marshal(&waAdv.ADVDeviceIdentity{
		RawID:       proto.Uint32(binary.BigEndian.Uint32(rawID[:])),
		Timestamp:   proto.Uint64(uint64(time.Now().Unix())),
		KeyIndex:    proto.Uint32(uint32(dev)),
		AccountType: waAdv.ADVEncryptionType_E2EE.Enum(),
		DeviceType:  waAdv.ADVEncryptionType_E2EE.Enum(),
	})
	if err != nil {
		return err
	}
	accountSig := ecc.CalculateSignature(ecc.NewDjbECPrivateKey(*acct.identity.Priv),
		concat(advAccountSignaturePrefix, details, comp.identity[:]))
	signed, err := proto.Marshal(&waAdv.ADVSignedDeviceIdentity{
		Details:             details,
		AccountSignatureKey: acct.identity.Pub[:],
		AccountSignature:    accountSig[:],
	})
	if err != nil {
		return err
	}
	mac := hmac.New(sha256.New, advSecret)
	mac.Write(signed)
	container, err := proto.Marshal(&waAdv.ADVSignedDeviceIdentityHMAC{
		Details:     signed,
		HMAC:        mac.Sum(nil),
		AccountType: waAdv.ADVEncryptionType_E2EE.Enum(),
	})
	if err != nil {
		return err
	}

	id := n.nextID()
	done := make(chan error, 1)
	n.expect(c, id, func(resp *waBinary.Node) {
		done <- n.finishPairing(c, comp, resp, acct.identity.Pub[:])
	})
	// t is the server's clock, from which whatsmeow takes its offset
	// (handlePairSuccess, pair.go).
	err = c.send(waBinary.Node{
		Tag:   "iq",
		Attrs: waBinary.Attrs{"id": id, "type": "set", "xmlns": "md", "from": types.ServerJID, "t": strconv.FormatInt(time.Now().Unix(), 10)},
		Content: []waBinary.Node{{Tag: "pair-success", Content: []waBinary.Node{
			{Tag: "device-identity", Content: container},
			{Tag: "device", Attrs: waBinary.Attrs{"jid": comp.jid(), "lid": comp.lidJID()}},
			{Tag: "platform", Attrs: waBinary.Attrs{"name": "wafake"}},
		}}},
	})
	if err != nil {
		return fmt.Errorf("wafake: send pair-success: %w", err)
	}
	select {
	case err := <-done:
		return err
	case <-c.ctx.Done():
		// The 515 that finishPairing sends makes the client leave, possibly
		// before its result reaches done: prefer that result.
		select {
		case err := <-done:
			return err
		case <-time.After(time.Second):
		}
		return errors.New("wafake: the pairing client went away")
	case <-time.After(30 * time.Second):
		return errors.New("wafake: the client did not confirm the pairing within 30 s")
	}
}

// finishPairing checks the client's countersignature, registers the
// companion, and restarts the stream so the client logs in (515).
func (n *Network) finishPairing(c *conn, comp *companion, resp *waBinary.Node, accountKey []byte) error {
	if resp.AttrGetter().String("type") != "result" {
		return fmt.Errorf("wafake: the client refused the pairing: %s", resp.String())
	}
	identity, ok := resp.GetChildByTag("pair-device-sign", "device-identity").Content.([]byte)
	if !ok {
		return errors.New("wafake: pairing confirmation without a device identity")
	}
	var signed waAdv.ADVSignedDeviceIdentity
	if err := proto.Unmarshal(identity, &signed); err != nil || len(signed.GetDeviceSignature()) != 64 {
		return fmt.Errorf("wafake: bad device identity in the pairing confirmation: %v", err)
	}
	msg := concat(advDeviceSignaturePrefix, signed.GetDetails(), comp.identity[:], accountKey)
	if !ecc.VerifySignature(ecc.NewDjbECPublicKey(comp.identity), msg, [64]byte(signed.GetDeviceSignature())) {
		return errors.New("wafake: the client's device signature does not verify")
	}
	n.mu.Lock()
	comp.acct.devices[comp.device] = comp
	for ref, pc := range n.pairing {
		if pc == c {
			delete(n.pairing, ref)
		}
	}
	n.mu.Unlock()
	_ = c.send(waBinary.Node{Tag: "stream:error", Attrs: waBinary.Attrs{"code": "515"}})
	return nil
}

func concat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

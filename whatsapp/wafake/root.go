package wafake

import (
	"crypto/sha256"
	"fmt"
	"sync"

	"go.mau.fi/libsignal/ecc"
	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waCert"
	"go.mau.fi/whatsmeow/util/keys"
	"google.golang.org/protobuf/proto"
)

// The certificate chain a client checks in the Noise handshake is rooted in
// whatsmeow.WACertPubKey, a process-wide variable. The fake's root and
// intermediate keys are derived from fixed seeds so that every network in
// the process, and a network in another process, share one root; it is
// installed once and never changed while clients run.
var (
	rootKey         = keys.NewKeyPairFromPrivateKey(sha256.Sum256([]byte("wagraph wafake root key")))
	intermediateKey = keys.NewKeyPairFromPrivateKey(sha256.Sum256([]byte("wagraph wafake intermediate key")))
	installRootOnce sync.Once
)

const intermediateSerial = 7

// TrustFakeRoot makes every whatsmeow client of this process accept the fake
// network's servers — and no longer WhatsApp's. Only tests and the sandbox
// mode call it; New calls it.
func TrustFakeRoot() {
	installRootOnce.Do(func() { whatsmeow.WACertPubKey = *rootKey.Pub })
}

// certChain signs a server's static key into a chain the client verifies.
func certChain(serverStatic *keys.KeyPair) ([]byte, error) {
	interDetails, err := proto.Marshal(&waCert.CertChain_NoiseCertificate_Details{
		Serial:       proto.Uint32(intermediateSerial),
		IssuerSerial: proto.Uint32(whatsmeow.WACertIssuerSerial),
		Key:          intermediateKey.Pub[:],
	})
	if err != nil {
		return nil, fmt.Errorf("marshal intermediate: %w", err)
	}
	leafDetails, err := proto.Marshal(&waCert.CertChain_NoiseCertificate_Details{
		Serial:       proto.Uint32(intermediateSerial + 1),
		IssuerSerial: proto.Uint32(intermediateSerial),
		Key:          serverStatic.Pub[:],
	})
	if err != nil {
		return nil, fmt.Errorf("marshal leaf: %w", err)
	}
	interSig := ecc.CalculateSignature(ecc.NewDjbECPrivateKey(*rootKey.Priv), interDetails)
	leafSig := ecc.CalculateSignature(ecc.NewDjbECPrivateKey(*intermediateKey.Priv), leafDetails)
	return proto.Marshal(&waCert.CertChain{
		Intermediate: &waCert.CertChain_NoiseCertificate{Details: interDetails, Signature: interSig[:]},
		Leaf:         &waCert.CertChain_NoiseCertificate{Details: leafDetails, Signature: leafSig[:]},
	})
}

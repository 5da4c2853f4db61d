package wafake

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.mau.fi/libsignal/ecc"
	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waCert"
	"go.mau.fi/whatsmeow/util/keys"
	"google.golang.org/protobuf/proto"
)

// The certificate chain a client checks in the Noise handshake is rooted in
// whatsmeow.WACertPubKey, a process-wide variable: a process trusts one root,
// set once before any client connects and never changed while clients run.
// In-process networks share a root derived from a fixed seed; a network
// running as its own process makes a random root and writes its public half
// to a file that the server process reads (RootFile).
var (
	defaultRoot = keys.NewKeyPairFromPrivateKey(sha256.Sum256([]byte("wagraph wafake root key")))
	trust       struct {
		sync.Mutex
		root *[32]byte
	}
)

// TrustRoot makes every whatsmeow client of this process accept servers
// certified by root — and no longer WhatsApp's. Only tests and the sandbox
// mode call it. Trusting a second, different root fails: clients already
// running would stop verifying.
func TrustRoot(root [32]byte) error {
	trust.Lock()
	defer trust.Unlock()
	if trust.root != nil {
		if *trust.root != root {
			return errors.New("wafake: this process already trusts another fake root")
		}
		return nil
	}
	trust.root = &root
	whatsmeow.WACertPubKey = root
	return nil
}

// NewRootKey returns a random root key for a network of its own process.
func NewRootKey() *keys.KeyPair { return keys.NewKeyPair() }

const intermediateSerial = 7

// Validity of the certificates, around the moment of the handshake. whatsmeow
// refuses a certificate outside NotBefore…NotAfter (checkCertValidity,
// handshake.go); the margin before now tolerates a client clock slightly
// behind the network's.
const (
	certNotBeforeMargin = time.Hour
	intermediateLife    = 365 * 24 * time.Hour
	leafLife            = 30 * 24 * time.Hour
)

// certChain signs a server's static key into the chain a client verifies at
// time now: root → intermediate → leaf (the static key).
func certChain(root, serverStatic *keys.KeyPair, now time.Time) ([]byte, error) {
	inter := keys.NewKeyPairFromPrivateKey(sha256.Sum256(append([]byte("wafake intermediate"), root.Priv[:]...)))
	notBefore := uint64(now.Add(-certNotBeforeMargin).Unix())
	interDetails, err := proto.Marshal(&waCert.CertChain_NoiseCertificate_Details{
		Serial:       proto.Uint32(intermediateSerial),
		IssuerSerial: proto.Uint32(whatsmeow.WACertIssuerSerial),
		Key:          inter.Pub[:],
		NotBefore:    proto.Uint64(notBefore),
		NotAfter:     proto.Uint64(uint64(now.Add(intermediateLife).Unix())),
	})
	if err != nil {
		return nil, fmt.Errorf("marshal intermediate: %w", err)
	}
	leafDetails, err := proto.Marshal(&waCert.CertChain_NoiseCertificate_Details{
		Serial:       proto.Uint32(intermediateSerial + 1),
		IssuerSerial: proto.Uint32(intermediateSerial),
		Key:          serverStatic.Pub[:],
		NotBefore:    proto.Uint64(notBefore),
		NotAfter:     proto.Uint64(uint64(now.Add(leafLife).Unix())),
	})
	if err != nil {
		return nil, fmt.Errorf("marshal leaf: %w", err)
	}
	interSig := ecc.CalculateSignature(ecc.NewDjbECPrivateKey(*root.Priv), interDetails)
	leafSig := ecc.CalculateSignature(ecc.NewDjbECPrivateKey(*inter.Priv), leafDetails)
	return proto.Marshal(&waCert.CertChain{
		Intermediate: &waCert.CertChain_NoiseCertificate{Details: interDetails, Signature: interSig[:]},
		Leaf:         &waCert.CertChain_NoiseCertificate{Details: leafDetails, Signature: leafSig[:]},
	})
}

// RootFile is what a network of its own process publishes for the server
// process: where it listens and the public key of its root.
type RootFile struct {
	Addr    string `json:"addr"`
	RootKey string `json:"rootPublicKey"` // hex
}

// WriteRootFile writes the network's address and root public key to path,
// readable by its owner only.
func (n *Network) WriteRootFile(path string) error {
	b, err := json.MarshalIndent(RootFile{Addr: n.Addr(), RootKey: hex.EncodeToString(n.root.Pub[:])}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o600)
}

// ReadRootFile reads a RootFile and returns the address and root key.
func ReadRootFile(path string) (string, [32]byte, error) {
	var rf RootFile
	b, err := os.ReadFile(path)
	if err != nil {
		return "", [32]byte{}, err
	}
	if err := json.Unmarshal(b, &rf); err != nil {
		return "", [32]byte{}, fmt.Errorf("%s: %w", path, err)
	}
	key, err := hex.DecodeString(rf.RootKey)
	if err != nil || len(key) != 32 {
		return "", [32]byte{}, fmt.Errorf("%s: rootPublicKey is not 32 bytes of hex", path)
	}
	return rf.Addr, [32]byte(key), nil
}

// rootKeyFileName is where StateRoot keeps a network's root key.
const rootKeyFileName = "root-key"

// StateRoot returns the root key kept in dir (a network's state
// directory), made and written there, readable by its owner only, on
// first use: a network of its own process that keeps its world keeps its
// root too, so a server that trusts it (TrustRoot: once per process) still
// does after the network restarts.
func StateRoot(dir string) (*keys.KeyPair, error) {
	path := filepath.Join(dir, rootKeyFileName)
	b, err := os.ReadFile(path)
	if err == nil {
		key, derr := hex.DecodeString(strings.TrimSpace(string(b)))
		if derr != nil || len(key) != 32 {
			return nil, fmt.Errorf("wafake: %s is not a root key (32 bytes of hex): remove it, and the state beside it, to start a new network", path)
		}
		return keys.NewKeyPairFromPrivateKey([32]byte(key)), nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("wafake: read the root key: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("wafake: state directory: %w", err)
	}
	root := NewRootKey()
	if err := writeFileAtomic(path, []byte(hex.EncodeToString(root.Priv[:])+"\n")); err != nil {
		return nil, fmt.Errorf("wafake: write the root key: %w", err)
	}
	return root, nil
}

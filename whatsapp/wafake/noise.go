package wafake

import (
	"crypto/cipher"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"

	"go.mau.fi/whatsmeow/socket"
	"go.mau.fi/whatsmeow/util/gcmutil"
	"golang.org/x/crypto/curve25519"
	"golang.org/x/crypto/hkdf"
)

// handshake is the server's side of Noise_XX_25519_AESGCM_SHA256 as
// WhatsApp runs it. whatsmeow's NoiseHandshake cannot finish on a server
// (its chaining key is unexported), so the ~same state machine is kept
// here, with the split reversed: the server reads with the first key.
type handshake struct {
	hash, salt []byte
	key        cipher.AEAD
	counter    uint32
}

func newHandshake() (*handshake, error) {
	h := &handshake{hash: []byte(socket.NoiseStartPattern)} // exactly 32 bytes: used verbatim
	h.salt = h.hash
	var err error
	if h.key, err = gcmutil.Prepare(h.hash); err != nil {
		return nil, err
	}
	h.authenticate(socket.WAConnHeader)
	return h, nil
}

func (h *handshake) authenticate(data []byte) {
	sum := sha256.Sum256(append(append([]byte{}, h.hash...), data...))
	h.hash = sum[:]
}

func iv(n uint32) []byte {
	b := make([]byte, 12)
	binary.BigEndian.PutUint32(b[8:], n)
	return b
}

func (h *handshake) encrypt(plaintext []byte) []byte {
	c := h.key.Seal(nil, iv(h.counter), plaintext, h.hash)
	h.counter++
	h.authenticate(c)
	return c
}

func (h *handshake) decrypt(ciphertext []byte) ([]byte, error) {
	p, err := h.key.Open(nil, iv(h.counter), ciphertext, h.hash)
	h.counter++
	if err != nil {
		return nil, err
	}
	h.authenticate(ciphertext)
	return p, nil
}

func (h *handshake) mix(priv, pub [32]byte) error {
	secret, err := curve25519.X25519(priv[:], pub[:])
	if err != nil {
		return fmt.Errorf("x25519: %w", err)
	}
	first, second, err := expand(h.salt, secret)
	if err != nil {
		return err
	}
	h.counter = 0
	h.salt = first
	h.key, err = gcmutil.Prepare(second)
	return err
}

// split returns the transport ciphers: the client writes with the first key,
// so the server reads with it.
func (h *handshake) split() (read, write cipher.AEAD, err error) {
	first, second, err := expand(h.salt, nil)
	if err != nil {
		return nil, nil, err
	}
	if read, err = gcmutil.Prepare(first); err != nil {
		return nil, nil, err
	}
	if write, err = gcmutil.Prepare(second); err != nil {
		return nil, nil, err
	}
	return read, write, nil
}

func expand(salt, secret []byte) ([]byte, []byte, error) {
	r := hkdf.New(sha256.New, secret, salt, nil)
	a, b := make([]byte, 32), make([]byte, 32)
	if _, err := io.ReadFull(r, a); err != nil {
		return nil, nil, err
	}
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, nil, err
	}
	return a, b, nil
}

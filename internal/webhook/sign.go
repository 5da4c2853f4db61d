package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The Standard Webhooks headers (https://www.standardwebhooks.com), spelled
// in lower case as the specification writes them.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// secretPrefix marks a Standard Webhooks secret: the key bytes follow,
// base64-encoded.
const secretPrefix = "whsec_"

// signatureVersion prefixes each HMAC-SHA256 signature in webhook-signature.
const signatureVersion = "v1,"

// errSecret is the only thing a malformed secret is reported as: the text of
// a decoding error could quote part of the secret.
var errSecret = errors.New("webhook secret is not whsec_ followed by base64 key bytes")

// Sign returns the webhook-signature value of one delivery: "v1," and the
// base64 HMAC-SHA256, keyed by the bytes the secret encodes, of
// "id.timestamp.body" with the timestamp in unix seconds. ts is the time the
// request is sent: receivers refuse a timestamp far from their clock.
func Sign(secret string, id string, ts time.Time, body []byte) (string, error) {
	key, err := secretKey(secret)
	if err != nil {
		return "", err
	}
	if err := checkID(id); err != nil {
		return "", err
	}
	mac := hmac.New(sha256.New, key)
	// The three parts are written separately: body is not copied.
	mac.Write([]byte(id))
	mac.Write([]byte{'.'})
	mac.Write([]byte(strconv.FormatInt(ts.Unix(), 10)))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return signatureVersion + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// SignedHeaders returns the headers a delivery sets itself: webhook-id,
// webhook-timestamp, webhook-signature and Content-Type: application/json.
// Header names are case-insensitive: http.Header stores them canonicalised
// (Webhook-Id), HTTP/2 sends them in lower case; either is the same header.
func SignedHeaders(secret string, id string, ts time.Time, body []byte) (http.Header, error) {
	sig, err := Sign(secret, id, ts, body)
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(HeaderSignature, sig)
	h.Set("Content-Type", "application/json")
	return h, nil
}

// CheckSecret reports whether secret is a webhook secret as wagraph hands
// them out (whsec_ and the base64 key bytes): with anything else every
// signature check fails. Its error never quotes the secret.
func CheckSecret(secret string) error {
	_, err := secretKey(secret)
	return err
}

// secretKey returns the HMAC key a whsec_ secret encodes.
func secretKey(secret string) ([]byte, error) {
	enc, ok := strings.CutPrefix(secret, secretPrefix)
	if !ok || enc == "" {
		return nil, errSecret
	}
	key, err := base64.StdEncoding.DecodeString(enc)
	if err != nil || len(key) == 0 {
		return nil, errSecret
	}
	return key, nil
}

// checkID refuses an id that could not travel in a header: it is signed as
// sent, so one the HTTP client would refuse or rewrite must fail here.
func checkID(id string) error {
	if id == "" {
		return errors.New("webhook id is empty")
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c <= ' ' || c >= 0x7f {
			return fmt.Errorf("webhook id has a byte 0x%02x that is not printable ASCII", c)
		}
	}
	return nil
}

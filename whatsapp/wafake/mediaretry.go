package wafake

import (
	"crypto/rand"
	"fmt"
	"net/url"
	"sync"
	"time"

	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waMmsRetry"
	"go.mau.fi/whatsmeow/util/gcmutil"
	"go.mau.fi/whatsmeow/util/hkdfutil"
	"google.golang.org/protobuf/proto"
)

// Media retry: the media host deletes blobs after a while; a device that
// finds one gone asks the phone to upload it again with a receipt of type
// server-error (whatsmeow's SendMediaRetryReceipt), encrypted with a key
// derived from the media key. The phone answers with a mediaretry
// notification carrying the new direct path (events.MediaRetry), or an
// error when it no longer has the media.

// retryState keeps the media of the messages the network's phones sent, by
// message id, as the phones keep their chats' media. Its zero value is
// ready.
type retryState struct {
	mu   sync.Mutex
	sent map[string]sentMedia
}

type sentMedia struct {
	mediaKey []byte
	blob     []byte // the encrypted blob as uploaded
	path     string // its path on the media host (before '?')
}

// rememberMedia keeps the media of message id, uploaded at directPath.
func (n *Network) rememberMedia(id, directPath string, mediaKey []byte) {
	u, err := url.Parse(directPath)
	if err != nil {
		return
	}
	blob, ok := n.media.get(u.Path)
	if !ok {
		return
	}
	n.retries.mu.Lock()
	defer n.retries.mu.Unlock()
	if n.retries.sent == nil {
		n.retries.sent = map[string]sentMedia{}
	}
	n.retries.sent[id] = sentMedia{mediaKey: mediaKey, blob: blob, path: u.Path}
	n.changed()
}

// ExpireMedia deletes the blob of message id (a media message one of the
// network's phones sent) from the media host, as WhatsApp does after some
// weeks: downloads fail with 404 until a device asks for a media retry.
// With forget the phone loses the media too: a retry then fails (error
// code 2, "the phone no longer has it").
func (n *Network) ExpireMedia(id string, forget bool) error {
	n.retries.mu.Lock()
	m, ok := n.retries.sent[id]
	if forget {
		delete(n.retries.sent, id)
	}
	n.retries.mu.Unlock()
	n.changed()
	if !ok {
		return fmt.Errorf("wafake: no media message %s sent by a phone of the network", id)
	}
	n.media.drop(m.path)
	return nil
}

// answerMediaRetry answers a client's media retry receipt as the phone
// does: it uploads the media again and sends the new direct path, or an
// error (code 2: the phone no longer has it). It reports whether node was
// a media retry receipt.
func (n *Network) answerMediaRetry(c *conn, node *waBinary.Node) bool {
	ag := node.AttrGetter()
	rmr, ok := node.GetOptionalChildByTag("rmr")
	if ag.OptionalString("type") != "server-error" || !ok || c.dev == nil {
		return false
	}
	id := ag.String("id")
	n.retries.mu.Lock()
	m, known := n.retries.sent[id]
	n.retries.mu.Unlock()
	enc, err := n.reupload(id, m, known, node)
	if err != nil {
		n.log.Debug("wafake: media retry refused", "id", id, "err", err)
		enc = waBinary.Node{Tag: "error", Attrs: waBinary.Attrs{"code": "2"}}
	}
	out := waBinary.Node{Tag: "notification", Attrs: waBinary.Attrs{
		"type": "mediaretry", "id": id, "from": c.dev.acct.jid(), "t": unixString(time.Now()),
	}, Content: []waBinary.Node{{Tag: "rmr", Attrs: rmr.Attrs}, enc}}
	// Queued under the message id: the client's ack of the notification
	// names it.
	n.queue(c.dev, id, out)
	return true
}

// reupload checks the retry request (it must decrypt with the media key
// to the message id), stores the blob again under a new path and returns
// the <encrypt> of the notification that tells it.
func (n *Network) reupload(id string, m sentMedia, known bool, node *waBinary.Node) (waBinary.Node, error) {
	if !known {
		return waBinary.Node{}, fmt.Errorf("the phone has no media for %s", id)
	}
	ct, ok1 := node.GetChildByTag("encrypt", "enc_p").Content.([]byte)
	iv, ok2 := node.GetChildByTag("encrypt", "enc_iv").Content.([]byte)
	if !ok1 || !ok2 {
		return waBinary.Node{}, fmt.Errorf("receipt without an encrypted request")
	}
	key := hkdfutil.SHA256(m.mediaKey, nil, []byte("WhatsApp Media Retry Notification"), 32)
	plain, err := gcmutil.Decrypt(key, iv, ct, []byte(id))
	if err != nil {
		return waBinary.Node{}, fmt.Errorf("decrypt the request: %w", err)
	}
	var req waMmsRetry.ServerErrorReceipt
	if err := proto.Unmarshal(plain, &req); err != nil || req.GetStanzaID() != id {
		return waBinary.Node{}, fmt.Errorf("request for %q in the receipt of %s (%v)", req.GetStanzaID(), id, err)
	}
	dp := n.media.put(m.blob)
	n.rememberMedia(id, dp, m.mediaKey)
	plain, err = proto.Marshal(&waMmsRetry.MediaRetryNotification{
		StanzaID: proto.String(id), DirectPath: proto.String(dp), Result: waMmsRetry.MediaRetryNotification_SUCCESS.Enum(),
	})
	if err != nil {
		return waBinary.Node{}, err
	}
	iv = make([]byte, 12)
	_, _ = rand.Read(iv)
	if ct, err = gcmutil.Encrypt(key, iv, plain, []byte(id)); err != nil {
		return waBinary.Node{}, err
	}
	return waBinary.Node{Tag: "encrypt", Content: []waBinary.Node{{Tag: "enc_p", Content: ct}, {Tag: "enc_iv", Content: iv}}}, nil
}

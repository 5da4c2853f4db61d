package wafake

import (
	"bytes"
	"crypto/aes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.mau.fi/whatsmeow"
	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/util/cbcutil"
	"go.mau.fi/whatsmeow/util/hkdfutil"
	"google.golang.org/protobuf/proto"
)

// The media server (mmg): clients ask for a media connection over the
// socket, then upload encrypted blobs and download them over HTTPS. Blobs
// are opaque to the server, as on WhatsApp; only a recipient holding the
// media key from the (Signal-encrypted) message can read them — MediaOf plays
// that recipient.

// mediaHost is the one host <media_conn> names. The real name can stay: a
// client pointed at the network sends every host to it.
const mediaHost = "mmg.whatsapp.net"

const (
	mediaMACLen  = 10        // whatsmeow's mediaHMACLength: the blob ends with HMAC-SHA256[:10]
	maxMediaSize = 128 << 20 // beyond WhatsApp's own document limit for linked devices
)

// ErrUnknownMedia is returned for a blob the network does not hold.
var ErrUnknownMedia = errors.New("wafake: no such media")

// mediaStore holds the uploaded blobs in memory and, with a state
// directory, on disk too (mediafiles.go). Its zero value is ready.
type mediaStore struct {
	mu    sync.Mutex
	auth  string
	blobs map[string][]byte // by the path of the direct path (before '?')
	// With a state directory: where blobs are kept, each in a file named
	// by its SHA-256, and the file of each path, including the blobs of
	// an earlier network, read from their files when asked for.
	dir   string
	files map[string]string
	gen   *atomic.Uint64 // the network's change count
}

// authToken is the upload credential <media_conn> hands out; one per
// network, created on first use.
func (s *mediaStore) authToken() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.auth == "" {
		s.auth = randomToken(24)
		s.changedLocked()
	}
	return s.auth
}

// put stores a blob under a fresh path and returns the direct path. The
// direct path carries a query because whatsmeow downloads from
// "https://<host><direct_path>&hash=…", and the path part identifies the
// blob whatever query follows.
func (s *mediaStore) put(blob []byte) string {
	path := "/v/t62.7118-24/" + randomHex(16) + "_n.enc"
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.blobs == nil {
		s.blobs = map[string][]byte{}
	}
	s.blobs[path] = blob
	s.keepLocked(path, blob)
	return path + "?ccb=11-4&oh=" + randomHex(16) + "&oe=" + fmt.Sprintf("%X", time.Now().Add(30*24*time.Hour).Unix())
}

// get returns the stored blob of a path; callers must not modify it.
func (s *mediaStore) get(path string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.blobs[path]; ok {
		return b, true
	}
	return s.readLocked(path)
}

// remove deletes the blob of path if token (base64url SHA-256) names it.
func (s *mediaStore) remove(path, token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.blobs[path]
	if !ok {
		if b, ok = s.readLocked(path); !ok {
			return false
		}
	}
	sum := sha256.Sum256(b)
	if base64.URLEncoding.EncodeToString(sum[:]) != token {
		return false
	}
	s.dropLocked(path)
	return true
}

// drop deletes the blob of path from the host.
func (s *mediaStore) drop(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropLocked(path)
}

func (s *mediaStore) dropLocked(path string) {
	delete(s.blobs, path)
	if _, ok := s.files[path]; ok {
		delete(s.files, path)
		s.changedLocked()
	}
}

// mmsType is the upload path segment of a media type, as whatsmeow names it
// (its table is unexported).
func mmsType(mt whatsmeow.MediaType) string {
	switch mt {
	case whatsmeow.MediaImage:
		return "image"
	case whatsmeow.MediaVideo:
		return "video"
	case whatsmeow.MediaAudio:
		return "audio"
	case whatsmeow.MediaDocument:
		return "document"
	case whatsmeow.MediaHistory:
		return "md-msg-hist"
	case whatsmeow.MediaAppState:
		return "md-app-state"
	case whatsmeow.MediaStickerPack:
		return "sticker-pack"
	case whatsmeow.MediaLinkThumbnail:
		return "thumbnail-link"
	}
	return ""
}

// handleMediaConn answers <media_conn/> (w:m). whatsmeow requires the four
// attributes as integers except auth, caches the answer for ttl seconds and
// uploads to the first host.
func (n *Network) handleMediaConn(c *conn, node *waBinary.Node) ([]waBinary.Node, *iqError) {
	if _, ok := node.GetOptionalChildByTag("media_conn"); !ok {
		return nil, &iqError{code: 400, text: "bad-request"}
	}
	return []waBinary.Node{{
		Tag: "media_conn",
		Attrs: waBinary.Attrs{
			"auth": n.media.authToken(), "ttl": "300", "auth_ttl": "21600", "max_buckets": "12",
		},
		Content: []waBinary.Node{{Tag: "host", Attrs: waBinary.Attrs{"hostname": mediaHost}}},
	}}, nil
}

// serveMediaUpload takes POST /mms/<type>/<token>?auth=&token=, where token
// is the base64url SHA-256 of the body, and answers the JSON whatsmeow's
// rawUpload decodes.
func (n *Network) serveMediaUpload(w http.ResponseWriter, r *http.Request) {
	typ, token, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/mms/"), "/")
	if !ok || !knownMMSType(typ) || token == "" || strings.Contains(token, "/") {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	if q.Get("auth") != n.media.authToken() {
		http.Error(w, "bad auth", http.StatusUnauthorized)
		return
	}
	body, err := readUpload(w, r)
	if err != nil {
		http.Error(w, "too large", http.StatusRequestEntityTooLarge)
		return
	}
	sum := sha256.Sum256(body)
	if q.Get("token") != token || base64.URLEncoding.EncodeToString(sum[:]) != token {
		http.Error(w, "hash mismatch", http.StatusBadRequest)
		return
	}
	if len(body) <= mediaMACLen || (len(body)-mediaMACLen)%aes.BlockSize != 0 {
		http.Error(w, "not an encrypted media blob", http.StatusBadRequest)
		return
	}
	dp := n.media.put(body)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"url": "https://" + mediaHost + dp, "direct_path": dp})
}

// readUpload reads an upload's body, at most maxMediaSize bytes: into a
// buffer of its announced length when it has one (whatsmeow's does), so a
// blob of tens of MiB is not copied over and over as io.ReadAll's buffer
// grows (under the race detector, each of those copies cost seconds).
func readUpload(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body := http.MaxBytesReader(w, r.Body, maxMediaSize)
	if r.ContentLength <= 0 || r.ContentLength > maxMediaSize {
		return io.ReadAll(body)
	}
	buf := make([]byte, r.ContentLength)
	if _, err := io.ReadFull(body, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// serveMediaDelete takes DELETE /mms/<type>/<token>?token=&d_md=&auth=:
// whatsmeow deletes a history sync blob once it has processed it
// (DeleteMedia, upload.go). d_md is the base64url of the direct path
// (without its query), token the base64url SHA-256 of the blob.
func (n *Network) serveMediaDelete(w http.ResponseWriter, r *http.Request) {
	typ, token, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/mms/"), "/")
	q := r.URL.Query()
	path, err := base64.RawURLEncoding.DecodeString(q.Get("d_md"))
	if !ok || !knownMMSType(typ) || token == "" || q.Get("token") != token || err != nil {
		http.NotFound(w, r)
		return
	}
	if q.Get("auth") != n.media.authToken() {
		http.Error(w, "bad auth", http.StatusUnauthorized)
		return
	}
	if !n.media.remove(string(path), token) {
		http.NotFound(w, r)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func knownMMSType(typ string) bool {
	switch typ {
	case "image", "video", "audio", "ptt", "document", "sticker", "md-msg-hist", "md-app-state", "sticker-pack", "thumbnail-link":
		return true
	}
	return false
}

// serveMedia answers a download, by message URL or by direct path with
// &hash=…&mms-type=… appended; a hash that does not name the blob is not
// found either.
func (n *Network) serveMedia(w http.ResponseWriter, r *http.Request) {
	blob, ok := n.media.get(r.URL.Path)
	if h := r.URL.Query().Get("hash"); ok && h != "" {
		sum := sha256.Sum256(blob)
		ok = h == base64.URLEncoding.EncodeToString(sum[:])
	}
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = w.Write(blob)
}

// Upload encrypts data as a client would and stores it, as if uploaded; the
// response fills a media message the network's phones send.
func (n *Network) Upload(data []byte, mt whatsmeow.MediaType) (whatsmeow.UploadResponse, error) {
	if mmsType(mt) == "" {
		return whatsmeow.UploadResponse{}, fmt.Errorf("wafake: unknown media type %q", mt)
	}
	mediaKey := make([]byte, 32)
	_, _ = rand.Read(mediaKey)
	iv, cipherKey, macKey := mediaKeys(mediaKey, mt)
	// cbcutil.Encrypt appends the padding to its input slice: give it one
	// of its own so the caller's array is never written.
	ct, err := cbcutil.Encrypt(cipherKey, iv, bytes.Clone(data))
	if err != nil {
		return whatsmeow.UploadResponse{}, fmt.Errorf("wafake: encrypt media: %w", err)
	}
	h := hmac.New(sha256.New, macKey)
	h.Write(iv)
	h.Write(ct)
	blob := append(ct, h.Sum(nil)[:mediaMACLen]...)
	encSum, sum := sha256.Sum256(blob), sha256.Sum256(data)
	dp := n.media.put(blob)
	return whatsmeow.UploadResponse{
		URL: "https://" + mediaHost + dp, DirectPath: dp,
		MediaKey: mediaKey, FileEncSHA256: encSum[:], FileSHA256: sum[:], FileLength: uint64(len(data)),
	}, nil
}

// SendImage has the phone of account from send an image to the linked
// devices of account to; it returns the message id.
func (n *Network) SendImage(from, to string, data []byte, mimetype, caption string) (string, error) {
	for _, p := range []string{from, to} {
		if err := ValidPhone(p); err != nil {
			return "", err
		}
	}
	up, err := n.Upload(data, whatsmeow.MediaImage)
	if err != nil {
		return "", err
	}
	img := &waE2E.ImageMessage{
		URL: proto.String(up.URL), DirectPath: proto.String(up.DirectPath),
		MediaKey: up.MediaKey, FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256,
		FileLength: proto.Uint64(up.FileLength), Mimetype: proto.String(mimetype),
		MediaKeyTimestamp: proto.Int64(time.Now().Unix()),
	}
	if caption != "" {
		img.Caption = proto.String(caption)
	}
	id, err := n.SendMessage(from, to, &waE2E.Message{ImageMessage: img})
	if err == nil {
		n.rememberMedia(id, up.DirectPath, up.MediaKey) // mediaretry.go: the phone keeps its media
	}
	return id, err
}

// MediaOf reads the attachment of msg (image, video, audio, document or
// sticker) as its recipient would: the blob the network holds under its
// direct path, checked against FileEncSHA256 and the HMAC, decrypted with
// the media key, and checked against FileSHA256 and FileLength.
func (n *Network) MediaOf(msg *waE2E.Message) ([]byte, error) {
	dm := attachment(msg)
	if dm == nil {
		return nil, errors.New("wafake: the message has no attachment")
	}
	mt := whatsmeow.GetMediaType(dm)
	path := dm.GetDirectPath()
	if path == "" {
		if u, ok := dm.(interface{ GetURL() string }); ok {
			path = u.GetURL()
		}
	}
	u, err := url.Parse(path)
	if err != nil || path == "" {
		return nil, fmt.Errorf("wafake: attachment without a usable direct path or URL (%q)", path)
	}
	blob, ok := n.media.get(u.Path)
	if !ok {
		return nil, fmt.Errorf("%w at %s", ErrUnknownMedia, u.Path)
	}
	if len(dm.GetMediaKey()) != 32 {
		return nil, fmt.Errorf("wafake: media key of %d bytes", len(dm.GetMediaKey()))
	}
	if len(blob) <= mediaMACLen {
		return nil, errors.New("wafake: stored blob too short")
	}
	if encSum := sha256.Sum256(blob); !bytes.Equal(encSum[:], dm.GetFileEncSHA256()) {
		return nil, errors.New("wafake: FileEncSHA256 does not match the blob")
	}
	iv, cipherKey, macKey := mediaKeys(dm.GetMediaKey(), mt)
	ct, mac := blob[:len(blob)-mediaMACLen], blob[len(blob)-mediaMACLen:]
	h := hmac.New(sha256.New, macKey)
	h.Write(iv)
	h.Write(ct)
	if !hmac.Equal(h.Sum(nil)[:mediaMACLen], mac) {
		return nil, errors.New("wafake: media HMAC mismatch (wrong media key or media type)")
	}
	// cbcutil.Decrypt decrypts in place: never hand it the stored blob.
	plain, err := cbcutil.Decrypt(cipherKey, iv, bytes.Clone(ct))
	if err != nil {
		return nil, fmt.Errorf("wafake: decrypt media: %w", err)
	}
	if sum := sha256.Sum256(plain); !bytes.Equal(sum[:], dm.GetFileSHA256()) {
		return nil, errors.New("wafake: FileSHA256 does not match the decrypted media")
	}
	if l, ok := dm.(interface{ GetFileLength() uint64 }); ok && l.GetFileLength() != uint64(len(plain)) {
		return nil, fmt.Errorf("wafake: FileLength %d, decrypted %d bytes", l.GetFileLength(), len(plain))
	}
	return plain, nil
}

// attachment finds the downloadable part of a message, looking through the
// wrappers clients put around media (disappearing, view once, document with
// caption).
func attachment(msg *waE2E.Message) whatsmeow.DownloadableMessage {
	for range 4 {
		switch {
		case msg == nil:
			return nil
		case msg.GetImageMessage() != nil:
			return msg.GetImageMessage()
		case msg.GetVideoMessage() != nil:
			return msg.GetVideoMessage()
		case msg.GetAudioMessage() != nil:
			return msg.GetAudioMessage()
		case msg.GetDocumentMessage() != nil:
			return msg.GetDocumentMessage()
		case msg.GetStickerMessage() != nil:
			return msg.GetStickerMessage()
		case msg.GetEphemeralMessage() != nil:
			msg = msg.GetEphemeralMessage().GetMessage()
		case msg.GetViewOnceMessage() != nil:
			msg = msg.GetViewOnceMessage().GetMessage()
		case msg.GetViewOnceMessageV2() != nil:
			msg = msg.GetViewOnceMessageV2().GetMessage()
		case msg.GetDocumentWithCaptionMessage() != nil:
			msg = msg.GetDocumentWithCaptionMessage().GetMessage()
		default:
			return nil
		}
	}
	return nil
}

// mediaKeys expands a media key as whatsmeow's getMediaKeys does: the media
// type string is the HKDF info.
func mediaKeys(mediaKey []byte, mt whatsmeow.MediaType) (iv, cipherKey, macKey []byte) {
	k := hkdfutil.SHA256(mediaKey, nil, []byte(mt), 112)
	return k[:16], k[16:48], k[48:80]
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func randomToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// encMediaType is the mediatype attribute of the <enc> a message travels
// in, as whatsmeow's sender sets it (send.go getMediaTypeFromMessage); the
// receiving whatsmeow copies it into MessageInfo.MediaType.
func encMediaType(msg *waE2E.Message) string {
	for range 4 {
		switch {
		case msg == nil:
			return ""
		case msg.GetViewOnceMessage() != nil:
			msg = msg.GetViewOnceMessage().GetMessage()
		case msg.GetViewOnceMessageV2() != nil:
			msg = msg.GetViewOnceMessageV2().GetMessage()
		case msg.GetEphemeralMessage() != nil:
			msg = msg.GetEphemeralMessage().GetMessage()
		case msg.GetDocumentWithCaptionMessage() != nil:
			msg = msg.GetDocumentWithCaptionMessage().GetMessage()
		case msg.GetExtendedTextMessage().GetTitle() != "":
			return "url"
		case msg.GetImageMessage() != nil:
			return "image"
		case msg.GetStickerMessage() != nil:
			return "sticker"
		case msg.GetDocumentMessage() != nil:
			return "document"
		case msg.GetAudioMessage() != nil:
			if msg.GetAudioMessage().GetPTT() {
				return "ptt"
			}
			return "audio"
		case msg.GetVideoMessage() != nil:
			if msg.GetVideoMessage().GetGifPlayback() {
				return "gif"
			}
			return "video"
		case msg.GetContactMessage() != nil:
			return "vcard"
		case msg.GetContactsArrayMessage() != nil:
			return "contact_array"
		default:
			return ""
		}
	}
	return ""
}

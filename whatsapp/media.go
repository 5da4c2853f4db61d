package whatsapp

// The media of sent and received messages: what a message keeps to fetch
// its attachment again, and the download and decryption of it on demand.
// WhatsApp keeps only the encrypted blob on its media hosts; the key is in
// the (end-to-end encrypted) message, so the record is all it takes.

import (
	"context"
	"errors"
	"fmt"

	"go.mau.fi/whatsmeow"

	"github.com/wagraph/wagraph/internal/fault"
)

// MediaRef is what the download of a message's attachment needs: where the
// encrypted blob lives on WhatsApp's media hosts, its key and checksums.
// The message store keeps it as JSON.
type MediaRef struct {
	DirectPath    string `json:"directPath"`
	MediaKey      []byte `json:"mediaKey"`
	FileSHA256    []byte `json:"fileSha256"`
	FileEncSHA256 []byte `json:"fileEncSha256"`
	FileLength    uint64 `json:"fileLength"`
	Mimetype      string `json:"mimetype,omitempty"`
	FileName      string `json:"fileName,omitempty"`
	// MediaType is the media host's name of the kind: image (stickers
	// too), video, audio or document. It selects the key derivation.
	MediaType string `json:"mediaType"`
}

// mediaKinds are the MediaRef kinds, each named as the media host names
// it, with the whatsmeow media type (the HKDF info of the key expansion).
func mediaKinds() map[string]whatsmeow.MediaType {
	return map[string]whatsmeow.MediaType{
		"image": whatsmeow.MediaImage, "video": whatsmeow.MediaVideo,
		"audio": whatsmeow.MediaAudio, "document": whatsmeow.MediaDocument,
	}
}

// errBadRef: a MediaRef refOf never makes (no kind, no direct path).
var errBadRef = errors.New("not a downloadable media reference")

// attachment is the part every media message (image, video, audio,
// document, sticker) has.
type attachment interface {
	whatsmeow.DownloadableMessage
	GetMimetype() string
	GetFileLength() uint64
}

// refOf is the MediaRef of an attachment; nil when it cannot be downloaded
// (no direct path or no key: nothing to fetch or nothing to decrypt with).
func refOf(a attachment, fileName string) *MediaRef {
	var kind string
	for k, mt := range mediaKinds() {
		if whatsmeow.GetMediaType(a) == mt {
			kind = k
		}
	}
	if kind == "" || a.GetDirectPath() == "" || len(a.GetMediaKey()) == 0 {
		return nil
	}
	return &MediaRef{
		DirectPath: a.GetDirectPath(), MediaKey: a.GetMediaKey(), FileSHA256: a.GetFileSHA256(),
		FileEncSHA256: a.GetFileEncSHA256(), FileLength: a.GetFileLength(), Mimetype: a.GetMimetype(),
		FileName: fileName, MediaType: kind,
	}
}

// Download fetches the attachment ref names from WhatsApp's media hosts
// through the session's connected client, checks it against its
// checksums and returns it decrypted. A blob the media host no longer has
// (WhatsApp deletes media after some weeks) is NOT_FOUND.
func (m *Manager) Download(ctx context.Context, sessionID string, ref MediaRef) ([]byte, error) {
	cli, err := m.client(sessionID)
	if err != nil {
		return nil, err
	}
	mt, ok := mediaKinds()[ref.MediaType]
	if !ok || ref.DirectPath == "" {
		return nil, fmt.Errorf("media reference of type %q without a direct path: %w", ref.MediaType, errBadRef)
	}
	// allowNoHash false: whatsmeow checks the plaintext against FileSHA256,
	// which also covers the length (it no longer checks FileLength itself).
	data, err := cli.DownloadMediaWithPath(ctx, ref.DirectPath, ref.FileEncSHA256, ref.FileSHA256, ref.MediaKey, mt, "", false)
	if err != nil {
		return nil, downloadFault(sessionID, err)
	}
	return data, nil
}

// downloadFault classifies a failed download. The media host answers 404
// or 410 for a blob it deleted; a blob that fails its checksums or MAC is
// WhatsApp's error, not the caller's.
func downloadFault(id string, err error) error {
	switch {
	case errors.Is(err, whatsmeow.ErrMediaDownloadFailedWith404), errors.Is(err, whatsmeow.ErrMediaDownloadFailedWith410):
		return fault.Wrap(err, fault.NotFound, "session %s: the media is no longer on WhatsApp's servers", id)
	case errors.Is(err, whatsmeow.ErrInvalidMediaHMAC), errors.Is(err, whatsmeow.ErrInvalidMediaEncSHA256),
		errors.Is(err, whatsmeow.ErrInvalidMediaSHA256), errors.Is(err, whatsmeow.ErrTooShortFile):
		return fault.Wrap(err, fault.WhatsAppError, "session %s: the media WhatsApp's servers returned does not match the message", id)
	}
	return classify(id, "download the media", err)
}

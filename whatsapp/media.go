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
// checksums and returns it decrypted, whole: the download operation's
// answer to another process (DownloadFile keeps it in a file). A blob the
// media host no longer has (WhatsApp deletes media after some weeks) is
// NOT_FOUND.
func (m *Manager) Download(ctx context.Context, sessionID string, ref MediaRef) ([]byte, error) {
	f, err := m.DownloadFile(ctx, sessionID, ref, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Bytes()
}

// DownloadFile is Download into a MediaFile: the blob is written to a
// temporary file, checked and decrypted there, never whole in memory. It
// takes no more than ref's declared size, nor, when max is not 0, more
// than max bytes of plaintext.
func (m *Manager) DownloadFile(ctx context.Context, sessionID string, ref MediaRef, max int64) (*MediaFile, error) {
	cli, err := m.client(sessionID)
	if err != nil {
		return nil, err
	}
	mt, ok := mediaKinds()[ref.MediaType]
	if !ok || ref.DirectPath == "" {
		return nil, fmt.Errorf("media reference of type %q without a direct path: %w", ref.MediaType, errBadRef)
	}
	bound := &errBlobTooLarge{limit: max}
	if declared := int64(ref.FileLength); declared > 0 && (max == 0 || declared <= max) {
		bound = &errBlobTooLarge{limit: declared, declared: true}
	}
	f, err := tempFile()
	if err != nil {
		return nil, err
	}
	out := &boundedFile{f: f, err: bound}
	if bound.limit > 0 {
		out.max = blobLimit(bound.limit)
	}
	// allowNoHash false: whatsmeow checks the plaintext against FileSHA256,
	// which also covers the length (it no longer checks FileLength itself).
	err = cli.DownloadMediaWithPathToFile(ctx, ref.DirectPath, ref.FileEncSHA256, ref.FileSHA256, ref.MediaKey, mt, "", false, out)
	if err != nil {
		f.Close()
		return nil, downloadFault(sessionID, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("session %s: the downloaded media: %w", sessionID, err)
	}
	return &MediaFile{f: f, size: st.Size()}, nil
}

// DownloadFile downloads the attachment ref names into a MediaFile
// (Manager.DownloadFile) wherever its session runs. From the process
// running it, the bytes come in the download operation's answer (as a
// send's media travels in its call), and are then kept in the file.
func DownloadFile(ctx context.Context, r Runner, sessionID string, ref MediaRef, max int64) (*MediaFile, error) {
	var file *MediaFile
	var data []byte
	err := r.Run(ctx, sessionID, Call{Op: OpDownload().Name(), Request: ref, Result: &data,
		Local: func(ctx context.Context, m *Manager) (err error) {
			file, err = m.DownloadFile(ctx, sessionID, ref, max)
			return err
		}})
	switch {
	case err != nil:
		return nil, err
	case file != nil:
		return file, nil
	case max > 0 && int64(len(data)) > max:
		return nil, downloadFault(sessionID, &errBlobTooLarge{limit: max})
	}
	return NewMediaFile(data)
}

// downloadFault classifies a failed download. The media host answers 404
// or 410 for a blob it deleted; a blob that fails its checksums or MAC is
// WhatsApp's error, not the caller's.
func downloadFault(id string, err error) error {
	switch {
	case errors.Is(err, whatsmeow.ErrMediaDownloadFailedWith404), errors.Is(err, whatsmeow.ErrMediaDownloadFailedWith410):
		return fault.Wrap(err, fault.NotFound, "session %s: the media is no longer on WhatsApp's servers", id)
	}
	var big *errBlobTooLarge
	switch {
	case errors.As(err, &big) && !big.declared:
		return fault.Wrap(err, fault.TooLarge, "session %s: the media is larger than the %d bytes this download takes", id, big.limit)
	case errors.As(err, &big):
		return fault.Wrap(err, fault.WhatsAppError, "session %s: the media WhatsApp's servers returned is larger than the %d bytes its message declares", id, big.limit)
	case errors.Is(err, whatsmeow.ErrInvalidMediaHMAC), errors.Is(err, whatsmeow.ErrInvalidMediaEncSHA256),
		errors.Is(err, whatsmeow.ErrInvalidMediaSHA256), errors.Is(err, whatsmeow.ErrTooShortFile):
		return fault.Wrap(err, fault.WhatsAppError, "session %s: the media WhatsApp's servers returned does not match the message", id)
	}
	return classify(id, "download the media", err)
}

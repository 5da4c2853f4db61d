package media

import (
	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/fault"
)

// MaxSticker is the largest sticker WhatsApp's apps send: an animated one
// (a still one is held to 100 KiB).
const MaxSticker = maxAnimatedSticker

// HeadLen is how much of a file's start tells its type (detect): an OGG
// stream's first page, an MP4's leading boxes, what http.DetectContentType
// reads. A document kept in a file is sniffed from that much of it
// (DocumentFile).
const HeadLen = 64 << 10

// OverLimit is the refusal of media of size bytes over limit, WhatsApp's
// for kind (plural: "documents"). what names the media, such as "source
// is" or "message 3EB0… is a document of".
func OverLimit(what string, size int64, kind string, limit int64) error {
	return fault.New(fault.TooLarge, "%s %s; WhatsApp takes %s up to %s", what, sizeOver(size), kind, config.FormatSize(limit))
}

package media

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"mime"
	"path"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/fault"
)

// Limits per kind: what WhatsApp's clients accept. Exported so that the
// OpenAPI text and errors can cite them.
const (
	MaxImage    = 16 << 20
	MaxVideo    = 64 << 20
	MaxAudio    = 16 << 20
	MaxDocument = 100 << 20
)

// File is media ready for WhatsApp.
type File struct {
	Data          []byte
	Mimetype      string // detected (never trusted from the client)
	FileName      string
	Thumbnail     []byte // JPEG thumbnail (images; videos when ffmpeg is there), nil otherwise
	Width, Height uint32 // images (and videos when known)
	Seconds       uint32 // audio/video duration when known
	Waveform      []byte // voice notes: 64 values 0..100
	VoiceNote     bool
	Animated      bool // stickers: an animated WebP
}

// Preparer checks media against what WhatsApp takes and derives what the
// message carries besides the bytes. It holds the process's bounds on
// media work: one Pool for image decoding, one for ffmpeg runs and one for
// downloads of received media (see Pool).
type Preparer struct {
	ffmpeg    string
	log       *slog.Logger
	decodes   *Pool
	ffmpegs   *Pool
	downloads *Pool
}

// PreparerOptions configure a Preparer. Zero values take the defaults.
type PreparerOptions struct {
	// FFmpeg is the resolved path of the converter, "" when there is none:
	// voice notes must then already be OGG/Opus, and videos go without a
	// thumbnail.
	FFmpeg string
	Logger *slog.Logger
	// ImageDecodes, FFmpegRuns and Downloads are how many of each run at
	// once (--media-concurrency); the rest wait up to QueueWait.
	ImageDecodes, FFmpegRuns, Downloads int
	QueueWait                           time.Duration
}

// The defaults of PreparerOptions. Two decodes (at most 256 MiB decoded
// each, see maxDecodedBytes) and two ffmpeg runs keep two cores busy
// without queueing the rest of the server behind them; a download is
// checked and decrypted in a temporary file (its cost is a connection,
// disk and the CPU of its hashes), and a forward holds its slot until it
// has been uploaded again.
const (
	DefaultImageDecodes = 2
	DefaultFFmpegRuns   = 2
	DefaultDownloads    = 4
	// DefaultQueueWait is how long a run waits for a slot: a few decodes'
	// time, short of a client's patience.
	DefaultQueueWait = 20 * time.Second
)

// NewPreparer returns a Preparer with the default bounds. ffmpeg is the
// resolved path of the converter, "" when there is none.
func NewPreparer(ffmpeg string, log *slog.Logger) *Preparer {
	return NewPreparerWith(PreparerOptions{FFmpeg: ffmpeg, Logger: log})
}

// NewPreparerWith returns a Preparer configured by opts.
func NewPreparerWith(opts PreparerOptions) *Preparer {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	orDefault := func(n, def int) int {
		if n <= 0 {
			return def
		}
		return n
	}
	wait := opts.QueueWait
	if wait <= 0 {
		wait = DefaultQueueWait
	}
	return &Preparer{
		ffmpeg:    opts.FFmpeg,
		log:       opts.Logger,
		decodes:   NewPool(orDefault(opts.ImageDecodes, DefaultImageDecodes), wait, "too many images being prepared at once"),
		ffmpegs:   NewPool(orDefault(opts.FFmpegRuns, DefaultFFmpegRuns), wait, "too many audio and video conversions running at once"),
		downloads: NewPool(orDefault(opts.Downloads, DefaultDownloads), wait, "too many media downloads running at once"),
	}
}

// DownloadSlot takes one of the download slots: the caller holds it while
// it downloads an attachment (a forward until it has uploaded it again)
// and calls release after. A nil Preparer bounds nothing.
func (p *Preparer) DownloadSlot(ctx context.Context) (release func(), err error) {
	if p == nil {
		return func() {}, nil
	}
	return p.downloads.Acquire(ctx)
}

// tooLarge is the 413 of a kind's limit.
func tooLarge(size int, kind string, limit int64) error {
	return OverLimit("source is", int64(size), kind, limit)
}

// sizeOver writes a size rounded up to a tenth, so that a file one byte over
// a 16 MiB limit reads "16.1 MiB", not "16.0 MiB".
func sizeOver(n int64) string {
	if n < 1<<20 {
		return config.FormatSize(n)
	}
	return fmt.Sprintf("%.1f MiB", math.Ceil(float64(n)*10/(1<<20))/10)
}

// Video accepts MP4 and 3GPP. Duration and size come from the MP4 boxes;
// the thumbnail is the first frame, when ffmpeg is there.
func (p *Preparer) Video(ctx context.Context, data []byte, fileName string) (File, error) {
	if len(data) > MaxVideo {
		return File{}, tooLarge(len(data), "videos", MaxVideo)
	}
	mt := detect(data)
	switch mt {
	case "video/mp4", "video/3gpp":
	case "image/gif":
		return File{}, fault.New(fault.Unsupported, "source is a GIF (image/gif); convert it to an MP4 video and send that with gifPlayback: true")
	default:
		return File{}, fault.New(fault.Unsupported, "source is %s; WhatsApp takes videos as MP4 (video/mp4) or 3GPP (video/3gpp)", mt)
	}
	f := File{Data: data, Mimetype: mt, FileName: cleanName(fileName)}
	if info, ok := parseMP4(data); ok {
		f.Seconds = uint32(math.Round(info.seconds))
		f.Width, f.Height = info.width, info.height
	}
	if p.ffmpeg == "" {
		return f, nil
	}
	frame, err := p.runFFmpeg(ctx, data, mt, "-an", "-frames:v", "1", "-f", "mjpeg", "-q:v", "3")
	var failed *ffmpegFailed
	switch {
	case errors.As(err, &failed):
		// A frame ffmpeg cannot read does not stop the send: the phone may
		// still play it, and WhatsApp shows a grey box without a thumbnail.
		return f, nil
	case err != nil:
		return File{}, fmt.Errorf("video thumbnail: %w", err)
	}
	img, release, err := p.decode(ctx, frame)
	switch {
	case fault.CodeOf(err) == fault.RateLimited, errors.Is(err, context.Canceled):
		return File{}, fmt.Errorf("video thumbnail: %w", err)
	case err != nil:
		p.log.WarnContext(ctx, "video frame from ffmpeg is not a readable JPEG", "err", err)
		return f, nil
	}
	defer release()
	if f.Width == 0 || f.Height == 0 {
		b := img.Bounds()
		f.Width, f.Height = uint32(b.Dx()), uint32(b.Dy())
	}
	if f.Thumbnail, err = thumbnail(img); err != nil {
		return File{}, fmt.Errorf("video thumbnail: %w", err)
	}
	return f, nil
}

// Document takes any type. The mimetype is what the bytes are; the file
// name's extension only refines a generic answer (see documentType).
func (p *Preparer) Document(ctx context.Context, data []byte, fileName string) (File, error) {
	f, err := p.DocumentFile(ctx, data, int64(len(data)), fileName)
	if err != nil {
		return File{}, err
	}
	f.Data = data
	return f, nil
}

// DocumentFile is Document for a file kept out of memory, of size bytes,
// whose first bytes (HeadLen of them, or all) are head: only they are read
// to tell its type. The File has no Data: the bytes stay where they are.
func (p *Preparer) DocumentFile(_ context.Context, head []byte, size int64, fileName string) (File, error) {
	if size > MaxDocument {
		return File{}, tooLarge(int(size), "documents", MaxDocument)
	}
	name := cleanName(fileName)
	mt := documentType(head, name)
	if name == "" {
		name = "document" + extensionFor(mt)
	}
	return File{Mimetype: mt, FileName: name}, nil
}

// documentType is the detected type, except where sniffing can only give a
// generic answer: every Office file is a ZIP, CSV and JSON are plain text,
// and most binary formats are unknown to it. There the extension's type is
// taken when it is of the same family; an extension naming a type sniffing
// would have recognised (image, audio, video, PDF) is a lie and ignored.
func documentType(data []byte, name string) string {
	detected := detect(data)
	byExt := baseType(mime.TypeByExtension(strings.ToLower(path.Ext(name))))
	if byExt == "" || byExt == detected {
		return detected
	}
	switch detected {
	case "text/plain":
		if strings.HasPrefix(byExt, "text/") || strings.HasSuffix(byExt, "+json") || strings.HasSuffix(byExt, "+xml") ||
			byExt == "application/json" || byExt == "application/xml" || byExt == "application/javascript" ||
			byExt == "application/yaml" || byExt == "application/x-yaml" || byExt == "application/sql" {
			return byExt
		}
	case "application/zip", "application/octet-stream":
		if !sniffable(byExt) {
			return byExt
		}
	}
	return detected
}

// sniffable reports whether detect recognises files of this type by their
// content, so that a file claiming it by name alone is not one.
func sniffable(mimetype string) bool {
	return strings.HasPrefix(mimetype, "image/") || strings.HasPrefix(mimetype, "audio/") ||
		strings.HasPrefix(mimetype, "video/") || strings.HasPrefix(mimetype, "text/") ||
		mimetype == "application/pdf" || mimetype == "application/zip" || mimetype == "application/ogg"
}

// extensionFor is the extension of a default file name. Common types have a
// fixed answer: the system's table lists several per type (".asc" before
// ".txt") and varies between machines.
func extensionFor(mimetype string) string {
	switch baseType(mimetype) {
	case "application/pdf":
		return ".pdf"
	case "text/plain":
		return ".txt"
	case "text/html":
		return ".html"
	case "text/csv":
		return ".csv"
	case "application/json":
		return ".json"
	case "text/xml", "application/xml":
		return ".xml"
	case "application/zip":
		return ".zip"
	case "application/x-gzip", "application/gzip":
		return ".gz"
	case "image/jpeg":
		return ".jpg"
	case "image/png":
		return ".png"
	case "image/gif":
		return ".gif"
	case "image/webp":
		return ".webp"
	case "video/mp4":
		return ".mp4"
	case "audio/mpeg":
		return ".mp3"
	case "audio/ogg":
		return ".ogg"
	case "audio/mp4":
		return ".m4a"
	case "audio/wav":
		return ".wav"
	case "application/octet-stream":
		return ".bin"
	}
	if exts, err := mime.ExtensionsByType(mimetype); err == nil && len(exts) > 0 {
		return exts[0]
	}
	return ""
}

// cleanName keeps the last element of a client's file name (no directories,
// whichever separator), without control characters, at most maxNameBytes
// long (the extension kept).
func cleanName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return -1
		}
		return r
	}, name)
	name = strings.TrimSpace(name)
	if name == "." || name == ".." {
		return ""
	}
	if len(name) <= maxNameBytes {
		return name
	}
	stem, ext := name, path.Ext(name)
	if len(ext) <= 16 {
		stem = name[:len(name)-len(ext)]
	} else {
		ext = ""
	}
	for len(stem)+len(ext) > maxNameBytes {
		_, size := utf8.DecodeLastRuneInString(stem)
		stem = stem[:len(stem)-size]
	}
	return stem + ext
}

// maxNameBytes bounds file names: phones and file systems cut around 255.
const maxNameBytes = 200

package media

import (
	"bytes"
	"encoding/binary"
	"net/http"
	"strings"
)

// mimeOggOpus is the mimetype WhatsApp gives voice notes; its clients look
// for the codecs parameter.
const mimeOggOpus = "audio/ogg; codecs=opus"

// detect returns what data is. http.DetectContentType follows the WHATWG
// sniffing rules, which are written for browsers: they stop at "application/ogg"
// whatever the codec, say video/mp4 for an audio-only M4A, and know neither
// AMR nor MP3 files without an ID3 tag. Those are sniffed here first.
// Parameters are dropped ("text/plain", not "text/plain; charset=utf-8"),
// except the codecs of Ogg Opus.
func detect(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("OggS")):
		return oggKind(data)
	case bytes.HasPrefix(data, []byte("#!AMR-WB\n")):
		return "audio/amr-wb"
	case bytes.HasPrefix(data, []byte("#!AMR\n")):
		return "audio/amr"
	case bytes.HasPrefix(data, []byte("fLaC")):
		return "audio/flac"
	case len(data) >= 12 && string(data[4:8]) == "ftyp":
		return mp4Kind(data)
	case bytes.HasPrefix(data, []byte("ID3")):
		return "audio/mpeg"
	}
	ct := http.DetectContentType(data)
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	switch ct {
	case "audio/wave":
		return "audio/wav"
	case "application/octet-stream":
		return mpegFrameKind(data, ct)
	}
	return ct
}

// oggKind looks at the first packet of the first page: it names the codec.
func oggKind(data []byte) string {
	first := []byte(nil)
	if p, ok := readOggPage(data); ok {
		first = p.body
	}
	switch {
	case bytes.HasPrefix(first, []byte("OpusHead")):
		return mimeOggOpus
	case bytes.HasPrefix(first, []byte("\x01vorbis")), bytes.HasPrefix(first, []byte("\x7fFLAC")):
		return "audio/ogg"
	case bytes.HasPrefix(first, []byte("\x80theora")):
		return "video/ogg"
	}
	return "application/ogg"
}

// mpegFrameKind recognises a raw MPEG audio stream by its first frame header:
// 11 sync bits, then version and layer. Layer 0 with the ADTS pattern is AAC.
func mpegFrameKind(data []byte, fallback string) string {
	if len(data) < 4 || data[0] != 0xFF || data[1]&0xE0 != 0xE0 {
		return fallback
	}
	version, layer := (data[1]>>3)&3, (data[1]>>1)&3
	if layer == 0 {
		if data[1]&0xF6 == 0xF0 {
			return "audio/aac"
		}
		return fallback
	}
	if version == 1 || data[2]>>4 == 0xF || (data[2]>>2)&3 == 3 {
		return fallback
	}
	return "audio/mpeg"
}

// mp4Kind tells the ISO base media family apart by brand, and MP4 audio from
// video by its tracks when the brand does not say.
func mp4Kind(data []byte) string {
	major := string(data[8:12])
	switch {
	case major == "M4A " || major == "M4B " || major == "M4P ":
		return "audio/mp4"
	case strings.HasPrefix(major, "3g2"):
		return "video/3gpp2"
	case strings.HasPrefix(major, "3gp"):
		return "video/3gpp"
	case major == "qt  ":
		return "video/quicktime"
	}
	if info, ok := parseMP4(data); ok && info.hasAudio && !info.hasVideo {
		return "audio/mp4"
	}
	return "video/mp4"
}

// mp4Info is what the moov box says about a file.
type mp4Info struct {
	hasVideo, hasAudio bool
	seconds            float64
	width, height      uint32 // of the first video track, as displayed
}

// parseMP4 reads the movie header (duration) and the track headers (kind,
// display size). ok is false when there is no readable moov box.
func parseMP4(data []byte) (info mp4Info, ok bool) {
	eachBox(data, func(typ string, moov []byte) bool {
		if typ != "moov" {
			return true
		}
		ok = true
		eachBox(moov, func(typ string, body []byte) bool {
			switch typ {
			case "mvhd":
				info.seconds = mvhdSeconds(body)
			case "trak":
				readTrak(body, &info)
			}
			return true
		})
		return false
	})
	return info, ok
}

func readTrak(trak []byte, info *mp4Info) {
	var handler string
	var w, h uint32
	eachBox(trak, func(typ string, body []byte) bool {
		switch typ {
		case "tkhd":
			w, h = tkhdSize(body)
		case "mdia":
			eachBox(body, func(typ string, body []byte) bool {
				if typ == "hdlr" && len(body) >= 12 {
					handler = string(body[8:12])
				}
				return true
			})
		}
		return true
	})
	switch handler {
	case "vide":
		if !info.hasVideo {
			info.width, info.height = w, h
		}
		info.hasVideo = true
	case "soun":
		info.hasAudio = true
	}
}

// mvhdSeconds reads duration/timescale of a movie header (full box, version
// 0 with 32-bit times or version 1 with 64-bit ones).
func mvhdSeconds(b []byte) float64 {
	var scale uint32
	var dur uint64
	switch {
	case len(b) >= 20 && b[0] == 0:
		scale, dur = be32(b[12:]), uint64(be32(b[16:]))
	case len(b) >= 32 && b[0] == 1:
		scale, dur = be32(b[20:]), binary.BigEndian.Uint64(b[24:])
	}
	if scale == 0 || dur == 0 || dur == 1<<64-1 || dur == 1<<32-1 {
		return 0
	}
	return float64(dur) / float64(scale)
}

// tkhdSize reads a track's width and height (16.16 fixed point) and swaps
// them when the transformation matrix rotates by 90 degrees, as phones do
// for portrait videos.
func tkhdSize(b []byte) (w, h uint32) {
	matrix := 40
	if len(b) > 0 && b[0] == 1 {
		matrix = 52
	}
	if len(b) < matrix+44 {
		return 0, 0
	}
	a, bb := int32(be32(b[matrix:])), int32(be32(b[matrix+4:]))
	w, h = be32(b[matrix+36:])>>16, be32(b[matrix+40:])>>16
	if a == 0 && bb != 0 {
		w, h = h, w
	}
	return w, h
}

// eachBox calls fn for each box in b until fn returns false. A box whose
// size runs past the end is cut at the end (a truncated trailing mdat must
// not hide anything before it).
func eachBox(b []byte, fn func(typ string, body []byte) bool) {
	for len(b) >= 8 {
		size, hdr := uint64(be32(b)), uint64(8)
		typ := string(b[4:8])
		switch size {
		case 0:
			size = uint64(len(b))
		case 1:
			if len(b) < 16 {
				return
			}
			size, hdr = binary.BigEndian.Uint64(b[8:]), 16
		}
		if size < hdr {
			return
		}
		if size > uint64(len(b)) {
			size = uint64(len(b))
		}
		if !fn(typ, b[hdr:size]) {
			return
		}
		b = b[size:]
	}
}

func be32(b []byte) uint32 { return binary.BigEndian.Uint32(b) }

// baseType drops parameters: "audio/ogg; codecs=opus" → "audio/ogg".
func baseType(mimetype string) string {
	if i := strings.IndexByte(mimetype, ';'); i >= 0 {
		return strings.TrimSpace(mimetype[:i])
	}
	return mimetype
}

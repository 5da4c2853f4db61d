package media

import (
	"bytes"
	"encoding/binary"
	"math"
)

// oggPage is one page of an Ogg bitstream (RFC 3533).
type oggPage struct {
	headerType byte
	granule    int64
	serial     uint32
	lacing     []byte // segment table
	body       []byte
	size       int // header + body: where the next page starts
}

// readOggPage reads the page at the start of b.
func readOggPage(b []byte) (oggPage, bool) {
	if len(b) < 27 || !bytes.HasPrefix(b, []byte("OggS")) || b[4] != 0 {
		return oggPage{}, false
	}
	n := int(b[26])
	if len(b) < 27+n {
		return oggPage{}, false
	}
	lacing := b[27 : 27+n]
	bodyLen := 0
	for _, v := range lacing {
		bodyLen += int(v)
	}
	if len(b) < 27+n+bodyLen {
		return oggPage{}, false
	}
	return oggPage{
		headerType: b[5],
		granule:    int64(binary.LittleEndian.Uint64(b[6:])),
		serial:     binary.LittleEndian.Uint32(b[14:]),
		lacing:     lacing,
		body:       b[27+n : 27+n+bodyLen],
		size:       27 + n + bodyLen,
	}, true
}

// opusStream is what a voice note needs from an Ogg Opus file.
type opusStream struct {
	preSkip     uint16
	lastGranule int64
	packets     []opusPacket // audio packets, headers excluded
}

type opusPacket struct {
	size   int     // bytes
	millis float64 // duration from the TOC byte
}

// parseOggOpus walks the pages of the first logical stream of an Ogg Opus
// file (other multiplexed streams are ignored). ok is false when data is not
// one.
func parseOggOpus(data []byte) (s opusStream, ok bool) {
	first, ok := readOggPage(data)
	if !ok || !bytes.HasPrefix(first.body, []byte("OpusHead")) || len(first.body) < 19 {
		return s, false
	}
	s.preSkip = binary.LittleEndian.Uint16(first.body[10:])
	serial := first.serial
	packetIndex := 0
	var partial []byte
	for off := 0; off < len(data); {
		p, ok := readOggPage(data[off:])
		if !ok {
			break // a truncated tail: keep what was read
		}
		off += p.size
		if p.serial != serial {
			continue
		}
		if p.granule >= 0 {
			s.lastGranule = p.granule
		}
		body := p.body
		for _, v := range p.lacing {
			partial = append(partial, body[:v]...)
			body = body[v:]
			if v == 255 {
				continue // the packet goes on in the next segment
			}
			// Packet 0 is OpusHead, packet 1 OpusTags (RFC 7845).
			if packetIndex >= 2 && len(partial) > 0 {
				s.packets = append(s.packets, opusPacket{size: len(partial), millis: opusPacketMillis(partial)})
			}
			packetIndex++
			partial = partial[:0]
		}
	}
	return s, true
}

// seconds is the playing time: the last granule position counts 48 kHz
// samples including the encoder's pre-skip, which is not played.
func (s opusStream) seconds() uint32 {
	samples := s.lastGranule - int64(s.preSkip)
	if samples <= 0 {
		return 0
	}
	return uint32((samples + 24000) / 48000) // rounded
}

// opusPacketMillis reads a packet's duration from its TOC byte (RFC 6716
// section 3.1): the configuration gives the frame size, the code the count.
func opusPacketMillis(p []byte) float64 {
	if len(p) == 0 {
		return 0
	}
	config := p[0] >> 3
	var frame float64
	switch {
	case config < 12: // SILK: 10, 20, 40, 60 ms
		frame = [4]float64{10, 20, 40, 60}[config%4]
	case config < 16: // hybrid: 10, 20 ms
		frame = [2]float64{10, 20}[config%2]
	default: // CELT: 2.5, 5, 10, 20 ms
		frame = [4]float64{2.5, 5, 10, 20}[config%4]
	}
	frames := 1.0
	switch p[0] & 3 {
	case 1, 2:
		frames = 2
	case 3:
		if len(p) > 1 {
			frames = float64(p[1] & 0x3F)
		}
	}
	return frame * frames
}

// waveformBuckets is how many values WhatsApp's voice-note waveform has.
const waveformBuckets = 64

// packetWaveform derives a waveform without decoding: the bytes an encoder
// spends per millisecond in each of 64 time slices. Opus is variable-bitrate
// and spends almost nothing on silence, so this follows loudness roughly:
// pauses and speech are told apart, but a loud and a quiet passage of the
// same sound look alike (the encoder spends by complexity, not volume). The
// PCM waveform (pcmWaveform, with ffmpeg) is the accurate one.
func packetWaveform(packets []opusPacket) []byte {
	var total float64
	for _, p := range packets {
		total += p.millis
	}
	if total == 0 {
		return make([]byte, waveformBuckets)
	}
	var bytesIn, millisIn [waveformBuckets]float64
	var at float64
	for _, p := range packets {
		i := min(int(at/total*waveformBuckets), waveformBuckets-1)
		bytesIn[i] += float64(p.size)
		millisIn[i] += p.millis
		at += p.millis
	}
	levels := make([]float64, waveformBuckets)
	for i := range levels {
		if millisIn[i] > 0 {
			levels[i] = bytesIn[i] / millisIn[i]
		} else if i > 0 {
			levels[i] = levels[i-1] // fewer packets than slices: hold the level
		}
	}
	return scaleWaveform(levels)
}

// pcmWaveform is the RMS of 64 equal slices of signed 16-bit mono samples.
func pcmWaveform(samples []int16) []byte {
	levels := make([]float64, waveformBuckets)
	n := len(samples)
	for i := range levels {
		from, to := i*n/waveformBuckets, (i+1)*n/waveformBuckets
		if to <= from {
			continue
		}
		var sum float64
		for _, v := range samples[from:to] {
			sum += float64(v) * float64(v)
		}
		levels[i] = sum / float64(to-from) // squared RMS; the root comes below
	}
	for i, v := range levels {
		levels[i] = math.Sqrt(v)
	}
	return scaleWaveform(levels)
}

// scaleWaveform maps levels to 0..100 with the loudest slice at 100, as
// WhatsApp's clients draw them relative to the note's own peak.
func scaleWaveform(levels []float64) []byte {
	peak := 0.0
	for _, v := range levels {
		peak = max(peak, v)
	}
	out := make([]byte, len(levels))
	if peak == 0 {
		return out
	}
	for i, v := range levels {
		out[i] = byte(v/peak*100 + 0.5)
	}
	return out
}

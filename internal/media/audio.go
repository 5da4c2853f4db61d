package media

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/wagraph/wagraph/internal/fault"
)

// Audio prepares an audio message. Plain audio is sent as it is when
// WhatsApp plays its type. A voice note (push-to-talk) must be OGG/Opus with
// a duration and a waveform; other audio is converted with ffmpeg.
func (p *Preparer) Audio(ctx context.Context, data []byte, voiceNote bool) (File, error) {
	if len(data) > MaxAudio {
		return File{}, tooLarge(len(data), "audio", MaxAudio)
	}
	mt := detect(data)
	if !voiceNote {
		return p.plainAudio(data, mt)
	}
	if mt != mimeOggOpus {
		if demuxerFor(mt) == "" {
			return File{}, fault.New(fault.Unsupported, "source is %s, not audio; a voice note must be OGG/Opus audio", mt)
		}
		if p.ffmpeg == "" {
			return File{}, fault.New(fault.Unsupported, "voice notes must be OGG/Opus; converting %s needs ffmpeg, which is not installed (install it with make deps or set --ffmpeg)", mt)
		}
		converted, err := p.toOggOpus(ctx, data, mt)
		if err != nil {
			return File{}, err
		}
		data = converted
	}
	stream, ok := parseOggOpus(data)
	if !ok {
		return File{}, fault.InvalidField("source", "source looks like OGG/Opus but its pages cannot be read")
	}
	f := File{Data: data, Mimetype: mimeOggOpus, Seconds: stream.seconds(), VoiceNote: true}
	waveform, err := p.waveform(ctx, data, stream)
	if err != nil {
		return File{}, err
	}
	f.Waveform = waveform
	return f, nil
}

// plainAudio accepts the types WhatsApp's clients play inline.
func (p *Preparer) plainAudio(data []byte, mt string) (File, error) {
	f := File{Data: data, Mimetype: mt}
	switch mt {
	case mimeOggOpus:
		if s, ok := parseOggOpus(data); ok {
			f.Seconds = s.seconds()
		}
	case "audio/mp4":
		if info, ok := parseMP4(data); ok {
			f.Seconds = uint32(math.Round(info.seconds))
		}
	case "audio/mpeg", "audio/aac", "audio/amr":
	default:
		hint := ""
		if p.ffmpeg != "" && demuxerFor(mt) != "" {
			hint = "; sent as a voice note it would be converted to OGG/Opus"
		}
		return File{}, fault.New(fault.Unsupported, "source is %s; WhatsApp takes audio as OGG/Opus (audio/ogg), MP3 (audio/mpeg), M4A/AAC (audio/mp4, audio/aac) or AMR (audio/amr)%s", mt, hint)
	}
	return f, nil
}

// toOggOpus converts to what WhatsApp's own clients record: mono Opus at
// 48 kHz, 32 kbit/s (speech stays clear and a minute is 240 KB).
func (p *Preparer) toOggOpus(ctx context.Context, data []byte, mt string) ([]byte, error) {
	out, err := p.runFFmpeg(ctx, data, mt,
		"-vn", "-map_metadata", "-1", "-c:a", "libopus", "-b:a", "32k", "-ac", "1", "-ar", "48000", "-f", "ogg")
	var failed *ffmpegFailed
	switch {
	case errors.As(err, &failed):
		return nil, fault.New(fault.Unsupported, "source (%s) could not be converted to OGG/Opus: ffmpeg cannot read it", mt)
	case err != nil:
		return nil, fmt.Errorf("convert voice note: %w", err)
	}
	if _, ok := parseOggOpus(out); !ok { // e.g. no audio stream in a video
		return nil, fault.New(fault.Unsupported, "source (%s) could not be converted to OGG/Opus: it holds no audio ffmpeg can read", mt)
	}
	if len(out) > MaxAudio {
		return nil, tooLarge(len(out), "voice notes", MaxAudio)
	}
	return out, nil
}

// maxWaveformSeconds caps the audio decoded for a waveform. Decoding is
// what a waveform costs: 16 KB of samples and about a millisecond of
// ffmpeg per second of audio, held twice (ffmpeg's output, the samples),
// so a 2 MB two-hour note cost 230 MB and 5 s. Ten minutes costs 20 MB.
const maxWaveformSeconds = 10 * 60

// waveform is measured on decoded samples when ffmpeg is there and the
// note is at most maxWaveformSeconds long, and estimated from the Opus
// packet sizes otherwise (see packetWaveform): for a longer note, an
// estimate of the whole is better than the first minutes measured and
// stretched over it.
func (p *Preparer) waveform(ctx context.Context, data []byte, stream opusStream) ([]byte, error) {
	if p.ffmpeg == "" || stream.seconds() > maxWaveformSeconds {
		return packetWaveform(stream.packets), nil
	}
	samples, err := p.decodePCM(ctx, data, mimeOggOpus)
	var failed *ffmpegFailed
	switch {
	case errors.As(err, &failed):
		return packetWaveform(stream.packets), nil
	case err != nil:
		return nil, fmt.Errorf("voice note waveform: %w", err)
	}
	return pcmWaveform(samples), nil
}

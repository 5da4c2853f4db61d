package media

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/wagraph/wagraph/internal/config"
)

// ffmpegTimeout bounds one ffmpeg run whatever the caller's context allows:
// a pathological file must not hold a request and a process for long.
const ffmpegTimeout = 2 * time.Minute

// maxFFmpegOutput bounds what one run may write (converted audio, a frame).
const maxFFmpegOutput = MaxDocument

// demuxerFor names ffmpeg's demuxer for a detected type, "" when ffmpeg is
// not to be given it. ffmpeg is only run with the demuxer of the detected
// type: never probing means a playlist or concat script dressed up as audio
// is never interpreted (those can make ffmpeg open local files or URLs).
func demuxerFor(mimetype string) string {
	switch baseType(mimetype) {
	case "audio/mpeg":
		return "mp3"
	case "audio/aac":
		return "aac"
	case "audio/amr", "audio/amr-wb":
		return "amr"
	case "audio/wav":
		return "wav"
	case "audio/flac":
		return "flac"
	case "audio/aiff":
		return "aiff"
	case "audio/basic":
		return "au"
	case "audio/ogg", "application/ogg", "video/ogg":
		return "ogg"
	case "audio/mp4", "video/mp4", "video/3gpp", "video/3gpp2", "video/quicktime":
		return "mov"
	case "video/webm":
		return "matroska"
	case "video/avi":
		return "avi"
	}
	return ""
}

// ffmpegFailed is ffmpeg exiting with an error: the input was not what its
// type promised, or not something ffmpeg can read.
type ffmpegFailed struct{ stderr string }

func (e *ffmpegFailed) Error() string { return "ffmpeg failed: " + e.stderr }

// runFFmpeg feeds input (of the detected mimetype) to ffmpeg through a
// temporary file (MP4 needs a seekable input: its index may be at the end)
// and returns what ffmpeg writes to stdout. args are the output options.
func (p *Preparer) runFFmpeg(ctx context.Context, input []byte, mimetype string, args ...string) ([]byte, error) {
	demuxer := demuxerFor(mimetype)
	if demuxer == "" {
		return nil, fmt.Errorf("ffmpeg: no demuxer for %s", mimetype)
	}
	release, err := p.ffmpegs.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	in, err := os.CreateTemp("", "wagraph-media-*")
	if err != nil {
		return nil, fmt.Errorf("ffmpeg input: %w", err)
	}
	defer os.Remove(in.Name())
	_, err = in.Write(input)
	if cerr := in.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("ffmpeg input: %w", err)
	}

	ctx, cancel := context.WithTimeout(ctx, ffmpegTimeout)
	defer cancel()
	full := append([]string{"-hide_banner", "-nostdin", "-loglevel", "error",
		"-protocol_whitelist", "file", "-f", demuxer, "-i", in.Name()}, args...)
	full = append(full, "pipe:1")
	cmd := exec.CommandContext(ctx, p.ffmpeg, full...)
	stdout := &cappedBuffer{max: maxFFmpegOutput}
	stderr := &cappedBuffer{max: 4 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("ffmpeg: %w", context.Cause(ctx))
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		p.log.WarnContext(ctx, "ffmpeg failed", "input", mimetype, "exit", exit.ExitCode(), "stderr", stderr.buf.String())
		return nil, &ffmpegFailed{stderr: stderr.buf.String()}
	}
	if err != nil {
		return nil, fmt.Errorf("run ffmpeg %s: %w", p.ffmpeg, err)
	}
	if stdout.over {
		return nil, &ffmpegFailed{stderr: "output larger than " + config.FormatSize(maxFFmpegOutput)}
	}
	return stdout.buf.Bytes(), nil
}

// decodePCM decodes audio to signed 16-bit mono samples at 8 kHz: plenty
// for a 64-slice loudness curve, and 16 KB per second of audio. At most
// maxWaveformSeconds are decoded, whatever the container claims its
// duration is (its granule positions are the sender's to write).
func (p *Preparer) decodePCM(ctx context.Context, data []byte, mimetype string) ([]int16, error) {
	raw, err := p.runFFmpeg(ctx, data, mimetype, "-vn", "-t", strconv.Itoa(maxWaveformSeconds),
		"-ac", "1", "-ar", "8000", "-f", "s16le", "-c:a", "pcm_s16le")
	if err != nil {
		return nil, err
	}
	// -t cuts at a packet's end: a few samples past the cap.
	samples := make([]int16, min(len(raw)/2, maxWaveformSeconds*8000))
	for i := range samples {
		samples[i] = int16(binary.LittleEndian.Uint16(raw[2*i:]))
	}
	return samples, nil
}

// cappedBuffer keeps the first max bytes written to it and notes the rest
// (without failing the write, so ffmpeg ends normally).
type cappedBuffer struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (c *cappedBuffer) Write(b []byte) (int, error) {
	if room := c.max - c.buf.Len(); len(b) > room {
		c.buf.Write(b[:max(room, 0)])
		c.over = true
		return len(b), nil
	}
	return c.buf.Write(b)
}

package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/apptest"
)

// pngImage draws a w×h PNG with a gradient (not a flat colour, so a
// re-encoding would show).
func pngImage(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x * 255 / w), uint8(y * 255 / h), 128, 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// ffmpegMake runs ffmpeg to produce a test file with the given arguments
// (output last, named by ext). Tests need ffmpeg: `make deps` installs it.
func ffmpegMake(t testing.TB, ext string, args ...string) []byte {
	t.Helper()
	bin, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Fatal("ffmpeg is not installed: run make deps")
	}
	out := filepath.Join(t.TempDir(), "out."+ext)
	cmd := exec.Command(bin, append(append([]string{"-hide_banner", "-loglevel", "error", "-y"}, args...), out)...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg %v: %v\n%s", args, err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mp4Video(t testing.TB) []byte {
	return ffmpegMake(t, "mp4", "-f", "lavfi", "-i", "testsrc=duration=1:size=64x48:rate=10", "-pix_fmt", "yuv420p", "-c:v", "mpeg4")
}

// opusVoice is a second of a tone whose loudness rises, as OGG/Opus.
func opusVoice(t testing.TB) []byte {
	return ffmpegMake(t, "ogg", "-f", "lavfi", "-i", "sine=frequency=440:duration=2", "-af", "volume='t/2':eval=frame", "-c:a", "libopus", "-ac", "1", "-ar", "48000")
}

func wavAudio(t testing.TB) []byte {
	return ffmpegMake(t, "wav", "-f", "lavfi", "-i", "sine=frequency=330:duration=1")
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// files serves fixed files on loopback, as a media host would.
func files(t testing.TB, byPath map[string][]byte) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := byPath[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// inboxMessage is one message of sandboxInbox.
type inboxMessage struct {
	ID          string
	From        string
	Chat        string
	Type        string
	Text        *string
	Caption     *string
	FileName    *string
	Mimetype    *string
	MediaSha256 *string
	MediaSize   *int
	Latitude    *float64
	Longitude   *float64
	Name        *string
	Address     *string
	Vcard       *string
	GifPlayback bool
	VoiceNote   bool
	Waveform    []int
	Seconds     *int
	Mentions    []string
	QuotedID    *string
	Revoked     bool
	Edited      bool
	ViewOnce    bool
	Reactions   []struct{ Emoji, From string }
	Sticker     bool
	Animated    bool `json:"animatedSticker"`
	Forwarded   bool
	Poll        *struct {
		Question        string
		Options         []string
		SelectableCount int
	}
	LinkPreview *struct {
		URL          string
		Title        *string
		Description  *string
		HasThumbnail bool
	}
}

const inboxQuery = `query($phone: String!) { sandboxInbox(phone: $phone) {
	id from chat type text caption fileName mimetype mediaSha256 mediaSize latitude longitude name address
	vcard gifPlayback voiceNote waveform seconds mentions quotedId revoked edited viewOnce reactions { emoji from }
	sticker animatedSticker forwarded poll { question options selectableCount } linkPreview { url title description hasThumbnail } timestamp } }`

// inbox is everything the phone of phone received, as it decrypted it.
func inbox(t testing.TB, s *apptest.Server, phone string) []inboxMessage {
	t.Helper()
	var out struct{ SandboxInbox []inboxMessage }
	s.MustGraphQL(t, apptest.AdminToken, inboxQuery, map[string]any{"phone": phone}, &out)
	return out.SandboxInbox
}

// received waits until the phone's inbox holds message id and returns it.
func received(t testing.TB, s *apptest.Server, phone, id string) inboxMessage {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var out struct{ SandboxInbox []inboxMessage }
		s.MustGraphQL(t, apptest.AdminToken, inboxQuery, map[string]any{"phone": phone}, &out)
		for _, m := range out.SandboxInbox {
			if m.ID == id {
				return m
			}
		}
		if time.Now().After(deadline) {
			b, _ := json.Marshal(out.SandboxInbox)
			t.Fatalf("phone %s did not receive message %s; inbox: %s", phone, id, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// restSend posts a send and returns the message id of its success.
func restSend(t testing.TB, s *apptest.Server, sessionID, kind string, body any) string {
	t.Helper()
	raw, _ := json.Marshal(body)
	res := s.REST(t, "POST", "/session/"+sessionID+"/message/"+kind, apptest.AdminToken, string(raw))
	if res.Status != http.StatusOK {
		t.Fatalf("POST message/%s: %d %s", kind, res.Status, res.Body)
	}
	var env struct {
		Status string
		Data   struct{ MessageID, Timestamp, ScheduledAt string }
	}
	res.JSON(t, &env)
	if env.Status != "success" || env.Data.MessageID == "" || (env.Data.Timestamp == "" && env.Data.ScheduledAt == "") {
		t.Fatalf("POST message/%s: %s", kind, res.Body)
	}
	return env.Data.MessageID
}

func sleep() { time.Sleep(50 * time.Millisecond) }

package wafake_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"

	"github.com/wagraph/wagraph/whatsapp/wafake"
)

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSendMediaDecryptedByRecipient: the client uploads (media_conn, then
// POST /mms/…) and sends image, video, document and voice note; the
// recipient's phone decrypts each message and, with its media key, the blob.
func TestSendMediaDecryptedByRecipient(t *testing.T) {
	t.Parallel()
	n := startNetwork(t)
	cli, _ := linkByQR(t, n, "491701234567")
	ctx := context.Background()
	const peer = "4915112345678"
	to := types.NewJID(peer, types.DefaultUserServer)

	cases := []struct {
		name  string
		typ   whatsmeow.MediaType
		size  int // one is a multiple of the AES block: a whole block of padding
		build func(up whatsmeow.UploadResponse) *waE2E.Message
		check func(t *testing.T, m *waE2E.Message)
	}{
		{"image", whatsmeow.MediaImage, 3001, func(up whatsmeow.UploadResponse) *waE2E.Message {
			return &waE2E.Message{ImageMessage: &waE2E.ImageMessage{
				URL: proto.String(up.URL), DirectPath: proto.String(up.DirectPath), MediaKey: up.MediaKey,
				FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: proto.Uint64(up.FileLength),
				Mimetype: proto.String("image/jpeg"), Caption: proto.String("look at this"),
			}}
		}, func(t *testing.T, m *waE2E.Message) {
			if img := m.GetImageMessage(); img.GetCaption() != "look at this" || img.GetMimetype() != "image/jpeg" {
				t.Errorf("image caption %q mimetype %q", img.GetCaption(), img.GetMimetype())
			}
		}},
		{"video", whatsmeow.MediaVideo, 4096, func(up whatsmeow.UploadResponse) *waE2E.Message {
			return &waE2E.Message{VideoMessage: &waE2E.VideoMessage{
				URL: proto.String(up.URL), DirectPath: proto.String(up.DirectPath), MediaKey: up.MediaKey,
				FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: proto.Uint64(up.FileLength),
				Mimetype: proto.String("video/mp4"), GifPlayback: proto.Bool(true), Seconds: proto.Uint32(3),
			}}
		}, func(t *testing.T, m *waE2E.Message) {
			if v := m.GetVideoMessage(); !v.GetGifPlayback() || v.GetMimetype() != "video/mp4" || v.GetSeconds() != 3 {
				t.Errorf("video gif %v mimetype %q seconds %d", v.GetGifPlayback(), v.GetMimetype(), v.GetSeconds())
			}
		}},
		{"document", whatsmeow.MediaDocument, 10_000, func(up whatsmeow.UploadResponse) *waE2E.Message {
			return &waE2E.Message{DocumentMessage: &waE2E.DocumentMessage{
				URL: proto.String(up.URL), DirectPath: proto.String(up.DirectPath), MediaKey: up.MediaKey,
				FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: proto.Uint64(up.FileLength),
				Mimetype: proto.String("application/pdf"), FileName: proto.String("invoice-42.pdf"),
			}}
		}, func(t *testing.T, m *waE2E.Message) {
			if d := m.GetDocumentMessage(); d.GetFileName() != "invoice-42.pdf" || d.GetMimetype() != "application/pdf" {
				t.Errorf("document name %q mimetype %q", d.GetFileName(), d.GetMimetype())
			}
		}},
		{"voice note", whatsmeow.MediaAudio, 777, func(up whatsmeow.UploadResponse) *waE2E.Message {
			return &waE2E.Message{AudioMessage: &waE2E.AudioMessage{
				URL: proto.String(up.URL), DirectPath: proto.String(up.DirectPath), MediaKey: up.MediaKey,
				FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: proto.Uint64(up.FileLength),
				Mimetype: proto.String("audio/ogg; codecs=opus"), PTT: proto.Bool(true), Seconds: proto.Uint32(2),
			}}
		}, func(t *testing.T, m *waE2E.Message) {
			if a := m.GetAudioMessage(); !a.GetPTT() || a.GetMimetype() != "audio/ogg; codecs=opus" {
				t.Errorf("audio ptt %v mimetype %q", a.GetPTT(), a.GetMimetype())
			}
		}},
	}
	for i, tc := range cases {
		data := randomBytes(t, tc.size)
		up, err := cli.Upload(ctx, data, tc.typ)
		if err != nil {
			t.Fatalf("%s: upload: %v", tc.name, err)
		}
		if !strings.HasPrefix(up.DirectPath, "/") || !strings.Contains(up.DirectPath, "?") || up.URL != "https://mmg.whatsapp.net"+up.DirectPath {
			t.Errorf("%s: upload answered url %q direct path %q", tc.name, up.URL, up.DirectPath)
		}
		resp, err := cli.SendMessage(ctx, to, tc.build(up))
		if err != nil {
			t.Fatalf("%s: send: %v", tc.name, err)
		}
		got := waitInbox(t, n, peer, i+1)[i]
		if got.ID != resp.ID {
			t.Fatalf("%s: recipient's message %d is %s, want %s", tc.name, i, got.ID, resp.ID)
		}
		tc.check(t, got.Message)
		media, err := n.MediaOf(got.Message)
		if err != nil {
			t.Errorf("%s: recipient cannot read the media: %v", tc.name, err)
		} else if !bytes.Equal(media, data) {
			t.Errorf("%s: recipient read %d bytes that differ from the %d uploaded", tc.name, len(media), len(data))
		}
	}

	// The recipient's checks bite: a wrong media key fails the HMAC, a
	// wrong plaintext hash fails after decryption, and reading twice gives
	// the same bytes (the stored blob is not decrypted in place).
	img := waitInbox(t, n, peer, 1)[0].Message
	wrongKey := proto.Clone(img).(*waE2E.Message)
	wrongKey.ImageMessage.MediaKey = randomBytes(t, 32)
	if _, err := n.MediaOf(wrongKey); err == nil {
		t.Error("media decrypted with a wrong media key")
	}
	wrongHash := proto.Clone(img).(*waE2E.Message)
	wrongHash.ImageMessage.FileSHA256 = randomBytes(t, 32)
	if _, err := n.MediaOf(wrongHash); err == nil {
		t.Error("media accepted with a wrong FileSHA256")
	}
	first, err1 := n.MediaOf(img)
	second, err2 := n.MediaOf(img)
	if err1 != nil || err2 != nil || !bytes.Equal(first, second) {
		t.Errorf("reading the same media twice: %v, %v, equal %v", err1, err2, bytes.Equal(first, second))
	}
}

// TestReceiveImageFromContact: a contact's phone sends an image; the client
// gets it as events.Message and downloads the same bytes, by URL and by
// direct path.
func TestReceiveImageFromContact(t *testing.T) {
	t.Parallel()
	n := startNetwork(t)
	cli, ps := linkByQR(t, n, "491701234567")
	got := make(chan *events.Message, 2)
	cli.AddEventHandler(func(evt any) {
		if m, ok := evt.(*events.Message); ok {
			got <- m
		}
	})
	data := randomBytes(t, 5000)
	id, err := n.SendImage("4915112345678", ps.ID.User, data, "image/png", "from the beach")
	if err != nil {
		t.Fatal(err)
	}
	var m *events.Message
	select {
	case m = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("client did not receive the image")
	}
	img := m.Message.GetImageMessage()
	if m.Info.ID != id || m.Info.Sender.User != "4915112345678" || m.Info.MediaType != "image" || img == nil ||
		img.GetCaption() != "from the beach" || img.GetMimetype() != "image/png" || img.GetFileLength() != 5000 {
		t.Fatalf("client got %+v / %v", m.Info, m.Message)
	}
	ctx := context.Background()
	byURL, err := cli.Download(ctx, img)
	if err != nil || !bytes.Equal(byURL, data) {
		t.Errorf("download by URL: %d bytes, %v; want the %d sent", len(byURL), err, len(data))
	}
	pathOnly := proto.Clone(img).(*waE2E.ImageMessage)
	pathOnly.URL = nil // whatsmeow then requests https://<media_conn host><direct path>&hash=…
	byPath, err := cli.Download(ctx, pathOnly)
	if err != nil || !bytes.Equal(byPath, data) {
		t.Errorf("download by direct path: %d bytes, %v; want the %d sent", len(byPath), err, len(data))
	}
	if back, err := n.MediaOf(m.Message); err != nil || !bytes.Equal(back, data) {
		t.Errorf("MediaOf the sent image: %v", err)
	}
}

// TestUnknownMediaIs404: a blob the network does not hold is 404 to a
// plain request and to the client; uploads need the media_conn auth.
func TestUnknownMediaIs404(t *testing.T) {
	t.Parallel()
	n := startNetwork(t)
	hc := n.HTTPClient()
	resp, err := hc.Get("https://mmg.whatsapp.net/v/t62.7118-24/nothing_n.enc?ccb=11-4&hash=AAAA&mms-type=image&__wa-mms=")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown blob: status %d, want 404", resp.StatusCode)
	}
	resp, err = hc.Post("https://mmg.whatsapp.net/mms/image/AAAA?auth=forged&token=AAAA", "application/octet-stream", bytes.NewReader(make([]byte, 42)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("upload with a forged auth: status %d, want 401", resp.StatusCode)
	}

	cli, _ := linkByQR(t, n, "491701234567")
	ghost := &waE2E.ImageMessage{
		DirectPath: proto.String("/v/t62.7118-24/ghost_n.enc?ccb=11-4"), MediaKey: randomBytes(t, 32),
		FileEncSHA256: randomBytes(t, 32), FileSHA256: randomBytes(t, 32), FileLength: proto.Uint64(10),
	}
	if _, err := cli.Download(context.Background(), ghost); !errors.Is(err, whatsmeow.ErrMediaDownloadFailedWith404) {
		t.Errorf("client download of an unknown blob: %v, want 404", err)
	}
	if _, err := n.MediaOf(&waE2E.Message{ImageMessage: ghost}); !errors.Is(err, wafake.ErrUnknownMedia) {
		t.Errorf("MediaOf an unknown blob: %v", err)
	}
	// A stored blob asked for with another blob's hash is not served either.
	up, err := cli.Upload(context.Background(), []byte("real"), whatsmeow.MediaImage)
	if err != nil {
		t.Fatal(err)
	}
	resp, err = hc.Get("https://mmg.whatsapp.net" + up.DirectPath + "&hash=AAAA&mms-type=image&__wa-mms=")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("stored blob with a wrong hash: status %d, want 404", resp.StatusCode)
	}
}

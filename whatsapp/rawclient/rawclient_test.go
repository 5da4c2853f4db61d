package rawclient_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"path/filepath"
	"sync"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/wagraph/wagraph/whatsapp/rawclient"
	"github.com/wagraph/wagraph/whatsapp/sandbox"
)

// TestLinkAndSend links a raw client (real whatsmeow) to an in-process
// network and has it send a text and an image to another account, whose
// phone must decrypt both: the text as sent, the image's bytes as
// uploaded.
func TestLinkAndSend(t *testing.T) {
	net, err := sandbox.NewLocal(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { net.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := rawclient.OpenStore(ctx, filepath.Join(t.TempDir(), "raw.db"), net)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	const sender, recipient = "491700000001", "491700000002"
	cli, err := rawclient.Link(ctx, st, sender)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if id := cli.ID(); id.User != sender || id.Device == 0 {
		t.Fatalf("linked as %s, want a linked device of %s", id, sender)
	}

	textID, err := cli.SendText(ctx, recipient, "hello raw")
	if err != nil {
		t.Fatal(err)
	}
	data := testPNG(t)
	imageID, err := cli.SendImage(ctx, recipient, rawclient.Image{Data: data, Mimetype: "image/png", Width: 32, Height: 24}, "a caption")
	if err != nil {
		t.Fatal(err)
	}

	inbox, err := sandbox.Do(ctx, net, sandbox.Inbox{Phone: recipient})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]sandbox.Message{}
	for _, m := range inbox {
		got[m.ID] = m
	}
	if m, ok := got[textID]; !ok || m.Type != "text" || m.Text != "hello raw" || m.From != sender {
		t.Errorf("text %s: the phone got %+v (ok %v), want a text \"hello raw\" from %s", textID, m, ok, sender)
	}
	if m, ok := got[imageID]; !ok || m.Type != "image" || m.Caption != "a caption" || m.Mimetype != "image/png" || m.MediaSize != int64(len(data)) {
		t.Errorf("image %s: the phone got %+v (ok %v), want a PNG image of %d bytes with its caption", imageID, m, ok, len(data))
	}
	media, err := sandbox.Do(ctx, net, sandbox.Media{Phone: recipient, MessageID: imageID})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(media, data) {
		t.Errorf("the phone decrypted %d bytes, want the %d uploaded", len(media), len(data))
	}
}

func testPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 32, 24))
	for y := range 24 {
		for x := range 32 {
			img.Set(x, y, color.RGBA{uint8(x * 8), uint8(y * 10), 99, 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestReceiverKeepsMessageSecrets: a receiver gets every text of a burst,
// and whatsmeow's store (the gateway's SQLite settings) keeps the secret
// of each text that carried one — a burst with secrets, as phones send
// texts now — and none for a burst without.
func TestReceiverKeepsMessageSecrets(t *testing.T) {
	net, err := sandbox.NewLocal(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { net.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := rawclient.OpenStore(ctx, filepath.Join(t.TempDir(), "raw.db"), net)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	const me, contact = "491700000011", "491700000012"
	var mu sync.Mutex
	got := map[string]rawclient.Text{}
	cli, err := rawclient.LinkReceiver(ctx, st, me, func(m rawclient.Text) {
		mu.Lock()
		got[m.Text] = m
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()

	tests := []struct {
		prefix  string
		secrets bool
	}{
		{"plain-", false},
		{"secret-", true},
	}
	const count = 5
	for _, tc := range tests {
		n, err := sandbox.Do(ctx, net, sandbox.SendBurst{From: contact, To: me + "@s.whatsapp.net", Count: count, Prefix: tc.prefix, Secrets: tc.secrets})
		if err != nil || n.Queued != count {
			t.Fatalf("burst %q: %+v, %v; want %d queued", tc.prefix, n, err, count)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n == 2*count {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the receiver got %d texts within 30 s, want %d", n, 2*count)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, tc := range tests {
		for i := 1; i <= count; i++ {
			text := fmt.Sprintf("%s%d", tc.prefix, i)
			mu.Lock()
			m := got[text]
			mu.Unlock()
			if m.Sender.User != contact {
				t.Fatalf("%q: from %s, want %s", text, m.Sender, contact)
			}
			secret, err := cli.MessageSecret(ctx, m.Chat, m.Sender, m.ID)
			if err != nil {
				t.Fatal(err)
			}
			if tc.secrets && len(secret) != 32 {
				t.Errorf("%q (%s): the store keeps a secret of %d bytes, want the 32 its phone gave it", text, m.ID, len(secret))
			}
			if !tc.secrets && secret != nil {
				t.Errorf("%q (%s): the store keeps a secret %x, want none (the burst carried none)", text, m.ID, secret)
			}
		}
	}
}

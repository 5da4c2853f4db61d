package wafake_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waMmsRetry"
	"go.mau.fi/whatsmeow/types/events"
)

// TestMediaRetry: an image whose blob the media host deleted fails to
// download; the device's media retry receipt makes the phone upload it
// again and answer with the new direct path (events.MediaRetry, decrypted
// with the media key); a phone that lost the media answers with an error.
func TestMediaRetry(t *testing.T) {
	t.Parallel()
	const me, contact = "491702220032", "491702220033"
	n := startNetwork(t)
	cli, _ := linkSettled(t, n, me)
	msgs := contactMessages(cli)
	retries := eventsOf[*events.MediaRetry](cli)
	ctx := context.Background()
	pic := fakeJPEG(t)

	for _, forget := range []bool{false, true} {
		id, err := n.SendImage(contact, me, pic, "image/jpeg", "")
		if err != nil {
			t.Fatal(err)
		}
		m := nextEvent(t, msgs)
		img := m.Message.GetImageMessage()
		if err := n.ExpireMedia(id, forget); err != nil {
			t.Fatal(err)
		}
		if _, err := cli.Download(ctx, img); !errors.Is(err, whatsmeow.ErrMediaDownloadFailedWith404) {
			t.Fatalf("download of an expired blob: %v, want 404", err)
		}
		if err := cli.SendMediaRetryReceipt(ctx, &m.Info, img.GetMediaKey()); err != nil {
			t.Fatal(err)
		}
		r := nextEvent(t, retries)
		if r.MessageID != id || r.ChatID != m.Info.Chat {
			t.Errorf("media retry %+v, want %s in %s", r, id, m.Info.Chat)
		}
		notif, err := whatsmeow.DecryptMediaRetryNotification(r, img.GetMediaKey())
		if forget {
			if !errors.Is(err, whatsmeow.ErrMediaNotAvailableOnPhone) {
				t.Errorf("retry of lost media: %v, want ErrMediaNotAvailableOnPhone", err)
			}
			continue
		}
		if err != nil || notif.GetResult() != waMmsRetry.MediaRetryNotification_SUCCESS {
			t.Fatalf("retry: %v %v", notif, err)
		}
		img.DirectPath = notif.DirectPath
		if got, err := cli.Download(ctx, img); err != nil || !bytes.Equal(got, pic) {
			t.Errorf("download at the new path: %d bytes, %v", len(got), err)
		}
	}
}

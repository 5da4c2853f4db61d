package whatsapp

import (
	"bytes"
	"testing"

	"github.com/wagraph/wagraph/internal/fault"
)

// TestDownload: the record of a received and of a sent media message
// carries what downloads its attachment again, and Download returns the
// decrypted bytes through the real client; a blob the media host lost, a
// wrong key and a session that is not connected are classified.
func TestDownload(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	st := e.pairQR(m, "s1", phone)

	pic := tinyPNG(t)
	inID, err := e.net.SendImage(peer, phone, pic, "image/png", "look")
	if err != nil {
		t.Fatal(err)
	}
	in, _ := e.event("s1", KindInboundMessage, inID)
	inRef := in.Message.Media
	if inRef == nil || inRef.MediaType != "image" || inRef.Mimetype != "image/png" || inRef.FileLength != uint64(len(pic)) ||
		inRef.DirectPath == "" || len(inRef.MediaKey) != 32 {
		t.Fatalf("inbound image's media %+v", inRef)
	}

	doc := []byte("%PDF-1.4 a tiny document")
	sent, err := m.Send(ctx, "s1", Outgoing{To: phoneJID(peer), Type: "document", Media: &Media{Data: doc, Mimetype: "application/pdf", FileName: "q3.pdf"}})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := e.event("s1", KindOutboundMessage, sent.ID)
	outRef := out.Message.Media
	if outRef == nil || outRef.MediaType != "document" || outRef.FileName != "q3.pdf" || outRef.Mimetype != "application/pdf" {
		t.Fatalf("sent document's media %+v", outRef)
	}

	text, err := m.Send(ctx, "s1", Outgoing{To: phoneJID(peer), Type: "text", Text: "no media"})
	if err != nil {
		t.Fatal(err)
	}
	if ev, _ := e.event("s1", KindOutboundMessage, text.ID); ev.Message.Media != nil || ev.Data["mediaUrl"] != nil {
		t.Errorf("a text message has media %+v, mediaUrl %v", ev.Message.Media, ev.Data["mediaUrl"])
	}

	for _, tt := range []struct {
		name string
		ref  MediaRef
		want []byte
	}{
		{"received image", *inRef, pic},
		{"sent document", *outRef, doc},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := m.Download(ctx, "s1", tt.ref)
			if err != nil || !bytes.Equal(got, tt.want) {
				t.Errorf("Download = %d bytes, %v; want %d bytes", len(got), err, len(tt.want))
			}
		})
	}

	gone, badKey := *inRef, *inRef
	gone.DirectPath = "/v/t62.7118-24/00000000000000000000000000000000_n.enc?ccb=11-4"
	badKey.MediaKey = bytes.Repeat([]byte{7}, 32)
	for _, tt := range []struct {
		name    string
		session string
		ref     MediaRef
		code    fault.Code
		msg     string
	}{
		{"deleted by the media host", "s1", gone, fault.NotFound, "the media is no longer on WhatsApp's servers"},
		{"wrong media key", "s1", badKey, fault.WhatsAppError, "does not match the message"},
		{"session not connected", "s2", *inRef, fault.NotConnected, "session s2 is not connected"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := m.Download(ctx, tt.session, tt.ref)
			wantFault(t, err, tt.code, tt.msg)
		})
	}
	e.settle(st)
}

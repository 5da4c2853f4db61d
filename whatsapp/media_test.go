package whatsapp

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"go.mau.fi/whatsmeow"

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

// TestDownloadFileBounds: a download is written to a file and refused once
// the media host sends more than the message declares (the sender chose
// both the blob and its hashes, so they prove nothing about its size), or
// more than the caller's bound when the message declares no size.
func TestDownloadFileBounds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	st := e.pairQR(m, "s1", phone)
	doc := bytes.Repeat([]byte("a page of the minutes\n"), 1000) // 22,000 bytes
	up, err := e.net.Upload(doc, whatsmeow.MediaDocument)
	if err != nil {
		t.Fatal(err)
	}
	ref := MediaRef{DirectPath: up.DirectPath, MediaKey: up.MediaKey, FileSHA256: up.FileSHA256, FileEncSHA256: up.FileEncSHA256,
		FileLength: up.FileLength, MediaType: "document"}
	undeclared, lie := ref, ref
	undeclared.FileLength = 0
	lie.FileLength = 1000
	for _, tt := range []struct {
		name string
		ref  MediaRef
		max  int64
		code fault.Code
		msg  string
	}{
		{"as declared", ref, 0, "", ""},
		{"as declared, within the bound", ref, 1 << 20, "", ""},
		{"no size declared", undeclared, 0, "", ""},
		{"no size declared, within the bound", undeclared, int64(len(doc)), "", ""},
		{"larger than declared", lie, 0, fault.WhatsAppError, "larger than the 1000 bytes its message declares"},
		{"larger than declared, within the bound", lie, 1 << 20, fault.WhatsAppError, "larger than the 1000 bytes its message declares"},
		{"no size declared, over the bound", undeclared, 4096, fault.TooLarge, "larger than the 4096 bytes this download takes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := m.DownloadFile(ctx, "s1", tt.ref, tt.max)
			if tt.code != "" {
				wantFault(t, err, tt.code, tt.msg)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got, err := io.ReadAll(f.Reader())
			if err != nil || !bytes.Equal(got, doc) || f.Size() != int64(len(doc)) {
				t.Errorf("read %d bytes (size %d), %v; want the %d of the document", len(got), f.Size(), err, len(doc))
			}
		})
	}
	e.settle(st)
}

// TestSendFromBody: media kept out of memory (Media.Body) is uploaded from
// there, and travels to another process as its bytes.
func TestSendFromBody(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	st := e.pairQR(m, "s1", phone)
	doc := bytes.Repeat([]byte("%PDF-1.4 the report\n"), 5000)
	file, err := NewMediaFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	out := Outgoing{To: phoneJID(peer), Type: "document", Media: &Media{Body: file, Mimetype: "application/pdf", FileName: "report.pdf"}}
	sent, err := m.Send(ctx, "s1", out)
	if err != nil {
		t.Fatal(err)
	}
	ev, _ := e.event("s1", KindOutboundMessage, sent.ID)
	if ref := ev.Message.Media; ref == nil || ref.FileLength != uint64(len(doc)) {
		t.Fatalf("sent document's media %+v", ref)
	}
	got, err := m.Download(ctx, "s1", *ev.Message.Media)
	if err != nil || !bytes.Equal(got, doc) {
		t.Errorf("the sent document downloads as %d bytes, %v; want the %d sent", len(got), err, len(doc))
	}

	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	var carried Outgoing
	if err := json.Unmarshal(b, &carried); err != nil {
		t.Fatal(err)
	}
	if md := carried.Media; md == nil || !bytes.Equal(md.Data, doc) || md.FileName != "report.pdf" || md.Body != nil {
		t.Errorf("the send as another process reads it: %+v", carried.Media)
	}
	e.settle(st)
}

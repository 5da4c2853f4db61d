package messaging

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wagraph/wagraph/ent"
	entmessage "github.com/wagraph/wagraph/ent/message"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/media"
	"github.com/wagraph/wagraph/whatsapp"
)

// countingSlots is fakePreparer whose download slots are counted: how
// many are held now, and how many were ever taken.
type countingSlots struct {
	fakePreparer
	mu          sync.Mutex
	held, taken int
}

func (c *countingSlots) DownloadSlot(context.Context) (func(), error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held++
	c.taken++
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.held--
		})
	}, nil
}

func (c *countingSlots) counts() (held, taken int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.held, c.taken
}

// forwardOps is a session whose media host holds blob for every download
// and whose sends are kept with the download slots held while they ran.
type forwardOps struct {
	blob  []byte
	slots *countingSlots

	mu        sync.Mutex
	ops       []string
	sent      []whatsapp.Outgoing
	uploaded  [][]byte // each send's media as the upload read it
	heldAtRun []int    // download slots held while each send ran
}

func (f *forwardOps) Run(_ context.Context, _ string, c whatsapp.Call) error {
	if answerConnected(c) {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ops = append(f.ops, c.Op)
	switch c.Op {
	case whatsapp.OpDownload().Name():
		*c.Result.(*[]byte) = bytes.Clone(f.blob)
	case whatsapp.OpSend().Name():
		out := c.Request.(whatsapp.Outgoing)
		var up []byte
		if md := out.Media; md != nil && len(md.Data) > 0 {
			up = md.Data
		} else if md != nil && md.Body != nil {
			var err error
			if up, err = io.ReadAll(io.NewSectionReader(md.Body, 0, md.Body.Size())); err != nil {
				return err
			}
		}
		held, _ := f.slots.counts()
		f.sent, f.uploaded, f.heldAtRun = append(f.sent, out), append(f.uploaded, up), append(f.heldAtRun, held)
		*c.Result.(*whatsapp.Sent) = whatsapp.Sent{ID: "FWD", Timestamp: time.Now()}
	}
	return nil
}

// TestForwardBounds (issue 31, finding 3): a stored attachment is
// forwarded only when its declared size is within WhatsApp's limit for
// its kind, checked before anything is downloaded (the refusal names the
// message, its size and the rule); a download larger than the bound it
// was made under is refused too. A forward holds its download slot until
// its send has ended, the upload included, then gives it back; the media
// it uploads is what was downloaded, read from the file it was kept in.
func TestForwardBounds(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name     string
		typ      string
		declared int64 // the stored reference's FileLength
		blob     int   // what the media host holds
		want     string
	}{
		{"document at its limit", TypeDocument, media.MaxDocument, 1 << 10, ""},
		{"document over its limit", TypeDocument, media.MaxDocument + 1, 1 << 10,
			"message M1 is a document of 100.1 MiB; WhatsApp takes documents up to 100 MiB"},
		{"image over its limit", TypeImage, media.MaxImage + 1, 1 << 10, "message M1 is an image of 16.1 MiB; WhatsApp takes images up to 16 MiB"},
		{"video over its limit", TypeVideo, 70 << 20, 1 << 10, "message M1 is a video of 70.0 MiB; WhatsApp takes videos up to 64 MiB"},
		{"voice note over its limit", "voice", media.MaxAudio + 1, 1 << 10, "WhatsApp takes voice notes up to 16 MiB"},
		{"sticker over its limit", TypeSticker, 600 << 10, 1 << 10, "message M1 is a sticker of 600 KiB; WhatsApp takes stickers up to 500 KiB"},
		{"image within its limit", TypeImage, 2 << 10, 2 << 10, ""},
		// No declared size: the download itself is held to the limit.
		{"sticker of no declared size, downloaded too large", TypeSticker, 0, media.MaxSticker + 1, "message M1 is a sticker of more than 500 KiB; WhatsApp takes stickers up to 500 KiB"},
		{"sticker of no declared size", TypeSticker, 0, 300 << 10, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := sessionDB(t)
			blob := bytes.Repeat([]byte{7}, tt.blob)
			slots := &countingSlots{}
			ops := &forwardOps{blob: blob, slots: slots}
			s := New(Options{DB: db, Sender: ops, Loader: fakeLoader{}, Preparer: slots, Publisher: &events{}, Now: func() time.Time { return now }})
			ref, err := json.Marshal(whatsapp.MediaRef{DirectPath: "/v/t62/blob", MediaKey: []byte("key"), FileLength: uint64(tt.declared),
				Mimetype: "application/octet-stream", FileName: "a.bin", MediaType: "document"})
			if err != nil {
				t.Fatal(err)
			}
			storeReceived(t, db, "M1", tt.typ, ref, now)

			_, err = s.Send(ctx, "s1", Request{Type: TypeForward, Number: peerNumber, Forward: "M1"})
			held, taken := slots.counts()
			if held != 0 {
				t.Errorf("%d download slots still held after the forward", held)
			}
			if tt.want != "" {
				wantFault(t, err, fault.TooLarge, "", tt.want)
				if tt.declared > 0 && (taken != 0 || slices.Contains(ops.ops, whatsapp.OpDownload().Name())) {
					t.Errorf("over its declared limit, yet %d slots taken, operations %v: the size is checked before anything is downloaded", taken, ops.ops)
				}
				if len(ops.sent) != 0 {
					t.Errorf("sent %d messages", len(ops.sent))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(ops.sent) != 1 || !ops.sent[0].Forwarded {
				t.Fatalf("sent %+v, want one forwarded message", ops.sent)
			}
			if ops.heldAtRun[0] != 1 {
				t.Errorf("%d download slots held while the send (its upload) ran, want 1: the forward's", ops.heldAtRun[0])
			}
			if !bytes.Equal(ops.uploaded[0], blob) {
				t.Errorf("uploaded %d bytes, want the %d downloaded", len(ops.uploaded[0]), len(blob))
			}
		})
	}
}

// TestScheduledForwardKeepsItsMedia: a forward with a delay stores the
// media it downloaded (read from its file) and gives its slot back at
// once; the send goes out with those bytes when it is due.
func TestScheduledForwardKeepsItsMedia(t *testing.T) {
	ctx := context.Background()
	db := sessionDB(t)
	var mu sync.Mutex
	now := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	slots := &countingSlots{}
	ops := &forwardOps{blob: []byte("%PDF-1.4 minutes"), slots: slots}
	s := New(Options{DB: db, Sender: ops, Loader: fakeLoader{}, Preparer: slots, Publisher: &events{}, Now: clock})
	ref, err := json.Marshal(whatsapp.MediaRef{DirectPath: "/v/t62/blob", MediaKey: []byte("key"), FileLength: 16, FileName: "minutes.pdf", MediaType: "document"})
	if err != nil {
		t.Fatal(err)
	}
	storeReceived(t, db, "DOC", TypeDocument, ref, now)
	res, err := s.Send(ctx, "s1", Request{Type: TypeForward, Number: peerNumber, Forward: "DOC", Delay: ptr(60)})
	if err != nil || res.ScheduledAt == nil {
		t.Fatalf("%+v, %v; want scheduled", res, err)
	}
	if held, _ := slots.counts(); held != 0 {
		t.Errorf("%d download slots held by a stored send", held)
	}
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	if _, err := s.runDue(ctx); err != nil {
		t.Fatal(err)
	}
	if len(ops.sent) != 1 || string(ops.uploaded[0]) != "%PDF-1.4 minutes" || ops.sent[0].Media.FileName != "minutes.pdf" || !ops.sent[0].Forwarded {
		t.Fatalf("sent %+v (media %q), want the forwarded document", ops.sent, ops.uploaded)
	}
}

// storeReceived stores a received media message of type typ with the
// media reference ref.
func storeReceived(t *testing.T, db *ent.Client, id, typ string, ref []byte, at time.Time) {
	t.Helper()
	db.Message.Create().SetSessionID("s1").SetMessageID(id).SetChat(peerJID).SetSender(peerJID).SetFromMe(false).SetType(typ).
		SetStatus(entmessage.StatusReceived).SetTimestamp(at.Add(-time.Hour)).SetMedia(ref).ExecX(context.Background())
}

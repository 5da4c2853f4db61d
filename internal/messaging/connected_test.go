package messaging

import (
	"context"
	"sync"
	"testing"

	entmessage "github.com/wagraph/wagraph/ent/message"
	"github.com/wagraph/wagraph/internal/events/payload"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/linkpreview"
	"github.com/wagraph/wagraph/internal/media"
	"github.com/wagraph/wagraph/whatsapp"
)

// work counts what a send had done for it: sources loaded, link previews
// fetched, media prepared.
type work struct {
	mu                        sync.Mutex
	loads, previews, prepares int
}

func (w *work) count(n *int) {
	w.mu.Lock()
	*n++
	w.mu.Unlock()
}

func (w *work) Load(ctx context.Context, field, source string) ([]byte, error) {
	w.count(&w.loads)
	return fakeLoader{}.Load(ctx, field, source)
}

func (w *work) Preview(context.Context, string) (*linkpreview.Preview, error) {
	w.count(&w.previews)
	return &linkpreview.Preview{Title: "t"}, nil
}

// countingPreparer is fakePreparer counting its preparations.
type countingPreparer struct {
	fakePreparer
	w *work
}

func (p countingPreparer) Image(ctx context.Context, data []byte, name string) (media.File, error) {
	p.w.count(&p.w.prepares)
	return p.fakePreparer.Image(ctx, data, name)
}

func (p countingPreparer) Sticker(ctx context.Context, data []byte) (media.File, error) {
	p.w.count(&p.w.prepares)
	return p.fakePreparer.Sticker(ctx, data)
}

func (p countingPreparer) DownloadSlot(ctx context.Context) (func(), error) {
	p.w.count(&p.w.prepares)
	return p.fakePreparer.DownloadSlot(ctx)
}

// statusRunner is a session in status: it answers its state, and sends
// when it is CONNECTED, as a session does.
type statusRunner struct{ status whatsapp.Status }

func (r statusRunner) Run(_ context.Context, id string, c whatsapp.Call) error {
	switch c.Op {
	case whatsapp.OpStatus().Name():
		*c.Result.(*whatsapp.SessionState) = whatsapp.SessionState{Status: r.status}
	case whatsapp.OpSend().Name():
		if r.status != whatsapp.StatusConnected {
			return fault.New(fault.NotConnected, "session %s is not connected (status: %s)", id, r.status)
		}
		*c.Result.(*whatsapp.Sent) = whatsapp.Sent{ID: "3EB0SENT"}
	}
	return nil
}

// TestNothingDoneForASessionNotConnected: a send from a session that is
// not connected is refused NOT_CONNECTED before its source is loaded, its
// link preview fetched or its media prepared, scheduled or not. 24 texts
// from a session never linked, each refused NOT_CONNECTED after its
// preview's image had been decoded, took a process from 56 to 2,640 MiB.
func TestNothingDoneForASessionNotConnected(t *testing.T) {
	reqs := []struct {
		name string
		req  Request
	}{
		{"text with a link", Request{Type: TypeText, Number: peerNumber, Text: "see https://example.com/bomb"}},
		{"scheduled text with a link", Request{Type: TypeText, Number: peerNumber, Text: "later https://example.com/bomb", Delay: ptr(60)}},
		{"image", Request{Type: TypeImage, Number: peerNumber, Source: "https://example.com/a.png"}},
		{"sticker", Request{Type: TypeSticker, Number: peerNumber, Source: "https://example.com/a.webp"}},
		{"forward of an image", Request{Type: TypeForward, Number: peerNumber, Forward: "SENTIMAGE"}},
	}
	// The image stored as sent has media to download again.
	withMedia := func(t *testing.T) *rulesEnv {
		e := newRulesEnv(t)
		ref, err := encodeMediaRef(&whatsapp.MediaRef{Mimetype: "image/png"})
		if err != nil {
			t.Fatal(err)
		}
		e.db.Message.Update().Where(entmessage.MessageID("SENTIMAGE")).SetMedia(ref).ExecX(context.Background())
		return e
	}
	for _, status := range []whatsapp.Status{whatsapp.StatusDisconnected, whatsapp.StatusPairing, whatsapp.StatusConnecting, whatsapp.StatusLoggedOut} {
		for _, tt := range reqs {
			t.Run(string(status)+"/"+tt.name, func(t *testing.T) {
				e := withMedia(t)
				w := &work{}
				pub := &events{}
				s := New(Options{DB: e.db, Sender: statusRunner{status}, Loader: w, Preparer: countingPreparer{w: w}, Previewer: w, Publisher: pub})
				_, err := s.Send(context.Background(), "s1", tt.req)
				want := "session s1 is not connected (status: " + string(status) + ")"
				wantFault(t, err, fault.NotConnected, "", want)
				if w.loads+w.previews+w.prepares != 0 {
					t.Errorf("%d loads, %d previews, %d preparations made for a session not connected", w.loads, w.previews, w.prepares)
				}
				// A failed send, as the session's own refusal was.
				pub.mu.Lock()
				defer pub.mu.Unlock()
				if len(pub.evs) != 1 || pub.evs[0].Kind != whatsapp.KindMessagesSend {
					t.Fatalf("published %+v, want one messages.send", pub.evs)
				}
				if d := pub.evs[0].Data.(*payload.MessageStatus); d.Status != "failed" || string(d.Error) != want || d.Chat != peerJID || d.ID == "" {
					t.Errorf("messages.send %+v, want failed to %s with the refusal", d, peerJID)
				}
			})
		}
	}
	t.Run("connected: all of it is done", func(t *testing.T) {
		e := withMedia(t)
		w := &work{}
		s := New(Options{DB: e.db, Sender: statusRunner{whatsapp.StatusConnected}, Loader: w, Preparer: countingPreparer{w: w}, Previewer: w, Publisher: &events{}})
		for _, tt := range reqs {
			if _, err := s.Send(context.Background(), "s1", tt.req); err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
		}
		if w.previews != 2 || w.loads != 2 || w.prepares != 4 {
			t.Errorf("%d loads, %d previews, %d preparations; want 2, 2 and 4 (the forward's download and image)", w.loads, w.previews, w.prepares)
		}
	})
}

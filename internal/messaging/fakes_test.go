package messaging

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wagraph/wagraph/ent"
	entmessage "github.com/wagraph/wagraph/ent/message"
	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/geocode"
	"github.com/wagraph/wagraph/internal/media"
	"github.com/wagraph/wagraph/whatsapp"
)

// fakeLoader loads a source as its own bytes; "missing" fails naming the
// field it was asked for.
type fakeLoader struct{}

func (fakeLoader) Load(_ context.Context, field, source string) ([]byte, error) {
	if source == "missing" {
		return nil, fault.InvalidField(field, "%s could not be loaded", field)
	}
	return []byte(source), nil
}

// fakePreparer prepares media as what it was asked for, so a test sees
// which preparation a kind chose.
type fakePreparer struct{}

func (fakePreparer) Image(_ context.Context, data []byte, name string) (media.File, error) {
	return media.File{Data: data, Mimetype: "image/jpeg", FileName: name}, nil
}

func (fakePreparer) Video(_ context.Context, data []byte, name string) (media.File, error) {
	return media.File{Data: data, Mimetype: "video/mp4", FileName: name}, nil
}

func (fakePreparer) Document(_ context.Context, data []byte, name string) (media.File, error) {
	return media.File{Data: data, Mimetype: "application/pdf", FileName: name}, nil
}

func (fakePreparer) DocumentFile(_ context.Context, _ []byte, _ int64, name string) (media.File, error) {
	return media.File{Mimetype: "application/pdf", FileName: name}, nil
}

func (fakePreparer) Audio(_ context.Context, data []byte, voiceNote bool) (media.File, error) {
	f := media.File{Data: data, Mimetype: "audio/mpeg"}
	if voiceNote {
		f.Mimetype, f.Waveform = "audio/ogg; codecs=opus", []byte{1, 2}
	}
	return f, nil
}

func (fakePreparer) Sticker(_ context.Context, data []byte) (media.File, error) {
	return media.File{Data: data, Mimetype: "image/webp", Width: 512, Height: 512}, nil
}

func (fakePreparer) DownloadSlot(context.Context) (func(), error) { return func() {}, nil }

// fakeGeocoder knows one address; it counts its lookups.
type fakeGeocoder struct {
	mu      sync.Mutex
	lookups int
}

func (g *fakeGeocoder) Lookup(_ context.Context, address string) (geocode.Place, error) {
	g.mu.Lock()
	g.lookups++
	g.mu.Unlock()
	if address != "Pariser Platz, Berlin" {
		return geocode.Place{}, fault.InvalidField("address", "address %q was not found", address)
	}
	return geocode.Place{Latitude: 52.5163, Longitude: 13.3777, Name: "Brandenburger Tor"}, nil
}

// answerConnected answers c when it asks for the session's state: the
// session is CONNECTED.
func answerConnected(c whatsapp.Call) bool {
	if c.Op != whatsapp.OpStatus().Name() {
		return false
	}
	*c.Result.(*whatsapp.SessionState) = whatsapp.SessionState{Status: whatsapp.StatusConnected}
	return true
}

// allOps answers every operation of a CONNECTED session: a send is kept
// (keptSender), any other succeeds with a zero result and is counted by
// its name.
type allOps struct {
	keptSender
	mu  sync.Mutex
	ops []string
}

func (a *allOps) Run(_ context.Context, _ string, c whatsapp.Call) error {
	if answerConnected(c) {
		return nil
	}
	if c.Op == whatsapp.OpSend().Name() {
		sent, err := a.send(c.Request.(whatsapp.Outgoing))
		*c.Result.(*whatsapp.Sent) = sent
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ops = append(a.ops, c.Op)
	return nil
}

func (a *allOps) ran() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.ops...)
}

// The chats and people of the rule tests.
const (
	peerNumber = "4915550654321"
	peerJID    = peerNumber + "@s.whatsapp.net"
	ownJID     = "4915550000009@s.whatsapp.net"
	groupJID   = "120363000000000001@g.us"
)

// rulesEnv is a Service over a real database whose media, geocoder and
// WhatsApp are fakes, with a clock the test sets, and stored messages to
// quote, forward, react to, edit and mark read.
type rulesEnv struct {
	s   *Service
	ops *allOps
	geo *fakeGeocoder
	db  *ent.Client
	now time.Time
}

func newRulesEnv(t *testing.T) *rulesEnv {
	t.Helper()
	ctx := context.Background()
	db := sessionDB(t)
	e := &rulesEnv{ops: &allOps{}, geo: &fakeGeocoder{}, db: db, now: time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)}
	e.s = New(Options{DB: db, Sender: e.ops, Loader: fakeLoader{}, Preparer: fakePreparer{}, Geocoder: e.geo,
		Publisher: &events{}, Now: func() time.Time { return e.now }})
	msg := func(id, chat, sender string, fromMe bool, typ, status string, age time.Duration) {
		db.Message.Create().SetSessionID("s1").SetMessageID(id).SetChat(chat).SetSender(sender).SetFromMe(fromMe).
			SetType(typ).SetText("stored " + id).SetStatus(entmessage.Status(status)).SetTimestamp(e.now.Add(-age)).ExecX(ctx)
	}
	msg("RECEIVED", peerJID, peerJID, false, "text", "received", time.Hour)
	msg("GROUPMSG", groupJID, peerJID, false, "text", "received", time.Hour)
	msg("SENTNOW", peerJID, ownJID, true, "text", "sent", time.Minute)
	msg("SENTIMAGE", peerJID, ownJID, true, "image", "sent", time.Minute)
	msg("SENTLOC", peerJID, ownJID, true, "location", "sent", time.Minute)
	msg("SENTOLD", peerJID, ownJID, true, "text", "sent", whatsapp.EditWindow+time.Minute)
	msg("SENTEDGE", peerJID, ownJID, true, "text", "sent", whatsapp.EditWindow-time.Minute)
	msg("SCHEDULED", peerJID, "", true, "text", "scheduled", -time.Hour)
	msg("FAILED", peerJID, ownJID, true, "text", "failed", time.Minute)
	return e
}

// wantFault checks err is a fault of code naming field (for an invalid
// input) with a message holding each of want.
func wantFault(t *testing.T, err error, code fault.Code, field string, want ...string) {
	t.Helper()
	f := fault.From(err)
	if f == nil {
		t.Fatalf("err %v, want a %s fault", err, code)
	}
	if f.Code != code || f.Field != field {
		t.Errorf("fault %s on %q (%s), want %s on %q", f.Code, f.Field, f.Message, code, field)
	}
	for _, w := range want {
		if !strings.Contains(f.Message, w) {
			t.Errorf("message %q does not say %q", f.Message, w)
		}
	}
}

// sessionDB is a fresh database holding the session s1 of user u1, which
// the tests send from and store messages of.
func sessionDB(t *testing.T) *ent.Client {
	t.Helper()
	ctx := context.Background()
	db := dbtest.Open(t).Ent
	db.User.Create().SetID("u1").SetName("owner").ExecX(ctx)
	db.Session.Create().SetID("s1").SetOwnerID("u1").ExecX(ctx)
	return db
}

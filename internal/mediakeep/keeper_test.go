package mediakeep_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wagraph/wagraph/ent"
	entmessage "github.com/wagraph/wagraph/ent/message"
	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/mediakeep"
	"github.com/wagraph/wagraph/internal/mediastore"
	"github.com/wagraph/wagraph/internal/testclient"
	"github.com/wagraph/wagraph/whatsapp"
)

// phone is a fake WhatsApp for the keeper: each download answers the
// bytes of its direct path, or the fault queued for it; gate, when set,
// holds every download until it is closed; media retries are counted.
type phone struct {
	mu      sync.Mutex
	blobs   map[string][]byte
	faults  map[string][]error
	started []string // direct paths, in the order their downloads began
	retries []string // message ids the phone was asked for again
	gate    chan struct{}
}

func (p *phone) Run(ctx context.Context, _ string, c whatsapp.Call) error {
	switch c.Op {
	case whatsapp.OpRequestMediaRetry().Name():
		p.mu.Lock()
		defer p.mu.Unlock()
		p.retries = append(p.retries, c.Request.(whatsapp.Message).ID)
		return nil
	case whatsapp.OpDownload().Name():
	default:
		return fault.New(fault.Internal, "unexpected %s", c.Op)
	}
	ref := c.Request.(whatsapp.MediaRef)
	p.mu.Lock()
	p.started = append(p.started, ref.DirectPath)
	gate := p.gate
	var err error
	if q := p.faults[ref.DirectPath]; len(q) > 0 {
		err, p.faults[ref.DirectPath] = q[0], q[1:]
	}
	data := p.blobs[ref.DirectPath]
	p.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err != nil {
		return err
	}
	*c.Result.(*[]byte) = data
	return nil
}

type keeperEnv struct {
	db    *ent.Client
	store *mediastore.Local
	phone *phone
	now   time.Time
}

func newKeeperEnv(t *testing.T) *keeperEnv {
	db := dbtest.Open(t).Ent
	store, err := mediastore.NewLocal(filepath.Join(t.TempDir(), "media"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db.User.Create().SetID("u1").SetName("owner").ExecX(ctx)
	for _, s := range []string{"s1", "s2"} {
		db.Session.Create().SetID(s).SetOwnerID("u1").ExecX(ctx)
	}
	return &keeperEnv{db: db, store: store, phone: &phone{blobs: map[string][]byte{}, faults: map[string][]error{}}, now: time.Now().UTC()}
}

// message stores a received image of session sess, due at due, whose
// media host path is path and bytes data.
func (e *keeperEnv) message(t *testing.T, sess, id, path string, data []byte, due time.Time) {
	sum := sha256.Sum256(data)
	ref, _ := json.Marshal(whatsapp.MediaRef{DirectPath: path, MediaKey: []byte("k"), FileSHA256: sum[:], FileLength: uint64(len(data)), Mimetype: "image/jpeg", MediaType: "image"})
	e.phone.blobs[path] = data
	e.db.Message.Create().SetSessionID(sess).SetMessageID(id).SetChat("c@s.whatsapp.net").SetSender("c@s.whatsapp.net").
		SetFromMe(false).SetType("image").SetStatus(entmessage.StatusReceived).SetTimestamp(e.now).SetMedia(ref).SetMediaDue(due).ExecX(context.Background())
}

func (e *keeperEnv) run(t *testing.T, opts mediakeep.Options) *mediakeep.Keeper {
	if opts.Poll == 0 {
		opts.Poll = 20 * time.Millisecond
	}
	k := mediakeep.New(mediakeep.Deps{DB: e.db, Store: e.store}, opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); k.Run(ctx, e.phone, nil) }()
	t.Cleanup(func() { cancel(); <-done })
	return k
}

func (e *keeperEnv) row(t *testing.T, sess, id string) *ent.Message {
	return e.db.Message.Query().Where(entmessage.SessionID(sess), entmessage.MessageID(id)).OnlyX(context.Background())
}

// TestKeeperFair: a session with twenty media due keeps another's one
// waiting for one of its downloads at most, not for all twenty, though
// the one came last.
func TestKeeperFair(t *testing.T) {
	e := newKeeperEnv(t)
	for i := range 20 {
		e.message(t, "s1", "A"+string(rune('a'+i)), "/a/"+string(rune('a'+i)), []byte{'a', byte(i)}, e.now.Add(-time.Hour+time.Duration(i)*time.Second))
	}
	e.message(t, "s2", "B", "/b", []byte("b"), e.now.Add(-time.Minute))
	gate := make(chan struct{})
	e.phone.gate = gate
	k := e.run(t, mediakeep.Options{Concurrency: 2})
	// Both slots taken and the other session's download claimed and
	// waiting for a slot (the claim pass reads the sessions one after the
	// other, and a claimed download's goroutine asks the pool after), then
	// one download ends at a time.
	testclient.Until(t, 5*time.Second, "two downloads under way, the other session's waiting for a slot", func() bool {
		e.phone.mu.Lock()
		defer e.phone.mu.Unlock()
		return len(e.phone.started) == 2 && k.ClaimedBy("s2") == 1 && k.Waiting() == 1
	})
	for range 21 {
		gate <- struct{}{}
	}
	testclient.Until(t, 5*time.Second, "every media kept", func() bool {
		return e.db.Message.Query().Where(entmessage.MediaSha256IsNil()).CountX(context.Background()) == 0
	})
	e.phone.mu.Lock()
	started := slices.Clone(e.phone.started)
	e.phone.mu.Unlock()
	if i := slices.Index(started, "/b"); i < 0 || i > 2 {
		t.Errorf("the other session's download began %dth: %v", i+1, started)
	}
}

// TestKeeperRetries: a failed download is put off by the backoff and
// then kept; media gone from the media host is asked again from the
// phone and waited for; one past the size bound is skipped at once.
func TestKeeperRetries(t *testing.T) {
	e := newKeeperEnv(t)
	past := e.now.Add(-time.Minute)
	e.message(t, "s1", "SLOW", "/slow", []byte("slow"), past)
	e.phone.faults["/slow"] = []error{fault.New(fault.WhatsAppTimeout, "media host slow")}
	e.message(t, "s1", "GONE", "/gone", []byte("gone"), past)
	e.phone.faults["/gone"] = []error{fault.New(fault.NotFound, "the media is no longer on WhatsApp's servers")}
	e.message(t, "s1", "BIG", "/big", []byte("big"), past)
	e.phone.faults["/big"] = []error{fault.New(fault.TooLarge, "the media is larger than the bytes this download takes")}
	e.run(t, mediakeep.Options{AskWait: time.Hour})

	testclient.Until(t, 5*time.Second, "the slow media kept after its backoff", func() bool {
		return e.row(t, "s1", "SLOW").MediaSha256 != nil
	})
	if m := e.row(t, "s1", "SLOW"); m.MediaTries != 1 || m.MediaDue != nil {
		t.Errorf("slow: tries %d, due %v; want 1, none", m.MediaTries, m.MediaDue)
	}
	sum := sha256.Sum256([]byte("slow"))
	if got := *e.row(t, "s1", "SLOW").MediaSha256; got != hex.EncodeToString(sum[:]) {
		t.Errorf("kept as %s", got)
	}
	gone := e.row(t, "s1", "GONE")
	if gone.MediaSha256 != nil || gone.MediaDue == nil || gone.MediaDue.Before(time.Now().Add(50*time.Minute)) || gone.MediaTries != 1 {
		t.Errorf("gone: kept %v, due %v, tries %d; want not kept, due after the ask's wait, one try", gone.MediaSha256, gone.MediaDue, gone.MediaTries)
	}
	e.phone.mu.Lock()
	if !slices.Equal(e.phone.retries, []string{"GONE"}) {
		t.Errorf("the phone was asked for %v, want [GONE]", e.phone.retries)
	}
	e.phone.mu.Unlock()
	if big := e.row(t, "s1", "BIG"); big.MediaSha256 != nil || big.MediaDue != nil {
		t.Errorf("too large: kept %v, due %v; want skipped", big.MediaSha256, big.MediaDue)
	}
}

// TestPrune: files older than the retention go, and the messages that
// referred to them no longer do (the route downloads on demand); newer
// files stay; without a retention nothing goes.
func TestPrune(t *testing.T) {
	ctx := context.Background()
	e := newKeeperEnv(t)
	old, err := e.store.Put(ctx, bytes.NewReader([]byte("old")))
	if err != nil {
		t.Fatal(err)
	}
	e.message(t, "s1", "OLD", "/old", []byte("old"), e.now)
	e.db.Message.Update().Where(entmessage.MessageID("OLD")).SetMediaSha256(old.SHA256).ClearMediaDue().ExecX(ctx)
	later := time.Now().Add(48 * time.Hour)
	fresh, err := e.store.Put(ctx, bytes.NewReader([]byte("fresh")))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(e.store.Dir(), fresh.SHA256[:2], fresh.SHA256[2:4], fresh.SHA256), later, later); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		retention time.Duration
		pruned    int
	}{{0, 0}, {24 * time.Hour, 1}} {
		k := mediakeep.New(mediakeep.Deps{DB: e.db, Store: e.store, Now: func() time.Time { return later }}, mediakeep.Options{Retention: tt.retention})
		if n, err := k.Prune(ctx); err != nil || n != tt.pruned {
			t.Fatalf("retention %v: pruned %d, %v; want %d", tt.retention, n, err, tt.pruned)
		}
	}
	if _, _, err := e.store.Open(ctx, old.SHA256); fault.CodeOf(err) != fault.NotFound {
		t.Errorf("the old file: %v, want it gone", err)
	}
	if obj, _, err := e.store.Open(ctx, fresh.SHA256); err != nil {
		t.Errorf("the fresh file: %v", err)
	} else {
		obj.Close()
	}
	if m := e.row(t, "s1", "OLD"); m.MediaSha256 != nil {
		t.Errorf("the message still refers to the pruned file %s", *m.MediaSha256)
	}
}

// TestKeeperTrustsNoClaimedHash: a message whose sender claims the
// SHA-256 of a file another session kept gets that file only by
// downloading bytes that are it; this session's own kept file is reused
// without a download (a media received again).
func TestKeeperTrustsNoClaimedHash(t *testing.T) {
	e := newKeeperEnv(t)
	secret := []byte("another tenant's document")
	e.message(t, "s1", "A", "/a", secret, e.now.Add(-time.Minute))
	e.run(t, mediakeep.Options{})
	testclient.Until(t, 5*time.Second, "s1's file kept", func() bool { return e.row(t, "s1", "A").MediaSha256 != nil })

	// s2's message names s1's file by its hash; its blob is other bytes.
	e.message(t, "s2", "B", "/b", secret, e.now.Add(-time.Minute))
	e.phone.mu.Lock()
	e.phone.blobs["/b"] = []byte("what the sender really sent")
	e.phone.mu.Unlock()
	// s1 receives the same file again, from a path that no longer answers.
	e.message(t, "s1", "A2", "/a2", secret, e.now.Add(-time.Minute))
	e.phone.mu.Lock()
	e.phone.faults["/a2"] = []error{fault.New(fault.Internal, "not asked for")}
	e.phone.mu.Unlock()

	testclient.Until(t, 5*time.Second, "both settled", func() bool {
		return e.row(t, "s2", "B").MediaDue == nil && e.row(t, "s1", "A2").MediaDue == nil
	})
	sum := sha256.Sum256(secret)
	if got := e.row(t, "s2", "B").MediaSha256; got != nil && *got == hex.EncodeToString(sum[:]) {
		t.Errorf("s2's message refers to s1's file by the hash its sender claimed")
	}
	if got := e.row(t, "s1", "A2").MediaSha256; got == nil || *got != hex.EncodeToString(sum[:]) {
		t.Errorf("s1's second message: %v, want its kept file reused", got)
	}
	e.phone.mu.Lock()
	defer e.phone.mu.Unlock()
	if slices.Contains(e.phone.started, "/a2") {
		t.Errorf("s1's own kept file downloaded again: %v", e.phone.started)
	}
}

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"google.golang.org/protobuf/proto"

	"github.com/wagraph/wagraph/internal/app"
	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/mediakeep"
	"github.com/wagraph/wagraph/internal/mediastore"
	"github.com/wagraph/wagraph/internal/mediastore/s3test"
	"github.com/wagraph/wagraph/internal/testclient"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// keptStores are the media stores the kept-media tests run against, each
// made fresh for a test (issue 37): the server is given it, on SQLite and
// PostgreSQL alike.
var keptStores = []struct {
	name string
	open func(t *testing.T) mediakeep.Store
}{
	{"local", func(t *testing.T) mediakeep.Store {
		st, err := mediastore.NewLocal(filepath.Join(t.TempDir(), "media"))
		if err != nil {
			t.Fatal(err)
		}
		return st
	}},
	{"s3", func(t *testing.T) mediakeep.Store { return s3test.Serve(t).Store(t, "kept") }},
}

// startKeeping is StartLinkedWith whose server keeps media in store,
// looking for due downloads every poll.
func startKeeping(t *testing.T, store mediakeep.Store, poll time.Duration) (*apptest.Server, apptest.Session) {
	return apptest.StartLinkedWith(t, func(_ *config.Config, o *app.Options) {
		o.Media.Store, o.Media.Options.Poll = store, poll
	})
}

// keptBytes waits until store holds data (by its SHA-256) and reads it
// back.
func keptBytes(t *testing.T, store mediakeep.Store, data []byte) []byte {
	t.Helper()
	sum := sha256.Sum256(data)
	var got []byte
	testclient.Until(t, 20*time.Second, "the media kept", func() bool {
		obj, _, err := store.Open(context.Background(), hex.EncodeToString(sum[:]))
		if err != nil {
			return false
		}
		defer obj.Close()
		got, err = io.ReadAll(obj)
		return err == nil
	})
	return got
}

// sendMedia has the phone from send a media message of kind (video,
// document, voice) with data to the linked phone.
func sendMedia(t *testing.T, n *wafake.Network, from, kind string, data []byte) string {
	t.Helper()
	mt := map[string]whatsmeow.MediaType{"video": whatsmeow.MediaVideo, "document": whatsmeow.MediaDocument, "voice": whatsmeow.MediaAudio}[kind]
	up, err := n.Upload(data, mt)
	if err != nil {
		t.Fatal(err)
	}
	var msg waE2E.Message
	switch kind {
	case "video":
		msg.VideoMessage = &waE2E.VideoMessage{URL: proto.String(up.URL), DirectPath: proto.String(up.DirectPath), MediaKey: up.MediaKey,
			FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: proto.Uint64(up.FileLength), Mimetype: proto.String("video/mp4")}
	case "document":
		msg.DocumentMessage = &waE2E.DocumentMessage{URL: proto.String(up.URL), DirectPath: proto.String(up.DirectPath), MediaKey: up.MediaKey,
			FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: proto.Uint64(up.FileLength),
			Mimetype: proto.String("application/pdf"), FileName: proto.String("Bericht.pdf")}
	case "voice":
		msg.AudioMessage = &waE2E.AudioMessage{URL: proto.String(up.URL), DirectPath: proto.String(up.DirectPath), MediaKey: up.MediaKey,
			FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: proto.Uint64(up.FileLength),
			Mimetype: proto.String("audio/ogg; codecs=opus"), PTT: proto.Bool(true), Seconds: proto.Uint32(3)}
	}
	id, err := n.SendMessage(from, apptest.LinkedPhone, &msg)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func randomBytes(t *testing.T, prefix string, n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return append([]byte(prefix), b...)
}

// TestMediaKept: a received image, video, document and voice note are
// kept as they arrive, the bytes the phone sent; so is an image the
// session sent, from the bytes it uploaded. The media route serves the
// kept file with its SHA-256 as the ETag.
func TestMediaKept(t *testing.T) {
	t.Parallel()
	for _, st := range keptStores {
		t.Run(st.name, func(t *testing.T) {
			store := st.open(t)
			s, sess := startKeeping(t, store, 100*time.Millisecond)
			n := s.Network(t)
			const from = "4915550370001"
			photo := pngImage(t, 30, 20)
			img, err := n.SendImage(from, apptest.LinkedPhone, photo, "image/png", "")
			if err != nil {
				t.Fatal(err)
			}
			video, doc, voice := randomBytes(t, "video", 3000), []byte("%PDF-1.4\n% kept\n%%EOF\n"), randomBytes(t, "OggS", 2000)
			mine := pngImage(t, 22, 18)
			ids := map[string][]byte{
				img: photo, sendMedia(t, n, from, "video", video): video, sendMedia(t, n, from, "document", doc): doc,
				sendMedia(t, n, from, "voice", voice):                                                 voice,
				restSend(t, s, sess.ID, "image", map[string]any{"number": from, "source": b64(mine)}): mine,
			}
			for id, data := range ids {
				waitStored(t, s, sess.ID, id)
				if got := keptBytes(t, store, data); !bytes.Equal(got, data) {
					t.Errorf("message %s: kept %d bytes, want the %d sent", id, len(got), len(data))
				}
				var res apptest.Response
				sum := sha256.Sum256(data)
				testclient.Until(t, 10*time.Second, "the route serving the kept file", func() bool {
					res = s.REST(t, http.MethodGet, "/session/"+sess.ID+"/message/"+id+"/media", apptest.AdminToken, "")
					return res.Header.Get("ETag") == `"`+hex.EncodeToString(sum[:])+`"`
				})
				if res.Status != http.StatusOK || !bytes.Equal(res.Body, data) {
					t.Errorf("message %s: the route answered %d, %d bytes", id, res.Status, len(res.Body))
				}
			}
		})
	}
}

// TestMediaKeptAfterRestart: a download pending when the server stopped
// is made after it starts again; a media WhatsApp's media host forgot is
// asked again from the phone, which uploads it anew on the retry
// receipt, and it is kept from there.
func TestMediaKeptAfterRestart(t *testing.T) {
	t.Parallel()
	for _, st := range keptStores {
		t.Run(st.name, func(t *testing.T) {
			store := st.open(t)
			// The first server looks for due downloads once, at its start.
			first, sess := startKeeping(t, store, time.Hour)
			n := first.Network(t)
			const from = "4915550370002"
			doc := []byte("%PDF-1.4\n% pending across a restart\n%%EOF\n")
			pending := sendMedia(t, n, from, "document", doc)
			photo := pngImage(t, 26, 26)
			gone, err := n.SendImage(from, apptest.LinkedPhone, photo, "image/png", "")
			if err != nil {
				t.Fatal(err)
			}
			waitStored(t, first, sess.ID, pending)
			waitStored(t, first, sess.ID, gone)
			if err := n.ExpireMedia(gone, false); err != nil {
				t.Fatal(err)
			}
			apptest.Settle(t, n, sess)
			first.Stop(t)
			for _, data := range [][]byte{doc, photo} {
				sum := sha256.Sum256(data)
				if _, _, err := store.Open(context.Background(), hex.EncodeToString(sum[:])); fault.CodeOf(err) != fault.NotFound {
					t.Fatalf("kept before the restart (%v): the test tests nothing", err)
				}
			}

			second := apptest.StartWith(t, first.Config, func(o *app.Options) {
				o.Media.Store, o.Media.Options.Poll = store, 100*time.Millisecond
			})
			second.WaitStatus(t, sess.ID, "CONNECTED", nil)
			second.Track(sess)
			if got := keptBytes(t, store, doc); !bytes.Equal(got, doc) {
				t.Errorf("the pending document: kept %q", got)
			}
			if got := keptBytes(t, store, photo); !bytes.Equal(got, photo) {
				t.Errorf("the forgotten image: kept %d bytes, want the %d sent", len(got), len(photo))
			}
		})
	}
}

// TestMediaKeptSessionDeleted: deleting a session deletes its kept
// files, but not one another session's message refers to too.
func TestMediaKeptSessionDeleted(t *testing.T) {
	t.Parallel()
	for _, st := range keptStores {
		t.Run(st.name, func(t *testing.T) {
			store := st.open(t)
			s, sess := startKeeping(t, store, 100*time.Millisecond)
			n := s.Network(t)
			other := s.LinkSession(t, "4915550370010")
			const from = "4915550370003"
			shared, own := pngImage(t, 31, 17), pngImage(t, 17, 31)
			for _, to := range []string{apptest.LinkedPhone, "4915550370010"} {
				if _, err := n.SendImage(from, to, shared, "image/png", ""); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := n.SendImage(from, apptest.LinkedPhone, own, "image/png", ""); err != nil {
				t.Fatal(err)
			}
			keptBytes(t, store, shared)
			keptBytes(t, store, own)
			var otherMsg struct {
				Messages struct {
					Edges []struct{ Node struct{ ID string } }
				}
			}
			testclient.Until(t, 10*time.Second, "the other session's message kept", func() bool {
				s.MustGraphQL(t, apptest.AdminToken, `query($s: ID!, $c: String!) { messages(sessionId: $s, chat: $c) { edges { node { id } } } }`,
					map[string]any{"s": other.ID, "c": from + "@s.whatsapp.net"}, &otherMsg)
				if len(otherMsg.Messages.Edges) != 1 {
					return false
				}
				res := s.REST(t, http.MethodGet, "/session/"+other.ID+"/message/"+otherMsg.Messages.Edges[0].Node.ID+"/media", apptest.AdminToken, "")
				return res.Header.Get("ETag") != ""
			})

			s.MustGraphQL(t, apptest.AdminToken, `mutation($id: ID!) { deleteSession(id: $id) }`, map[string]any{"id": sess.ID}, nil)
			ownSum, sharedSum := sha256.Sum256(own), sha256.Sum256(shared)
			if _, _, err := store.Open(context.Background(), hex.EncodeToString(ownSum[:])); fault.CodeOf(err) != fault.NotFound {
				t.Errorf("the deleted session's own file: %v, want it gone", err)
			}
			if obj, _, err := store.Open(context.Background(), hex.EncodeToString(sharedSum[:])); err != nil {
				t.Errorf("the file the other session refers to too: %v, want it kept", err)
			} else {
				obj.Close()
			}
			res := s.REST(t, http.MethodGet, "/session/"+other.ID+"/message/"+otherMsg.Messages.Edges[0].Node.ID+"/media", apptest.AdminToken, "")
			if res.Status != http.StatusOK || !bytes.Equal(res.Body, shared) || res.Header.Get("ETag") == "" {
				t.Errorf("the other session's media: %d, %d bytes, ETag %q", res.Status, len(res.Body), res.Header.Get("ETag"))
			}
		})
	}
}

// TestMediaKeptLargeStreamed: eight clients downloading a kept 40 MiB
// document at once raise the process's RSS by less than 64 MiB (the file
// is streamed, never whole in memory), and a Range request is answered
// with exactly its bytes. Not parallel: the RSS is the process's.
func TestMediaKeptLargeStreamed(t *testing.T) {
	for _, st := range keptStores {
		t.Run(st.name, func(t *testing.T) {
			store := st.open(t)
			s, sess := startKeeping(t, store, 100*time.Millisecond)
			n := s.Network(t)
			doc := randomBytes(t, "%PDF-1.4\n", 40<<20)
			id := sendMedia(t, n, "4915550370004", "document", doc)
			waitStored(t, s, sess.ID, id)
			sum := sha256.Sum256(doc)
			testclient.Until(t, 30*time.Second, "the document kept", func() bool {
				obj, _, err := store.Open(context.Background(), hex.EncodeToString(sum[:]))
				if err == nil {
					obj.Close()
				}
				return err == nil
			})
			url := s.URL + "/api/v1/session/" + sess.ID + "/message/" + id + "/media"
			get := func(rng string) (*http.Response, error) {
				req, _ := http.NewRequest(http.MethodGet, url, nil)
				req.Header.Set("Authorization", "Bearer "+apptest.AdminToken)
				if rng != "" {
					req.Header.Set("Range", rng)
				}
				return http.DefaultClient.Do(req)
			}

			res, err := get("bytes=1000-1999")
			if err != nil {
				t.Fatal(err)
			}
			part, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusPartialContent || !bytes.Equal(part, doc[1000:2000]) ||
				res.Header.Get("Content-Range") != "bytes 1000-1999/"+strconv.Itoa(len(doc)) {
				t.Errorf("range: %d, %d bytes, Content-Range %q", res.StatusCode, len(part), res.Header.Get("Content-Range"))
			}
			if res, err := get("bytes=" + strconv.Itoa(len(doc)) + "-"); err != nil || res.StatusCode != http.StatusRequestedRangeNotSatisfiable {
				t.Errorf("a range past the end: %v %v, want 416", res.StatusCode, err)
			} else {
				res.Body.Close()
			}

			// The heap's free pages back to the system first: a download
			// holding the file whole would otherwise fit in what earlier
			// tests left free, and not show in the RSS.
			debug.FreeOSMemory()
			before := rss(t)
			peak, stop := before, make(chan struct{})
			var sampled sync.WaitGroup
			sampled.Go(func() {
				for {
					peak = max(peak, rss(t))
					select {
					case <-stop:
						return
					case <-time.After(5 * time.Millisecond):
					}
				}
			})
			var wg sync.WaitGroup
			errs := make(chan string, 8)
			for range 8 {
				wg.Go(func() {
					res, err := get("")
					if err != nil {
						errs <- err.Error()
						return
					}
					defer res.Body.Close()
					h := sha256.New()
					n, err := io.Copy(h, res.Body)
					if err != nil || n != int64(len(doc)) || !bytes.Equal(h.Sum(nil), sum[:]) || res.Header.Get("Content-Length") != strconv.Itoa(len(doc)) {
						errs <- "a download: " + strconv.FormatInt(n, 10) + " bytes, " + res.Header.Get("Content-Length")
					}
				})
			}
			wg.Wait()
			close(stop)
			sampled.Wait()
			close(errs)
			for e := range errs {
				t.Error(e)
			}
			t.Logf("RSS %d MiB before, %d MiB at the peak of eight downloads of %d MiB", before>>20, peak>>20, len(doc)>>20)
			if peak-before >= 64<<20 {
				t.Errorf("eight downloads raised the RSS by %d MiB, want less than 64", (peak-before)>>20)
			}
		})
	}
}

// rss is the process's resident set size in bytes.
func rss(t *testing.T) uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatalf("read the RSS: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}

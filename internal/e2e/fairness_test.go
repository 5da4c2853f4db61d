package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/app"
	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/config"
)

// noisyJPEG is a side x side photo with sensor noise on every pixel, which
// the sticker's encoder takes a few tries to fit.
func noisyJPEG(t testing.TB, side int) []byte {
	t.Helper()
	r := rand.New(rand.NewPCG(3, 4))
	img := image.NewNRGBA(image.Rect(0, 0, side, side))
	for y := range side {
		for x := range side {
			n := func(v int) uint8 { return uint8(max(0, min(255, v+r.IntN(61)-30))) }
			img.SetNRGBA(x, y, color.NRGBA{n(x / 4), n(y / 4), n((x + y) / 8), 255})
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// post sends a REST send with token from any goroutine, until ctx ends:
// the status and the body, or what went wrong.
func post(ctx context.Context, s *apptest.Server, token, sessionID, kind string, body any) (int, []byte, error) {
	raw, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, "POST", s.URL+"/api/v1/session/"+sessionID+"/message/"+kind, bytes.NewReader(raw))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", token)
	req.Header.Set("Content-Type", "application/json")
	res, err := s.Client().Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

// sendAs is restSend with the token of another user.
func sendAs(t testing.TB, s *apptest.Server, token, sessionID, kind string, body any) string {
	t.Helper()
	code, b, err := post(t.Context(), s, token, sessionID, kind, body)
	if err != nil || code != http.StatusOK {
		t.Fatalf("POST message/%s: %d %s %v", kind, code, b, err)
	}
	var env struct{ Data struct{ MessageID string } }
	if err := json.Unmarshal(b, &env); err != nil || env.Data.MessageID == "" {
		t.Fatalf("POST message/%s: %s", kind, b)
	}
	return env.Data.MessageID
}

// otherUser is a user of its own with a session linked to phone: its
// token and session.
func otherUser(t *testing.T, s *apptest.Server, name, phone string) (string, apptest.Session) {
	t.Helper()
	var u struct{ CreateUser struct{ Token string } }
	s.MustGraphQL(t, apptest.AdminToken, `mutation($n: String!) { createUser(name: $n) { token } }`, map[string]any{"n": name}, &u)
	return u.CreateUser.Token, s.LinkSessionAs(t, u.CreateUser.Token, phone)
}

// flood runs send in n goroutines, again and again, until the returned
// function is called (once or more), which ends the sends under way too;
// it returns how many sends were made.
func flood(n int, send func(ctx context.Context)) (stop func() int) {
	ctx, cancel := context.WithCancel(context.Background())
	var made atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for ctx.Err() == nil {
				send(ctx)
				made.Add(1)
			}
		})
	}
	return func() int {
		cancel()
		wg.Wait()
		return int(made.Load())
	}
}

// TestStickerFloodLeavesOthersTheirSends: while one user floods the image
// decode slot with stickers of a noisy photo (a few tenths of a second of
// decoding and encoding each, 96 at a time), another user's one-pixel
// image is sent within 5 s: it waits for the sticker in progress, not for
// the flood's queue. First come, first served, it was refused RATE_LIMITED
// after 20 s (the issue saw waits of 19.9 s with two slots).
func TestStickerFloodLeavesOthersTheirSends(t *testing.T) {
	// One decode slot: the machines the tests run on have two cores, and
	// what is measured is the order in which the slot is given, not the
	// processor time a second busy slot would leave to everything else.
	s, sess := apptest.StartLinkedWith(t, func(cfg *config.Config, _ *app.Options) { cfg.MediaConcurrency.Images = 1 })
	token, other := otherUser(t, s, "small sender", "4915550410002")
	// Each user has sent to its contact before: what is measured is the
	// wait for a decode slot, not a first message's key exchange, a
	// session's first upload or the process's first sticker, which
	// compiles the WebP encoder (seconds, under the race detector).
	pixel := b64(pngImage(t, 1, 1))
	// The stickers' source is a URL: what the flood costs is their
	// decoding and encoding, not reading 96 bodies at once.
	sticker := map[string]any{"number": "4915550410003", "source": files(t, map[string][]byte{"/noisy.jpg": noisyJPEG(t, 128)}) + "/noisy.jpg"}
	restSend(t, s, sess.ID, "sticker", sticker)
	start := time.Now()
	sendAs(t, s, token, other.ID, "image", map[string]any{"number": "4915550410004", "source": pixel, "caption": "before"})
	t.Logf("before the flood, the one-pixel image was sent in %s", time.Since(start))
	var refused atomic.Int64
	stop := flood(96, func(ctx context.Context) {
		if code, _, err := post(ctx, s, apptest.AdminToken, sess.ID, "sticker", sticker); err == nil && code != http.StatusOK {
			refused.Add(1)
		}
	})
	defer stop()
	time.Sleep(2 * time.Second) // the flood's queue fills up

	for i := range 2 {
		start := time.Now()
		id := sendAs(t, s, token, other.ID, "image", map[string]any{"number": "4915550410004", "source": pixel, "caption": fmt.Sprint("pixel ", i)})
		took := time.Since(start)
		t.Logf("the one-pixel image %d was sent in %s", i, took)
		if took > 5*time.Second {
			t.Errorf("the one-pixel image %d took %s while the other user's stickers flooded; want at most 5 s", i, took)
		}
		if got := received(t, s, "4915550410004", id); got.Type != "image" {
			t.Errorf("the phone received %+v", got)
		}
	}
	made := stop()
	t.Logf("the flood made %d sticker sends meanwhile, %d of them refused", made, refused.Load())
	if made == 0 {
		t.Fatal("the flood made no sticker send: nothing was measured")
	}
}

// TestSlowLinkFloodLeavesOthersTheirPreviews: while one user keeps every
// preview slot busy with links to pages that never answer (eight texts at
// a time, again as soon as each goes out without its preview), another
// user's texts keep their previews: a slot is taken back from the user
// holding more than its share. First come, first served, the other user's
// previews were turned away in 8 rounds of 8.
func TestSlowLinkFloodLeavesOthersTheirPreviews(t *testing.T) {
	photo := pngImage(t, 120, 60)
	var hanging atomic.Int64
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/slow":
			hanging.Add(1)
			defer hanging.Add(-1)
			<-r.Context().Done()
		case "/article":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, `<html><head><title>Kept</title><meta property="og:image" content="/photo.png"></head></html>`)
		case "/photo.png":
			_, _ = w.Write(photo)
		}
	}))
	defer site.Close()

	s, sess := apptest.StartLinked(t)
	token, other := otherUser(t, s, "reader", "4915550420002")
	var n atomic.Int64
	stop := flood(8, func(ctx context.Context) {
		_, _, _ = post(ctx, s, apptest.AdminToken, sess.ID, "text", map[string]any{"number": "4915550420003",
			"text": fmt.Sprintf("slow %s/slow?%d", site.URL, n.Add(1))})
	})
	defer stop()

	for i := range 3 {
		for deadline := time.Now().Add(10 * time.Second); hanging.Load() < 8; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the slow links hold %d preview slots, want all 8", hanging.Load())
			}
		}
		text := fmt.Sprintf("read %s/article?%d", site.URL, i)
		id := sendAs(t, s, token, other.ID, "text", map[string]any{"number": "4915550420004", "text": text})
		got := received(t, s, "4915550420004", id)
		if p := got.LinkPreview; p == nil || str(p.Title) != "Kept" || !p.HasThumbnail || !strings.HasPrefix(p.URL, site.URL+"/article") {
			t.Errorf("text %d reached the phone with preview %+v, want the page's, with its thumbnail, while another user's slow links flood", i, p)
		}
	}
	t.Logf("the flood made %d texts meanwhile", stop())
}

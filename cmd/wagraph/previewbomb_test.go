package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/internal/media/mediatest"
	"github.com/wagraph/wagraph/internal/testclient"
)

// The sandbox server of TestPreviewBombsCostNoMemory, in a process of its
// own so its memory can be measured alone: its data directory, and on the
// PostgreSQL pass of `make test` its database.
const (
	bombChildEnv   = "WAGRAPH_TEST_BOMB_CHILD"
	bombChildDBEnv = "WAGRAPH_TEST_BOMB_CHILD_DATABASE"
)

// TestServeBombChild is the server of TestPreviewBombsCostNoMemory. It
// does nothing unless that test started it.
func TestServeBombChild(t *testing.T) {
	dir := os.Getenv(bombChildEnv)
	if dir == "" {
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	args := []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dir, "--sandbox", "--rate", "10000/s,10000"}
	if url := os.Getenv(bombChildDBEnv); url != "" {
		args = append(args, "--database-url", url)
	}
	if code := run(ctx, args, envOf(map[string]string{"WAGRAPH_ADMIN_TOKEN": apptest.AdminToken}), io.Discard, os.Stderr); code != 0 {
		t.Fatalf("serve exited %d", code)
	}
}

// TestPreviewBombsCostNoMemory: 24 texts whose page's og:image is a 62 KB
// progressive CMYK JPEG of 8 megapixels (183 MiB decoded), sent at once by
// a session never linked and then by a linked one, grow a real server's
// peak memory by less than 300 MiB. The first are refused NOT_CONNECTED
// before their page is fetched; the second go out, with previews (eight at
// once) without a thumbnail: the image is refused from its header. On main
// before this change, the 24 of a session never linked took a process
// from 56 to 2,640 MiB.
func TestPreviewBombsCostNoMemory(t *testing.T) {
	if os.Getenv(bombChildEnv) != "" {
		return
	}
	bomb := mediatest.ProgressiveJPEG(2828, 2828, 4)
	var pages, images atomic.Int64
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page":
			pages.Add(1)
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, `<html><head><title>A bomb</title><meta property="og:image" content="/bomb.jpg"></head></html>`)
		case "/bomb.jpg":
			images.Add(1)
			w.Header().Set("Content-Type", "image/jpeg")
			_, _ = w.Write(bomb)
		}
	}))
	defer site.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	child := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestServeBombChild$", "-test.count=1")
	child.Env = append(os.Environ(), bombChildEnv+"="+t.TempDir(), bombChildDBEnv+"="+dbtest.DatabaseURL(t))
	stderr, err := child.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = child.Process.Signal(syscall.SIGTERM)
		_ = child.Wait()
	}()
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil {
				addrc <- m[1]
			}
		}
	}()
	var base string
	select {
	case addr := <-addrc:
		base = "http://" + addr
	case <-time.After(30 * time.Second):
		t.Fatal("the server process did not start")
	}
	hc := &http.Client{Timeout: time.Minute}
	var created struct {
		CreateSession struct{ Session struct{ ID string } }
	}
	if err := testclient.GraphQL(ctx, hc, base, apptest.AdminToken, `mutation { createSession { session { id } } }`, nil, &created); err != nil {
		t.Fatal(err)
	}
	never := created.CreateSession.Session.ID
	linked := apptest.LinkManyAt(t, hc, base, 1, "4915550")[0]

	// n texts at once from a session, each answered with its status.
	burst := func(sessionID, text string, n int) []int {
		codes := make([]int, n)
		var wg sync.WaitGroup
		for i := range codes {
			wg.Go(func() {
				body := `{"number":"4915550440099","text":"` + text + `"}`
				req, _ := http.NewRequestWithContext(ctx, "POST", base+"/api/v1/session/"+sessionID+"/message/text", strings.NewReader(body))
				req.Header.Set("Authorization", apptest.AdminToken)
				req.Header.Set("Content-Type", "application/json")
				res, err := hc.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				var answer bytes.Buffer
				_, _ = io.Copy(&answer, res.Body)
				res.Body.Close()
				codes[i] = res.StatusCode
				if res.StatusCode != http.StatusOK && res.StatusCode != http.StatusConflict {
					t.Errorf("a text: %d %s", res.StatusCode, answer.String())
				}
			})
		}
		wg.Wait()
		return codes
	}
	// What a send uses is warmed up, then the baseline taken.
	burst(never, "hello", 1)
	burst(linked.ID, "hello", 1)
	before := memoryKiB(t, child.Process.Pid, "VmRSS")

	bombs := "look: " + site.URL + "/page"
	for _, code := range burst(never, bombs, 24) {
		if code != http.StatusConflict {
			t.Errorf("a text from the session never linked: %d, want 409 NOT_CONNECTED", code)
		}
	}
	if n := pages.Load() + images.Load(); n != 0 {
		t.Errorf("the session never linked fetched %d pages and images for its previews", n)
	}
	for _, code := range burst(linked.ID, bombs, 24) {
		if code != http.StatusOK {
			t.Errorf("a text from the linked session: %d, want 200", code)
		}
	}
	// Eight previews at once, the rest turned away busy: each page made
	// fetched its image, which was refused from its header.
	if p, i := pages.Load(), images.Load(); p < 8 || i != p {
		t.Errorf("the linked session's previews fetched %d pages and %d images, want 8 or more and as many", p, i)
	}
	peak := memoryKiB(t, child.Process.Pid, "VmHWM")
	t.Logf("RSS before %d KiB, peak after %d KiB", before, peak)
	if grew := peak - before; grew >= 300<<10 {
		t.Errorf("peak RSS grew by %d MiB; want under 300 MiB", grew>>10)
	}
}

package app_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/app"
	"github.com/wagraph/wagraph/internal/apptest"
)

// TestShutdownEndsEventStreams: stopping the server completes an events
// subscription open over SSE (a request in flight), so the shutdown does
// not wait out its grace for it.
func TestShutdownEndsEventStreams(t *testing.T) {
	cfg := apptest.Config(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx, cfg, app.Options{Announce: io.Discard, Listener: ln}) }()
	client := &http.Client{Timeout: time.Second}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if status, _ := get(t, client, base+"/readyz"); status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("not ready within 30 s")
		}
	}
	post := func(body any, sse bool) *http.Response {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", base+"/graphql", strings.NewReader(string(b)))
		req.Header.Set("Authorization", apptest.AdminToken)
		req.Header.Set("Content-Type", "application/json")
		if sse {
			req.Header.Set("Accept", "text/event-stream")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := post(map[string]any{"query": `mutation { createSession(name: "s") { session { id } } }`}, false)
	var created struct {
		Data struct {
			CreateSession struct{ Session struct{ ID string } }
		}
	}
	if err := json.NewDecoder(res.Body).Decode(&created); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	stream := post(map[string]any{
		"query":     `subscription($s: ID!) { events(sessionId: $s) { id } }`,
		"variables": map[string]any{"s": created.Data.CreateSession.Session.ID},
	}, true)
	defer stream.Body.Close()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stream.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	if l := <-lines; l != ":" { // the stream's opening comment: it is running
		t.Fatalf("stream opened with %q", l)
	}

	stopped := time.Now()
	cancel()
	complete := false
	for l := range lines {
		if l == "event: complete" {
			complete = true
		}
	}
	if !complete {
		t.Error("the stream ended without event: complete")
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run: %v", err)
		}
	case <-time.After(app.ShutdownGrace / 2):
		t.Fatal("the server still waits for the stream")
	}
	t.Logf("stopped in %s", time.Since(stopped).Round(time.Millisecond))
}

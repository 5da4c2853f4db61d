package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/logtest"
)

// The markers before the README's blocks the tests run: the quick start
// (a receiver's command line, then the shell block that links a session,
// sends and answers) and the longer walk-through of the sandbox.
const (
	quickstartMarker  = "<!-- quickstart:"
	walkthroughMarker = "<!-- walkthrough:"
)

// readmeBlocks returns the first n sh blocks after marker in README.md
// (n sh blocks before it when before is set: the last n of them).
func readmeBlocks(t *testing.T, marker string, n int, before bool) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	head, rest, ok := strings.Cut(string(b), marker)
	if !ok {
		t.Fatalf("README.md has no %q marker", marker)
	}
	if before {
		rest = head
	}
	var blocks []string
	for {
		var block string
		_, rest, ok = strings.Cut(rest, "```sh\n")
		if ok {
			block, rest, ok = strings.Cut(rest, "```")
		}
		if !ok || (!before && len(blocks) == n) {
			break
		}
		blocks = append(blocks, block)
	}
	if len(blocks) < n {
		t.Fatalf("README.md has %d sh blocks %s %q, want %d", len(blocks), map[bool]string{true: "before", false: "after"}[before], marker, n)
	}
	if before {
		return blocks[len(blocks)-n:]
	}
	return blocks
}

// readmeSandbox is what the README's quick start has the reader start the
// server with: the token its first block exports before `make sandbox`,
// and the flags of the Makefile's sandbox recipe (`serve --sandbox
// --data-dir ./data-sandbox`). The tests start that server from the
// binary they are (run, in process) rather than through make's build,
// with the flags but the address and the storage, which are the test's.
func readmeSandbox(t *testing.T) (token string, serveArgs []string) {
	t.Helper()
	start := readmeBlocks(t, quickstartMarker, 1, true)[0]
	m := regexp.MustCompile(`(?m)^export WAGRAPH_ADMIN_TOKEN=(\S+)`).FindStringSubmatch(start)
	if m == nil || !regexp.MustCompile(`(?m)^make sandbox\b`).MatchString(start) {
		t.Fatalf("the quick start's first block does not export WAGRAPH_ADMIN_TOKEN then run make sandbox:\n%s", start)
	}
	makefile, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	r := regexp.MustCompile(`(?m)^sandbox:.*\n\t\./\$\(BIN\) serve (.*)$`).FindSubmatch(makefile)
	if r == nil {
		t.Fatal("the Makefile's sandbox recipe is not ./$(BIN) serve …")
	}
	flags := strings.Fields(string(r[1]))
	if !slices.Contains(flags, "--sandbox") {
		t.Fatalf("make sandbox runs serve %q, without --sandbox", flags)
	}
	for i := 0; i < len(flags); i++ {
		if flags[i] == "--data-dir" || flags[i] == "--addr" {
			i++
			continue
		}
		serveArgs = append(serveArgs, flags[i])
	}
	return m[1], append(append(serveArgs, "--addr", "127.0.0.1:0"), storeArgs(t)...)
}

// readmeServer starts the server the quick start has the reader start.
func readmeServer(t *testing.T) (*server, string) {
	t.Helper()
	token, args := readmeSandbox(t)
	srv := startServer(t, map[string]string{"WAGRAPH_ADMIN_TOKEN": token}, args...)
	if !strings.Contains(firstLine(srv.stderr.String()), "sandbox") {
		t.Errorf("the first log line does not say sandbox: %q", firstLine(srv.stderr.String()))
	}
	return srv, token
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// needTools fails the test when a command the README's blocks run is
// missing.
func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed: run make deps", tool)
		}
	}
}

// readmeQuickstart is the quick start's two blocks after its marker: the
// receiver's command line and the shell block.
type readmeQuickstart struct {
	receive []string // bin/wagraph receive …
	script  string
}

const readmeReceiver = "127.0.0.1:9000"

func quickstartBlocks(t *testing.T, token string) readmeQuickstart {
	t.Helper()
	blocks := readmeBlocks(t, quickstartMarker, 2, false)
	if !strings.Contains(blocks[1], "T="+token) {
		t.Fatalf("the quick start does not use the token the README exports (%s)", token)
	}
	args := strings.Fields(strings.TrimSpace(blocks[0]))
	if len(args) < 2 || args[0] != "bin/wagraph" || args[1] != "receive" {
		t.Fatalf("the receiver's line is %q, want bin/wagraph receive …", blocks[0])
	}
	return readmeQuickstart{receive: args, script: blocks[1]}
}

// runQuickstart runs the quick start against srv as written: `wagraph
// receive` as its first block says (on a free port instead of the
// README's), then its second block with bash and curl (only the two
// listen addresses are the test's own). It returns the block's output
// once the receiver has printed the contact's answer.
func runQuickstart(t *testing.T, srv *server, token string) (out, printed string) {
	t.Helper()
	qs := quickstartBlocks(t, token)
	hookAddr := freeLoopbackAddr(t)
	args := slices.Clone(qs.receive)
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, readmeReceiver, hookAddr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var received, receiveErr logtest.Buffer
	exited := make(chan int, 1)
	go func() { exited <- run(ctx, args[1:], envOf(nil), &received, &receiveErr) }()
	t.Cleanup(func() {
		cancel()
		if code := <-exited; code != 0 {
			t.Errorf("wagraph receive exited %d: %s", code, receiveErr.String())
		}
	})

	script := strings.ReplaceAll(qs.script, "127.0.0.1:8080", srv.addr)
	script = strings.ReplaceAll(script, readmeReceiver, hookAddr)
	b, err := exec.Command("bash", "-euo", "pipefail", "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("quick start failed: %v\n%s\nserver log:\n%s", err, b, srv.stderr.String())
	}
	for _, want := range []string{`"status":"CONNECTED"`, `"messageId"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("quick start output lacks %s:\n%s", want, b)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(received.String(), "hi back") {
		if time.Now().After(deadline) {
			t.Fatalf("the receiver printed no answer within 20 s:\n%s\nreceiver:\n%s\nquick start output:\n%s\nserver log:\n%s",
				received.String(), receiveErr.String(), b, srv.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.HasPrefix(received.String(), "inbound-message.upsert seq=") {
		t.Errorf("the receiver's first line is not the inbound message:\n%s", received.String())
	}
	return string(b), received.String()
}

// TestReadmeQuickstart runs the README's quick start as written against
// the server `make sandbox` starts: the text goes out, and the contact's
// answer reaches the receiver through a webhook to loopback.
func TestReadmeQuickstart(t *testing.T) {
	needTools(t, "bash", "curl", "sed", "tee")
	srv, token := readmeServer(t)
	_, printed := runQuickstart(t, srv, token)
	t.Logf("the receiver printed:\n%s", printed)
}

// TestReadmeWalkthrough runs the README's quick start and then its
// sandbox walk-through, as written and one after the other, against one
// server: as a reader goes from the one to the other (each block in a
// shell of its own, as the README's terminals are). Then the walk-through
// once more, as lines pasted into a shell run (no -e): its session's name
// is taken now, and it must stop at once saying so, rather than carry an
// error's JSON as a session id into every later step.
func TestReadmeWalkthrough(t *testing.T) {
	needTools(t, "bash", "curl", "sed", "tee")
	srv, token := readmeServer(t)
	runQuickstart(t, srv, token)

	script := readmeBlocks(t, walkthroughMarker, 1, false)[0]
	if !strings.Contains(script, "TOKEN="+token) {
		t.Fatalf("the walk-through does not use the token the README exports (%s)", token)
	}
	script = strings.ReplaceAll(script, "127.0.0.1:8080", srv.addr)
	out, err := exec.Command("bash", "-euo", "pipefail", "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("the walk-through after the quick start failed: %v\n%s\nserver log:\n%s", err, out, srv.stderr.String())
	}
	for _, want := range []string{`"status":"CONNECTED"`, `"messageId"`, `"type":"image"`, `"caption":"hello from wagraph"`, `"mimetype":"image/png"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("walk-through output lacks %s:\n%s", want, out)
		}
	}

	again := exec.Command("bash", "-c", script)
	out, err = again.CombinedOutput()
	if err == nil {
		t.Errorf("the walk-through run a second time (its session's name taken) exited 0:\n%s", out)
	}
	for _, want := range []string{"409", "is taken", "no session was created"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the second walk-through's output does not say %q:\n%s", want, out)
		}
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, "no session was created") || strings.Count(string(out), "curl: ") != 1 {
		t.Errorf("the second walk-through went on past the session it could not create:\n%s", out)
	}
}

// freeLoopbackAddr is a loopback address with a port free a moment ago.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

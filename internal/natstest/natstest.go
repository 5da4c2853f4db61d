// Package natstest runs a real NATS server with JetStream for tests, as a
// child process (internal/testbin.NATSServer's binary): on a port of its
// own and a store directory of its own, stopped and started again on both
// as a broker outage would be. A child process rather than the server
// embedded: nats-server is a large build, and linking it into a race-built
// test binary would cost every run of that package.
package natstest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/wagraph/wagraph/internal/testbin"
)

// Server is one NATS server with JetStream on 127.0.0.1.
type Server struct {
	URL string // nats://127.0.0.1:port

	t     testing.TB
	bin   string
	port  int
	store string   // JetStream's store directory, kept across restarts
	extra []string // more arguments (credentials)
	log   string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// Start runs a server (args are more nats-server arguments, such as
// --user and --pass) and waits until it takes connections. It is killed
// when the test ends; its log is shown when the test failed.
func Start(t testing.TB, args ...string) *Server {
	t.Helper()
	bin, err := testbin.NATSServer()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	s := &Server{
		URL: "nats://127.0.0.1:" + strconv.Itoa(port), t: t, bin: bin, port: port,
		store: filepath.Join(dir, "jetstream"), extra: args, log: filepath.Join(dir, "nats-server.log"),
	}
	t.Cleanup(func() {
		s.kill()
		if t.Failed() {
			if b, err := os.ReadFile(s.log); err == nil {
				const most = 32 << 10
				if len(b) > most {
					b = b[len(b)-most:]
				}
				t.Logf("----- nats-server.log -----\n%s", b)
			}
		}
	})
	s.Run()
	return s
}

// Run starts the server again after Stop, on the same port and store.
func (s *Server) Run() {
	s.t.Helper()
	f, err := os.OpenFile(s.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		s.t.Fatal(err)
	}
	defer f.Close()
	args := append([]string{"-a", "127.0.0.1", "-p", strconv.Itoa(s.port), "-js", "-sd", s.store}, s.extra...)
	cmd := exec.Command(s.bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("start nats-server: %v", err)
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	// Ready once it greets a client: its listener opens after JetStream
	// has recovered its streams.
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := greets(s.port)
		if err == nil {
			return
		}
		select {
		case <-done:
			s.t.Fatalf("nats-server ended at start (%v); see its log", cmd.ProcessState)
		default:
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("nats-server did not take connections within 30 s: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// greets dials the server and reads its INFO line.
func greets(port int) error {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "INFO ") {
		return fmt.Errorf("greeted with %q", line)
	}
	return nil
}

// Stop shuts the server down as an operator would (SIGTERM: its streams
// flushed), and waits for it to end (SIGKILL after 10 s).
func (s *Server) Stop() {
	s.t.Helper()
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		s.t.Errorf("SIGTERM nats-server: %v", err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		s.t.Errorf("nats-server did not end within 10 s of SIGTERM")
		s.kill()
	}
}

// kill ends the server's process group, if it runs.
func (s *Server) kill() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	select {
	case <-done:
		return
	default:
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-done
}

// Msg is a message read back from a stream.
type Msg struct {
	Subject string
	Header  nats.Header
	Data    []byte
	Seq     uint64 // the stream's sequence
}

// Count is how many messages the stream holds; an error when the server
// or the stream cannot be read (yet).
func Count(url, stream string) (uint64, error) {
	nc, err := nats.Connect(url, nats.Timeout(2*time.Second))
	if err != nil {
		return 0, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return 0, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 0, err
	}
	return info.State.Msgs, nil
}

// Messages reads every message of the stream, in the stream's order.
func Messages(t testing.TB, url, stream string) []Msg {
	t.Helper()
	total, err := Count(url, stream)
	if err != nil {
		t.Fatalf("stream %s: %v", stream, err)
	}
	if total == 0 {
		return nil
	}
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var out []Msg
	for uint64(len(out)) < total {
		batch, err := c.Fetch(int(min(total-uint64(len(out)), 500)), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		n := len(out)
		for m := range batch.Messages() {
			md, err := m.Metadata()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, Msg{Subject: m.Subject(), Header: m.Headers(), Data: m.Data(), Seq: md.Sequence.Stream})
		}
		if err := batch.Error(); err != nil {
			t.Fatal(err)
		}
		if len(out) == n {
			t.Fatalf("stream %s: %d of %d messages read, then none", stream, n, total)
		}
	}
	return out
}

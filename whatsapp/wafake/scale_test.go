package wafake_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	waLog "go.mau.fi/whatsmeow/util/log"
	"google.golang.org/protobuf/proto"

	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// TestManyClients links 50 devices to 50 accounts of one network; each sends
// a text to a contact's phone and receives one from a contact. Afterwards,
// with every client disconnected and the network closed, no goroutine of
// the network or of the clients is left.
func TestManyClients(t *testing.T) {
	if testing.Short() {
		t.Skip("a load test (50 clients): make test runs it, make test-short skips it")
	}
	const clients = 50
	before := runtime.NumGoroutine()
	n, err := wafake.New(wafake.Options{})
	if err != nil {
		t.Fatal(err)
	}
	devices := make([]*whatsmeow.Client, clients)
	closers := make([]func(), clients)
	disconnected := make([]chan struct{}, clients)
	for i := range devices {
		var dev *store.Device
		dev, closers[i] = openDevice(t)
		devices[i] = whatsmeow.NewClient(dev, waLog.Noop)
		// The network closes the sockets at the end (see below); a client
		// must not then dial a closed network.
		devices[i].EnableAutoReconnect = false
		disconnected[i] = make(chan struct{}, 1)
		devices[i].AddEventHandler(func(evt any) {
			if _, ok := evt.(*events.Disconnected); ok {
				select {
				case disconnected[i] <- struct{}{}:
				default:
				}
			}
		})
	}
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			phone := fmt.Sprintf("4917000%05d", i+1)
			contact := fmt.Sprintf("4916000%05d", i+1)
			cli := devices[i]
			ps, err := link(n, cli, phone)
			if err != nil {
				errs <- err
				return
			}
			got := make(chan *events.Message, 1)
			cli.AddEventHandler(func(evt any) {
				if m, ok := evt.(*events.Message); ok {
					select {
					case got <- m:
					default:
					}
				}
			})
			text := "from client " + phone
			resp, err := cli.SendMessage(context.Background(), types.NewJID(contact, types.DefaultUserServer),
				&waE2E.Message{Conversation: proto.String(text)})
			if err != nil {
				errs <- fmt.Errorf("%s send: %w", phone, err)
				return
			}
			id, err := n.SendText(contact, ps.ID.User, "to client "+phone)
			if err != nil {
				errs <- fmt.Errorf("%s inbound: %w", phone, err)
				return
			}
			select {
			case m := <-got:
				if m.Info.ID != id || m.Message.GetConversation() != "to client "+phone {
					errs <- fmt.Errorf("%s received %s %q", phone, m.Info.ID, m.Message.GetConversation())
				}
			case <-time.After(60 * time.Second):
				errs <- fmt.Errorf("%s received nothing", phone)
			}
			// The receipt is sent in the background; disconnecting while it
			// is written races inside whatsmeow's frame socket, so wait for
			// the network to have it.
			for deadline := time.Now().Add(30 * time.Second); n.Unacked(ps.ID) > 0 && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			deadline := time.Now().Add(30 * time.Second)
			for {
				in := n.Inbox(contact)
				if len(in) == 1 && in[0].ID == resp.ID && in[0].Message.GetConversation() == text {
					break
				}
				if time.Now().After(deadline) {
					errs <- fmt.Errorf("%s's contact decrypted %d messages", phone, len(in))
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// The network closes every socket first, while each client still
	// consumes its frames: whatsmeow's frame reader blocks for ever on a
	// frame that arrives after its own Disconnect (framesocket.go
	// frameComplete sends on an unbuffered channel without a select), so a
	// client-first shutdown can leave a goroutine that is whatsmeow's, not
	// the network's.
	if err := n.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	for i, cli := range devices {
		select {
		case <-disconnected[i]:
		case <-time.After(10 * time.Second):
			t.Errorf("client %d saw no disconnect after the network closed", i)
		}
		cli.Disconnect()
	}
	for _, closeStore := range closers {
		closeStore()
	}
	// Each client's store closes in t.Cleanup; its goroutines must be gone
	// once the clients are disconnected and the network closed.
	deadline := time.Now().Add(15 * time.Second)
	for {
		left, whatsmeowLeaks := goroutinesLeft()
		if left <= before {
			if whatsmeowLeaks > 0 {
				t.Logf("%d whatsmeow frame readers blocked for ever on a frame that arrived after their client disconnected (an upstream whatsmeow leak, not counted)", whatsmeowLeaks)
			}
			break
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			stacks := string(buf[:runtime.Stack(buf, true)])
			t.Fatalf("%d goroutines left (%d before):\n%s", left, before, firstStacks(stacks, 15))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// goroutinesLeft counts the running goroutines, less those stuck in
// whatsmeow's FrameSocket.frameComplete: it sends a frame on an unbuffered
// channel without a select, so a frame that arrives just as the client
// disconnects (a keepalive answer, the 515 restart) blocks its reader for
// ever. That leak is whatsmeow's; any other goroutine left fails the test.
func goroutinesLeft() (left, whatsmeowLeaks int) {
	buf := make([]byte, 4<<20)
	stacks := strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n")
	for _, st := range stacks {
		if strings.Contains(st, "whatsmeow/socket.(*FrameSocket).frameComplete") {
			whatsmeowLeaks++
		}
	}
	return len(stacks) - whatsmeowLeaks, whatsmeowLeaks
}

func firstStacks(all string, n int) string {
	parts := strings.Split(all, "\n\n")
	if len(parts) > n {
		parts = parts[:n]
	}
	return strings.Join(parts, "\n\n")
}

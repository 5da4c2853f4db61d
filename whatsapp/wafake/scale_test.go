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
	const clients = 50
	before := runtime.NumGoroutine()
	n, err := wafake.New(wafake.Options{})
	if err != nil {
		t.Fatal(err)
	}
	devices := make([]*whatsmeow.Client, clients)
	closers := make([]func(), clients)
	for i := range devices {
		var dev *store.Device
		dev, closers[i] = openDevice(t)
		devices[i] = whatsmeow.NewClient(dev, waLog.Noop)
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
			defer cli.Disconnect()
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
			case <-time.After(30 * time.Second):
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
	if err := n.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	for _, closeStore := range closers {
		closeStore()
	}
	// Each client's store closes in t.Cleanup; its goroutines must be gone
	// once the clients are disconnected and the network closed.
	deadline := time.Now().Add(15 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			stacks := string(buf[:runtime.Stack(buf, true)])
			t.Fatalf("%d goroutines left (%d before):\n%s", runtime.NumGoroutine(), before, firstStacks(stacks, 15))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func firstStacks(all string, n int) string {
	parts := strings.Split(all, "\n\n")
	if len(parts) > n {
		parts = parts[:n]
	}
	return strings.Join(parts, "\n\n")
}

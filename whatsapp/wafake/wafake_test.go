package wafake_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	_ "github.com/mattn/go-sqlite3"
	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/store/sqlstore"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	waLog "go.mau.fi/whatsmeow/util/log"
	"google.golang.org/protobuf/proto"

	"github.com/wagraph/wagraph/internal/testclient"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

func startNetwork(t *testing.T) *wafake.Network {
	t.Helper()
	n, err := wafake.New(wafake.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

// newDevice returns a fresh device store of its own: its own SQLite file
// (WAL, busy timeout: many clients write at once in the larger tests).
// Closed when the test ends. These tests are about the simulated network,
// not the client's store: the store on PostgreSQL is the whatsapp
// package's and the server's tests (make test's PostgreSQL pass), so this
// package is not in that pass.
func newDevice(t *testing.T) *store.Device {
	t.Helper()
	dev, closeStore := openDevice(t)
	t.Cleanup(closeStore)
	return dev
}

// openDevice returns a fresh device store and the function that closes it.
func openDevice(t *testing.T) (*store.Device, func()) {
	t.Helper()
	dsn := "file:" + filepath.Join(t.TempDir(), "wm.db") + "?_foreign_keys=on&_journal_mode=WAL&_busy_timeout=10000&_txlock=immediate"
	c, err := sqlstore.New(context.Background(), "sqlite3", dsn, waLog.Noop)
	if err != nil {
		t.Fatal(err)
	}
	return c.NewDevice(), func() { c.Close() }
}

func TestHandshakeOffersQRCodes(t *testing.T) {
	t.Parallel()
	n := startNetwork(t)
	cli := whatsmeow.NewClient(newDevice(t), waLog.Noop)
	n.Point(cli)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	qr, err := cli.GetQRChannel(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := cli.Connect(); err != nil {
		t.Fatal(err)
	}
	defer cli.Disconnect()
	select {
	case item := <-qr:
		if item.Event != "code" {
			t.Fatalf("qr event %q (%v), want code", item.Event, item.Error)
		}
		// Since whatsmeow's wa.me link format (makeQRData, pair.go) the
		// code is a link; a web client's type is "9" (other web client).
		qr, err := wafake.ParseQR(item.Code)
		if err != nil || !strings.HasPrefix(qr.Ref, "2@") || qr.NoiseKey != *cli.Store.NoiseKey.Pub ||
			qr.IdentityKey != *cli.Store.IdentityKey.Pub || string(qr.AdvSecret) != string(cli.Store.AdvSecretKey) || qr.ClientType != "9" {
			t.Fatalf("qr code %q is not %sref,noise,identity,secret,client type (%+v, %v)", item.Code, wafake.QRLinkPrefix, qr, err)
		}
	case <-ctx.Done():
		t.Fatal("no QR code within 10 s")
	}
}

// TestWebsocketCompression: whatsmeow offers permessage-deflate with context
// takeover (socket/dialopts.go); the network accepts it, as WhatsApp does.
func TestWebsocketCompression(t *testing.T) {
	t.Parallel()
	n := startNetwork(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, "wss://web.whatsapp.com/ws/chat", &websocket.DialOptions{
		HTTPClient: n.HTTPClient(), CompressionMode: websocket.CompressionContextTakeover,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	if ext := resp.Header.Get("Sec-WebSocket-Extensions"); !strings.Contains(ext, "permessage-deflate") {
		t.Errorf("extensions %q, want permessage-deflate", ext)
	}
}

// linkByQR connects a new client, has the phone of account phone scan its
// QR code, and waits until the client is paired and connected.
func linkByQR(t *testing.T, n *wafake.Network, phone string) (*whatsmeow.Client, *events.PairSuccess) {
	t.Helper()
	cli := whatsmeow.NewClient(newDevice(t), waLog.Noop)
	ps, err := link(n, cli, phone)
	if err != nil {
		cli.Disconnect()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		quiesce(n, ps.ID)
		cli.Disconnect()
	})
	return cli, ps
}

// quiesce waits (a few seconds at most) until the network holds nothing
// unacknowledged for the device and the device has sent nothing for a
// moment: receipts and acks go out on goroutines of their own, and a send
// still in flight when the client disconnects is a data race inside
// whatsmeow's frame socket.
func quiesce(n *wafake.Network, device types.JID) {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if n.Unacked(device) == 0 && n.Idle(device) > 200*time.Millisecond {
			return
		}
	}
}

// link pairs cli with the account phone by QR and waits until it is
// connected. It may run outside the test's goroutine.
func link(n *wafake.Network, cli *whatsmeow.Client, phone string) (*events.PairSuccess, error) {
	n.Point(cli)
	paired := make(chan *events.PairSuccess, 1)
	connected := make(chan struct{}, 1)
	cli.AddEventHandler(func(evt any) {
		switch e := evt.(type) {
		case *events.PairSuccess:
			select {
			case paired <- e:
			default:
			}
		case *events.Connected:
			select {
			case connected <- struct{}{}:
			default:
			}
		}
	})
	// Generous: 50 clients pairing at once under the race detector on two
	// cores each generate and store 812 prekeys.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	qr, err := cli.GetQRChannel(ctx)
	if err != nil {
		return nil, err
	}
	if err := cli.Connect(); err != nil {
		return nil, err
	}
	item := <-qr
	if item.Event != "code" {
		return nil, fmt.Errorf("qr event %q", item.Event)
	}
	if err := n.ScanQR(item.Code, phone); err != nil {
		return nil, fmt.Errorf("scan: %w", err)
	}
	var ps *events.PairSuccess
	select {
	case ps = <-paired:
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: no PairSuccess within 90 s", phone)
	}
	select {
	case <-connected:
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: not connected within 90 s of pairing", phone)
	}
	return ps, nil
}

func TestQRPairingAndLogin(t *testing.T) {
	t.Parallel()
	n := startNetwork(t)
	cli, ps := linkByQR(t, n, "491701234567")
	if ps.ID.User != "491701234567" || ps.ID.Device == 0 || ps.LID.Server != "lid" {
		t.Errorf("paired as %s / %s", ps.ID, ps.LID)
	}
	if cli.Store.ID == nil || *cli.Store.ID != ps.ID {
		t.Errorf("store id %v, want %s", cli.Store.ID, ps.ID)
	}
	if n, err := cli.Store.PreKeys.UploadedPreKeyCount(context.Background()); err != nil || n < 800 {
		t.Errorf("%d prekeys marked uploaded (%v), want the initial 812", n, err)
	}

	// A paired device logs in again after a disconnect.
	connected := make(chan struct{}, 1)
	cli.AddEventHandler(func(evt any) {
		if _, ok := evt.(*events.Connected); ok {
			select {
			case connected <- struct{}{}:
			default:
			}
		}
	})
	cli.Disconnect()
	if err := cli.Connect(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-connected:
	case <-time.After(10 * time.Second):
		t.Fatal("the paired device did not log in again")
	}
	if !cli.IsLoggedIn() {
		t.Error("not logged in after reconnect")
	}
}

func TestScanQRRefusals(t *testing.T) {
	t.Parallel()
	n := startNetwork(t)
	if err := n.ScanQR("nonsense", "491701234567"); err == nil {
		t.Error("a malformed code was accepted")
	}
	key := base64.StdEncoding.EncodeToString(make([]byte, 32))
	unshown := wafake.QRLinkPrefix + "2@x," + key + "," + key + "," + key + ",9"
	if err := n.ScanQR(unshown, "491701234567"); err == nil || !strings.Contains(err.Error(), "no client is showing") {
		t.Errorf("a code nobody shows: %v, want refused as not shown", err)
	}
	// The code before whatsmeow's wa.me link format is no longer one.
	if err := n.ScanQR("2@x,"+key+","+key+","+key, "491701234567"); err == nil || !strings.Contains(err.Error(), "link") {
		t.Errorf("a code without the link: %v, want refused as malformed", err)
	}
	for _, phone := range []string{"123", "4917012340000", "49170x234567"} {
		if err := wafake.ValidPhone(phone); err == nil {
			t.Errorf("%s accepted as an account", phone)
		}
	}
}

// waitInbox waits until the phone of account phone has at least n messages.
func waitInbox(t *testing.T, net *wafake.Network, phone string, n int) []wafake.Received {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if in := net.Inbox(phone); len(in) >= n {
			return in
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s received %d messages within 10 s, want %d", phone, len(net.Inbox(phone)), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSendTextDecryptedByRecipient: a direct message to a phone number
// reaches that phone. whatsmeow sends direct messages to the recipient's
// LID ("send: always use LID for DMs", SendMessage in send.go), after
// asking the network for it; the network routes the LID to its account.
func TestSendTextDecryptedByRecipient(t *testing.T) {
	t.Parallel()
	const recipient = "4915112345678"
	n := startNetwork(t)
	cli, ps := linkByQR(t, n, "491701234567")
	ctx := context.Background()
	to := types.NewJID(recipient, types.DefaultUserServer)
	for i, text := range []string{"hello from wagraph", "second message on the same session"} {
		resp, err := cli.SendMessage(ctx, to, &waE2E.Message{Conversation: proto.String(text)})
		if err != nil {
			t.Fatal(err)
		}
		acct, _ := n.Account(recipient)
		if acct.LID.IsEmpty() || resp.Sender != cli.Store.GetLID() {
			t.Fatalf("recipient LID %s, sent as %s: want a LID and the own LID %s", acct.LID, resp.Sender, cli.Store.GetLID())
		}
		in := waitInbox(t, n, recipient, i+1)
		got := in[i]
		if got.Message.GetConversation() != text || got.ID != resp.ID || got.From != ps.ID || got.Chat != ps.ID.ToNonAD() || got.To != acct.LID {
			t.Errorf("recipient decrypted %+v (text %q), want %q from %s to %s", got, got.Message.GetConversation(), text, ps.ID, acct.LID)
		}
	}
	// Having written to the contact, whatsmeow makes it a trusted contact
	// (issuePrivacyToken, tctoken.go).
	testclient.Until(t, 10*time.Second, `slices.Equal(n.TrustedContacts("491701234567"), []string{recipient})`, func() bool { return slices.Equal(n.TrustedContacts("491701234567"), []string{recipient}) })
}

// TestSendTextToLID: a direct message addressed to a LID reaches the phone
// of its account, and the client keeps the device list it asked for by LID.
func TestSendTextToLID(t *testing.T) {
	t.Parallel()
	const recipient = "4915112345679"
	n := startNetwork(t)
	cli, _ := linkByQR(t, n, "491701234568")
	ctx := context.Background()
	info, err := cli.GetUserInfo(ctx, []types.JID{types.NewJID(recipient, types.DefaultUserServer)})
	if err != nil {
		t.Fatal(err)
	}
	lid := info[types.NewJID(recipient, types.DefaultUserServer)].LID
	if acct, _ := n.Account(recipient); lid.IsEmpty() || lid != acct.LID {
		t.Fatalf("GetUserInfo LID %s, network LID %s", lid, acct.LID)
	}
	resp, err := cli.SendMessage(ctx, lid, &waE2E.Message{Conversation: proto.String("to a LID")})
	if err != nil {
		t.Fatal(err)
	}
	got := waitInbox(t, n, recipient, 1)[0]
	if got.ID != resp.ID || got.To != lid || got.Message.GetConversation() != "to a LID" {
		t.Errorf("recipient decrypted %+v, want %s to %s", got, resp.ID, lid)
	}
	devices, err := cli.GetUserDevices(ctx, []types.JID{lid})
	if err != nil || len(devices) != 1 || devices[0] != lid {
		t.Errorf("devices of %s: %v (%v), want its phone by LID", lid, devices, err)
	}
}

func TestReceiveTextFromContact(t *testing.T) {
	t.Parallel()
	n := startNetwork(t)
	cli, ps := linkByQR(t, n, "491701234567")
	got := make(chan *events.Message, 4)
	cli.AddEventHandler(func(evt any) {
		if m, ok := evt.(*events.Message); ok {
			got <- m
		}
	})
	for _, text := range []string{"hi there", "and again"} {
		id, err := n.SendText("4915112345678", ps.ID.User, text)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case m := <-got:
			// The contact's LID comes with its number (sender_lid).
			acct, _ := n.Account("4915112345678")
			if m.Info.ID != id || m.Message.GetConversation() != text || m.Info.Sender.User != "4915112345678" ||
				m.Info.SenderAlt.ToNonAD() != acct.LID || m.Info.IsFromMe {
				t.Errorf("client got %+v %q, want %s %q from %s", m.Info, m.Message.GetConversation(), id, text, acct.LID)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("client did not receive the message")
		}
	}
	// The receipts go out in the background: let them arrive before the
	// cleanup disconnects (whatsmeow's frame socket races a send with a close).
	testclient.Until(t, 10*time.Second, `n.Unacked(ps.ID) == 0`, func() bool { return n.Unacked(ps.ID) == 0 })
}

// TestConversationBothWays: a contact writes first, the client answers (to
// the contact's LID) and the contact writes again; every message decrypts.
// The client keeps one Signal session with the contact, under its LID,
// because the network names the LID of a sender (sender_lid).
func TestConversationBothWays(t *testing.T) {
	t.Parallel()
	const me, contact = "491701234569", "4915112345670"
	n := startNetwork(t)
	cli, ps := linkByQR(t, n, me)
	got := make(chan *events.Message, 4)
	bad := make(chan *events.UndecryptableMessage, 4)
	cli.AddEventHandler(func(evt any) {
		switch e := evt.(type) {
		case *events.Message:
			got <- e
		case *events.UndecryptableMessage:
			bad <- e
		}
	})
	receive := func(text string) {
		t.Helper()
		id, err := n.SendText(contact, me, text)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case m := <-got:
			if m.Info.ID != id || m.Message.GetConversation() != text {
				t.Errorf("client got %s %q, want %s %q", m.Info.ID, m.Message.GetConversation(), id, text)
			}
		case e := <-bad:
			t.Fatalf("client could not decrypt %s: %+v", id, e.Info)
		case <-time.After(10 * time.Second):
			t.Fatalf("client did not receive %q", text)
		}
	}
	receive("first from the contact")
	resp, err := cli.SendMessage(context.Background(), types.NewJID(contact, types.DefaultUserServer), &waE2E.Message{Conversation: proto.String("answer")})
	if err != nil {
		t.Fatal(err)
	}
	if in := waitInbox(t, n, contact, 1); in[0].ID != resp.ID || in[0].Message.GetConversation() != "answer" {
		t.Errorf("contact decrypted %+v, want the answer", in[0])
	}
	receive("second from the contact")
	testclient.Until(t, 10*time.Second, `n.Unacked(ps.ID) == 0`, func() bool { return n.Unacked(ps.ID) == 0 })
}

package wafake_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/store/sqlstore"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	waLog "go.mau.fi/whatsmeow/util/log"
	"google.golang.org/protobuf/proto"

	"github.com/wagraph/wagraph/internal/testclient"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// keepAliveChild marks the child process in which TestKeepAlive runs.
const keepAliveChild = "WAFAKE_KEEPALIVE_CHILD"

// TestMain shortens whatsmeow's keepalive timing, but only in the child
// process TestKeepAlive starts: the values are process globals that the
// keepalive loops read unsynchronised, so they are set once, before any
// client runs; and in the main test process frequent keepalives would race
// inside whatsmeow with every test's final Disconnect (its frame socket
// reads the connection without a lock while Close clears it).
func TestMain(m *testing.M) {
	if os.Getenv(keepAliveChild) == "1" {
		whatsmeow.KeepAliveIntervalMin = 200 * time.Millisecond
		whatsmeow.KeepAliveIntervalMax = 400 * time.Millisecond
		whatsmeow.KeepAliveResponseDeadline = time.Second
	}
	os.Exit(m.Run())
}

// eventLog keeps the connection-lifecycle events of a client, in order,
// and the messages it receives other than protocol messages (the phone's
// app state key share arrives as one after the first login).
type eventLog struct{ ch chan any }

func recordEvents(cli *whatsmeow.Client) *eventLog {
	l := &eventLog{ch: make(chan any, 256)}
	cli.AddEventHandler(func(evt any) {
		if m, ok := evt.(*events.Message); ok && m.Message.GetProtocolMessage() != nil {
			return
		}
		switch evt.(type) {
		case *events.QR, *events.PairSuccess, *events.PairError, *events.Connected, *events.Disconnected,
			*events.LoggedOut, *events.StreamError, *events.StreamReplaced, *events.OfflineSyncCompleted,
			*events.KeepAliveTimeout, *events.ClientOutdated, *events.Message:
			select {
			case l.ch <- evt:
			default:
			}
		}
	})
	return l
}

// waitFor returns the next event of type T and the events that came before
// it.
func waitFor[T any](t *testing.T, l *eventLog) (T, []any) {
	t.Helper()
	var before []any
	timeout := time.After(15 * time.Second)
	for {
		select {
		case evt := <-l.ch:
			if e, ok := evt.(T); ok {
				return e, before
			}
			before = append(before, evt)
		case <-timeout:
			var zero T
			t.Fatalf("no %T within 15 s; saw %s", zero, describe(before))
			return zero, nil
		}
	}
}

// quiet fails if any event arrives within d.
func quiet(t *testing.T, l *eventLog, d time.Duration) {
	t.Helper()
	select {
	case evt := <-l.ch:
		t.Errorf("unexpected %s", describe([]any{evt}))
	case <-time.After(d):
	}
}

// settle waits until the device has acknowledged everything the network
// sent it. Call it before anything that closes the client's socket:
// whatsmeow's FrameSocket.SendFrame reads its conn without a lock
// (socket/framesocket.go:124), so a receipt still being sent while the
// socket closes is a data race inside whatsmeow.
func settle(t *testing.T, n *wafake.Network, device types.JID) {
	t.Helper()
	testclient.Until(t, 10*time.Second, `n.Unacked(device) == 0`, func() bool { return n.Unacked(device) == 0 })
}

func describe(evts []any) string {
	var s []string
	for _, e := range evts {
		s = append(s, fmt.Sprintf("%T%+v", e, e))
	}
	return "[" + strings.Join(s, " ") + "]"
}

// storedDevices counts the devices in the client's own store: whatsmeow
// deletes it when it is logged out. (Reading cli.Store.ID would race with
// the client's goroutine doing the delete.)
func storedDevices(t *testing.T, cli *whatsmeow.Client) int {
	t.Helper()
	devs, err := cli.Store.Container.(*sqlstore.Container).GetAllDevices(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return len(devs)
}

func TestPairByPhoneCode(t *testing.T) {
	t.Parallel()
	n := startNetwork(t)
	const phone, contact = "491701234567", "4915112345678"
	cli := whatsmeow.NewClient(newDevice(t), waLog.Noop)
	n.Point(cli)
	rec := recordEvents(cli)
	if err := cli.Connect(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cli.Disconnect)
	waitFor[*events.QR](t, rec)
	ctx := context.Background()
	code, err := cli.PairPhone(ctx, phone, true, whatsmeow.PairClientChrome, "Chrome (Linux)")
	if err != nil {
		t.Fatal(err)
	}
	if len(code) != 9 || code[4] != '-' {
		t.Fatalf("pairing code %q, want XXXX-XXXX", code)
	}

	// A wrong code: the client's key bundle does not decrypt on the phone,
	// nothing is linked, and the client can still be paired.
	wrong := []byte(code)
	wrong[0] = map[bool]byte{true: 'Z', false: 'A'}[wrong[0] != 'Z']
	if err := n.EnterPairingCode(phone, string(wrong)); err == nil {
		t.Fatal("a wrong pairing code was accepted")
	}
	if d := n.LinkedDevices(phone); len(d) != 0 {
		t.Fatalf("a wrong code linked %v", d)
	}
	quiet(t, rec, 100*time.Millisecond)

	if err := n.EnterPairingCode(phone, strings.ToLower(code)); err != nil {
		t.Fatalf("the right code: %v", err)
	}
	ps, _ := waitFor[*events.PairSuccess](t, rec)
	_, before := waitFor[*events.Connected](t, rec)
	for _, e := range before {
		if _, ok := e.(*events.OfflineSyncCompleted); !ok {
			t.Errorf("before Connected: %s", describe(before))
		}
	}
	if ps.ID.User != phone || ps.ID.Device == 0 || ps.LID.Server != types.HiddenUserServer {
		t.Errorf("paired as %s / %s", ps.ID, ps.LID)
	}
	if d := n.LinkedDevices(phone); len(d) != 1 || d[0] != ps.ID {
		t.Errorf("linked devices %v, want [%s]", d, ps.ID)
	}
	if storedDevices(t, cli) != 1 {
		t.Error("the paired device is not in the client's store")
	}

	// The keys the client registered while pairing by code work both ways.
	resp, err := cli.SendMessage(ctx, types.NewJID(contact, types.DefaultUserServer), &waE2E.Message{Conversation: proto.String("paired by code")})
	if err != nil {
		t.Fatal(err)
	}
	if in := waitInbox(t, n, contact, 1); in[0].ID != resp.ID || in[0].Message.GetConversation() != "paired by code" || in[0].From != ps.ID {
		t.Errorf("contact decrypted %+v", in[0])
	}
	id, err := n.SendText(contact, phone, "welcome")
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := waitFor[*events.Message](t, rec); m.Info.ID != id || m.Message.GetConversation() != "welcome" {
		t.Errorf("client got %s %q", m.Info.ID, m.Message.GetConversation())
	}
	settle(t, n, ps.ID)
}

func TestPairByPhoneCodeRefusals(t *testing.T) {
	t.Parallel()
	n := startNetwork(t)
	cli := whatsmeow.NewClient(newDevice(t), waLog.Noop)
	n.Point(cli)
	rec := recordEvents(cli)
	if err := cli.Connect(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cli.Disconnect)
	waitFor[*events.QR](t, rec)
	ctx := context.Background()
	if code, err := cli.PairPhone(ctx, "4917012340000", true, whatsmeow.PairClientChrome, "Chrome (Linux)"); err == nil {
		t.Errorf("pairing with a number not on WhatsApp gave code %s", code)
	}
	if err := n.EnterPairingCode("491709999999", "ABCD-EFGH"); err == nil {
		t.Error("a code was accepted on a phone no client waits for")
	}
	if _, err := cli.PairPhone(ctx, "491701234567", true, whatsmeow.PairClientChrome, "Chrome (Linux)"); err != nil {
		t.Fatal(err)
	}
	if err := n.EnterPairingCode("491701234567", "ABC"); err == nil {
		t.Error("a 3-character code was accepted")
	}
	if d := n.LinkedDevices("491701234567"); len(d) != 0 {
		t.Errorf("linked %v", d)
	}
	quiet(t, rec, 100*time.Millisecond)
}

func TestLogout(t *testing.T) {
	t.Parallel()
	n := startNetwork(t)
	const phone = "491701234567"
	cli, ps := linkByQR(t, n, phone)
	other, ops := linkByQR(t, n, phone)
	settle(t, n, ps.ID)
	if err := cli.Logout(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d := n.LinkedDevices(phone); len(d) != 1 || d[0] != ops.ID {
		t.Errorf("after %s logged out, linked devices %v, want only [%s]", ps.ID, d, ops.ID)
	}
	if storedDevices(t, cli) != 0 {
		t.Error("the client kept its device after logging out")
	}
	// The other device is untouched: it still gets messages.
	rec := recordEvents(other)
	id, err := n.SendText("4915112345678", phone, "still here")
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := waitFor[*events.Message](t, rec); m.Info.ID != id {
		t.Errorf("the remaining device got %s, want %s", m.Info.ID, id)
	}
	settle(t, n, ops.ID)
	if u := n.Unacked(ps.ID); u != 0 {
		t.Errorf("%d stanzas queued for the logged-out device", u)
	}
}

func TestRemoveDeviceOnline(t *testing.T) {
	t.Parallel()
	n := startNetwork(t)
	const phone = "491701234567"
	cli, ps := linkByQR(t, n, phone)
	_, ops := linkByQR(t, n, phone)
	rec := recordEvents(cli)
	settle(t, n, ps.ID)
	if err := n.RemoveDevice(ps.ID); err != nil {
		t.Fatal(err)
	}
	lo, before := waitFor[*events.LoggedOut](t, rec)
	if lo.OnConnect || len(before) != 0 {
		t.Errorf("LoggedOut %+v after %s, want a stream logout and nothing before", lo, describe(before))
	}
	testclient.Until(t, 10*time.Second, `storedDevices(t, cli) == 0`, func() bool { return storedDevices(t, cli) == 0 })
	if d := n.LinkedDevices(phone); len(d) != 1 || d[0] != ops.ID {
		t.Errorf("linked devices %v, want only [%s]", d, ops.ID)
	}
	// Logged out for good: no reconnect, no second logout.
	quiet(t, rec, 400*time.Millisecond)
	if err := n.RemoveDevice(ps.ID); err == nil {
		t.Error("removing a removed device succeeded")
	}
	if err := n.RemoveDevice(types.NewJID(phone, types.DefaultUserServer)); err == nil {
		t.Error("the phone removed itself")
	}
}

func TestRemovedDeviceLoginRefused(t *testing.T) {
	t.Parallel()
	n := startNetwork(t)
	cli, ps := linkByQR(t, n, "491701234567")
	rec := recordEvents(cli)
	settle(t, n, ps.ID)
	cli.Disconnect()
	// Removed while offline, by its LID: it learns on its next login.
	if err := n.RemoveDevice(ps.LID); err != nil {
		t.Fatal(err)
	}
	if err := cli.Connect(); err != nil {
		t.Fatal(err)
	}
	lo, before := waitFor[*events.LoggedOut](t, rec)
	if !lo.OnConnect || lo.Reason != events.ConnectFailureLoggedOut || len(before) != 0 {
		t.Errorf("LoggedOut %+v after %s, want OnConnect with reason 401", lo, describe(before))
	}
	testclient.Until(t, 10*time.Second, `storedDevices(t, cli) == 0`, func() bool { return storedDevices(t, cli) == 0 })
	quiet(t, rec, 400*time.Millisecond)
	if d := n.LinkedDevices("491701234567"); len(d) != 0 {
		t.Errorf("linked devices %v after removal", d)
	}
}

// reconnected waits for Disconnected then Connected (or, with
// wantDisconnected false, Connected with no Disconnected), then checks the
// network delivers to the device on its new connection.
func reconnected(t *testing.T, n *wafake.Network, rec *eventLog, device types.JID, wantDisconnected bool) {
	t.Helper()
	_, before := waitFor[*events.Connected](t, rec)
	disconnected := 0
	for _, e := range before {
		if _, ok := e.(*events.Disconnected); ok {
			disconnected++
		} else if _, ok := e.(*events.OfflineSyncCompleted); !ok {
			t.Errorf("unexpected %s before Connected", describe([]any{e}))
		}
	}
	if want := map[bool]int{true: 1, false: 0}[wantDisconnected]; disconnected != want {
		t.Errorf("%d Disconnected before Connected, want %d", disconnected, want)
	}
	id, err := n.SendText("4915112345678", device.User, "after reconnect")
	if err != nil {
		t.Fatal(err)
	}
	if evt, _ := waitFor[*events.Message](t, rec); evt.Info.ID != id {
		t.Errorf("after reconnecting got %s, want %s", evt.Info.ID, id)
	}
	settle(t, n, device)
}

func TestDropConnectionReconnects(t *testing.T) {
	t.Parallel()
	n := startNetwork(t)
	const phone = "491701234567"
	cli, ps := linkByQR(t, n, phone)
	rec := recordEvents(cli)
	settle(t, n, ps.ID)
	if err := n.DropConnection(ps.ID); err != nil {
		t.Fatal(err)
	}
	reconnected(t, n, rec, ps.ID, true)
	if !cli.IsLoggedIn() {
		t.Error("not logged in after the automatic reconnect")
	}
	cli.Disconnect()
	testclient.Until(t, 10*time.Second, `n.DropConnection(ps.ID) != nil`, func() bool { return n.DropConnection(ps.ID) != nil })
	if err := n.DropConnection(types.NewJID(phone, types.DefaultUserServer)); err == nil {
		t.Error("dropped the phone's connection")
	}
}

func TestStreamErrors503And515(t *testing.T) {
	t.Parallel()
	n := startNetwork(t)
	const phone = "491701234567"
	cli, ps := linkByQR(t, n, phone)
	rec := recordEvents(cli)
	settle(t, n, ps.ID)

	// 503: the server goes away; whatsmeow sees the close and reconnects.
	if err := n.StreamError(ps.ID, "503"); err != nil {
		t.Fatal(err)
	}
	reconnected(t, n, rec, ps.ID, true)

	// 515: whatsmeow restarts the stream itself, as after pairing.
	if err := n.StreamError(ps.ID, "515"); err != nil {
		t.Fatal(err)
	}
	reconnected(t, n, rec, ps.ID, false)
	if !cli.IsLoggedIn() {
		t.Error("not logged in after 515")
	}
	if err := n.StreamError(ps.ID, "x"); err == nil {
		t.Error("a non-numeric stream error code was accepted")
	}
	if err := n.StreamError(ps.ID, "401"); err == nil {
		t.Error("a 401 stream error was sent without unlinking")
	}
}

func TestOfflineSyncCompleted(t *testing.T) {
	t.Parallel()
	n := startNetwork(t)
	const phone = "491701234567"
	cli, ps := linkByQR(t, n, phone)
	rec := recordEvents(cli)
	settle(t, n, ps.ID)
	cli.Disconnect()
	id, err := n.SendText("4915112345678", phone, "while you were away")
	if err != nil {
		t.Fatal(err)
	}
	if err := cli.Connect(); err != nil {
		t.Fatal(err)
	}
	// Connected comes after the post-login IQs, so anywhere in between.
	done, before := waitFor[*events.OfflineSyncCompleted](t, rec)
	msgs := without[*events.Connected](before)
	if done.Count != 1 || len(msgs) != 1 {
		t.Fatalf("OfflineSyncCompleted %+v after %s, want count 1 after the queued message", done, describe(before))
	}
	if m, ok := msgs[0].(*events.Message); !ok || m.Info.ID != id {
		t.Errorf("before OfflineSyncCompleted: %s, want message %s", describe(before), id)
	}
	if len(msgs) == len(before) {
		waitFor[*events.Connected](t, rec)
	}

	// Nothing missed: an empty offline delivery.
	settle(t, n, ps.ID)
	cli.Disconnect()
	if err := cli.Connect(); err != nil {
		t.Fatal(err)
	}
	done, before = waitFor[*events.OfflineSyncCompleted](t, rec)
	if done.Count != 0 || len(without[*events.Connected](before)) != 0 {
		t.Errorf("OfflineSyncCompleted %+v after %s, want count 0 and no message before", done, describe(before))
	}
	if len(without[*events.Connected](before)) == len(before) {
		waitFor[*events.Connected](t, rec) // the post-login IQs are done
	}
}

// without drops the events of type T.
func without[T any](evts []any) []any {
	var out []any
	for _, e := range evts {
		if _, ok := e.(T); !ok {
			out = append(out, e)
		}
	}
	return out
}

// countingConn counts the writes of the client's websocket.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

// TestKeepAlive: an idle client pings the network (w:p IQs, every 200–400 ms
// with TestMain's settings), every ping is answered within the 1 s deadline,
// and the client stays logged in without events.KeepAliveTimeout.
func TestKeepAlive(t *testing.T) {
	t.Parallel()
	if os.Getenv(keepAliveChild) != "1" {
		// Run this test alone in a child process with short keepalives.
		cmd := exec.Command(os.Args[0], "-test.run=^TestKeepAlive$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), keepAliveChild+"=1")
		out, err := cmd.CombinedOutput()
		// The child must have run the test, not merely matched nothing.
		if err != nil || !strings.Contains(string(out), "--- PASS: TestKeepAlive") {
			t.Fatalf("keepalive child: %v\n%s", err, out)
		}
		return
	}
	n := startNetwork(t)
	cli, ps := linkByQR(t, n, "491701234567")
	rec := recordEvents(cli)
	settle(t, n, ps.ID)
	cli.Disconnect()
	var writes atomic.Int64
	d := &net.Dialer{}
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		c, err := d.DialContext(ctx, "tcp", n.Addr())
		if err != nil {
			return nil, err
		}
		return countingConn{c, &writes}, nil
	}
	cli.SetWebsocketHTTPClient(&http.Client{Transport: &http.Transport{DialContext: dial, DialTLSContext: dial}})
	if err := cli.Connect(); err != nil {
		t.Fatal(err)
	}
	// Connected comes once the post-login IQs are answered: from here on an
	// idle client writes nothing but keepalives. One left unanswered would
	// time out within 0.4 + 1 s.
	waitFor[*events.Connected](t, rec)
	start := writes.Load()
	for _, e := range drainFor(rec, 1500*time.Millisecond) {
		if _, ok := e.(*events.KeepAliveTimeout); ok {
			t.Errorf("keepalive timed out: %+v", e)
		}
	}
	if pings := writes.Load() - start; pings < 3 {
		t.Errorf("%d writes by an idle client in 1.5 s, want at least 3 keepalives", pings)
	}
	if !cli.IsLoggedIn() || !cli.IsConnected() {
		t.Error("the client is no longer logged in")
	}
}

// drainFor collects every event of the next d.
func drainFor(l *eventLog, d time.Duration) []any {
	var out []any
	timeout := time.After(d)
	for {
		select {
		case e := <-l.ch:
			out = append(out, e)
		case <-timeout:
			return out
		}
	}
}

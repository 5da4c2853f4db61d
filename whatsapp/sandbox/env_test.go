package sandbox_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"
	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/store/sqlstore"
	"go.mau.fi/whatsmeow/types"
	waLog "go.mau.fi/whatsmeow/util/log"

	"github.com/wagraph/wagraph/whatsapp/sandbox"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// backend is what the resolvers and tests use of either kind of network:
// its controls (sandbox.Do), and what the clients connect through.
type backend interface {
	sandbox.Network
	Connections(ctx context.Context) (map[string]sandbox.DeviceConnections, error)
	Point(cli *whatsmeow.Client)
	Close() error
}

var (
	_ backend = (*sandbox.Local)(nil)
	_ backend = (*sandbox.Remote)(nil)
)

// env is one run of the operations table: a backend, the network behind it
// (to wait for what the network holds), and the real whatsmeow clients the
// operations act on.
type env struct {
	b   backend
	net *wafake.Network

	cli *whatsmeow.Client // linked by QR as me
	rec *recorder
	qr  string // the first QR code cli showed
	dev types.JID

	cli2  *whatsmeow.Client // linked by pairing code as coded
	rec2  *recorder
	code  string
	dev2  types.JID
	group types.JID

	removed map[*whatsmeow.Client]bool // logged out by the network: not to be disconnected

	ids   map[string]string // message id → label, to compare runs
	label map[string]string // label → message id
	image []byte
}

// newEnv starts a network of its own (in-process networks share one root,
// so any number of them coexist with a Remote in this process) and a
// client showing its first QR code. remote puts the backend behind the
// control API on a loopback listener.
func newEnv(t *testing.T, remote bool) *env {
	t.Helper()
	l, err := sandbox.NewLocal(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Error(err)
		}
	})
	e := &env{b: l, net: l.Network(), ids: map[string]string{}, label: map[string]string{}, removed: map[*whatsmeow.Client]bool{}}
	if remote {
		srv := httptest.NewServer(sandbox.Handler(l.Network(), nil))
		t.Cleanup(srv.Close)
		r, err := sandbox.Dial(context.Background(), srv.Listener.Addr().String(), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		e.b = r
	}
	e.cli, e.rec = newClient(t, e, &e.dev)
	// The QR channel's context must outlive the pairing: whatsmeow
	// disconnects a pairing client when it ends.
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	qr, err := e.cli.GetQRChannel(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.cli.Connect(); err != nil {
		t.Fatal(err)
	}
	item := <-qr
	if item.Event != "code" {
		t.Fatalf("qr event %q, want a code", item.Event)
	}
	e.qr = item.Code
	return e
}

// newClient returns a client on a fresh device store, pointed at the
// backend's network, disconnected at the end of the test once *dev (the
// device it is linked as, if any by then) is quiet. The store is a SQLite
// file of its own: these tests are about the network's controls, not the
// client's store (on PostgreSQL, the whatsapp package's and the server's
// tests), so this package is not in make test's PostgreSQL pass.
func newClient(t *testing.T, e *env, dev *types.JID) (*whatsmeow.Client, *recorder) {
	t.Helper()
	dsn := "file:" + filepath.Join(t.TempDir(), "wm.db") + "?_foreign_keys=on&_journal_mode=WAL&_busy_timeout=10000"
	c, err := sqlstore.New(context.Background(), "sqlite3", dsn, waLog.Noop)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	cli := whatsmeow.NewClient(c.NewDevice(), waLog.Noop)
	e.b.Point(cli)
	rec := record(cli)
	t.Cleanup(func() {
		if e.removed[cli] {
			return
		}
		if !dev.IsEmpty() {
			quiesce(e.net, *dev)
		}
		cli.Disconnect()
	})
	return cli, rec
}

// quiesce waits (5 s at most) until the network holds nothing
// unacknowledged for the device and the device has sent nothing for a
// moment: whatsmeow sends receipts and acks from goroutines, and a send
// racing its own Disconnect is a data race inside its frame socket.
func quiesce(n *wafake.Network, device types.JID) {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if n.Unacked(device) == 0 && n.Idle(device) > 200*time.Millisecond {
			return
		}
	}
}

// recorder keeps a client's events in order.
type recorder struct{ ch chan any }

func record(cli *whatsmeow.Client) *recorder {
	r := &recorder{ch: make(chan any, 512)}
	cli.AddEventHandler(func(evt any) {
		select {
		case r.ch <- evt:
		default:
		}
	})
	return r
}

// next returns the next event of type T that keep accepts, skipping
// others; it fails the test after 10 s.
func next[T any](t *testing.T, r *recorder, keep func(T) bool) T {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case evt := <-r.ch:
			if e, ok := evt.(T); ok && (keep == nil || keep(e)) {
				return e
			}
		case <-timeout:
			var zero T
			t.Fatalf("no %T within 10 s", zero)
			return zero
		}
	}
}

// name gives a message id a label shared by both runs.
func (e *env) name(label, id string) string {
	e.ids[id], e.label[label] = label, id
	return id
}

func jid(phone string) string { return types.NewJID(phone, types.DefaultUserServer).String() }

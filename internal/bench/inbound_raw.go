package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/wagraph/wagraph/whatsapp/rawclient"
	"github.com/wagraph/wagraph/whatsapp/sandbox"
)

// rawReceivers is goal 3's raw reference (issue 35, goal 2): raw
// whatsmeow clients in this process, each linked to an account of its own
// on the network, receiving with the sessions' receive settings and
// whatsmeow store (rawclient.LinkReceiver, whatsapp.OpenStore's SQLite
// file and pragmas), written to by the same contacts as wagraph's
// sessions. A text counts as received when whatsmeow hands it to the
// handler, after its decryption transaction and before its ack; nothing
// more is done with it (no message row, no event, no webhook).
type rawReceivers struct {
	remote   *sandbox.Remote
	store    *rawclient.Store
	clients  []*rawclient.Client
	sessions []inboundSession
	track    atomic.Pointer[tracker]
}

// rawReceiverPhone is the account of raw client i: apart from wagraph's
// sessions' (linkInbound), written to by the contact of wagraph's session
// i.
func rawReceiverPhone(i int) string { return fmt.Sprintf("491702%05d1", i) }

// linkRawReceivers links n raw clients (8 at a time) in e's directory.
func linkRawReceivers(ctx context.Context, e *env, net *network, n int) (*rawReceivers, error) {
	r := &rawReceivers{}
	ok := false
	defer func() {
		if !ok {
			r.close()
		}
	}()
	var err error
	if r.remote, err = sandbox.Dial(ctx, net.control, nil); err != nil {
		return nil, err
	}
	if r.store, err = rawclient.OpenStore(ctx, filepath.Join(e.dir, "raw-receivers.db"), r.remote); err != nil {
		return nil, err
	}
	onText := func(m rawclient.Text) {
		if t := r.track.Load(); t != nil {
			t.arrived(m.Text, time.Now())
		}
	}
	r.clients = make([]*rawclient.Client, n)
	r.sessions = make([]inboundSession, n)
	err = inParallel(ctx, n, 8, func(ctx context.Context, i int) error {
		s := inboundSession{id: fmt.Sprintf("raw-%d", i), phone: rawReceiverPhone(i), contact: inboundContact(i)}
		c, err := rawclient.LinkReceiver(ctx, r.store, s.phone, onText)
		if err != nil {
			return fmt.Errorf("raw client %d: %w", i, err)
		}
		r.clients[i], r.sessions[i] = c, s
		return nil
	})
	if err != nil {
		return nil, err
	}
	ok = true
	return r, nil
}

func (r *rawReceivers) close() {
	for _, c := range r.clients {
		if c != nil {
			c.Close()
		}
	}
	if r.store != nil {
		_ = r.store.Close()
	}
	if r.remote != nil {
		_ = r.remote.Close()
	}
}

package sandbox_test

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/store/sqlstore"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/testclient"
	"github.com/wagraph/wagraph/whatsapp/sandbox"
)

const (
	me      = "491701234567"  // the session linked by QR
	contact = "4915112345678" // a simulated contact
	coded   = "491709876543"  // the session linked by pairing code
	lonely  = "4915199999999" // on WhatsApp, no linked device
	notOnWA = "4915100000000"
)

// wantErr is the fault a step must fail with.
type wantErr struct {
	code     fault.Code
	field    string
	contains string
}

type step struct {
	name string
	// run performs the operation and checks what the clients saw; its
	// result is deterministic, so both runs can be compared.
	run  func(t *testing.T, ctx context.Context, e *env) (any, error)
	want *wantErr
}

// outcome is what a step produced, as compared between Local and Remote.
type outcome struct {
	Result  any
	Code    fault.Code
	Field   string
	Message string
}

func invalid(field, contains string) *wantErr { return &wantErr{fault.Invalid, field, contains} }
func failsWith(code fault.Code, contains string) *wantErr {
	return &wantErr{code: code, contains: contains}
}

// TestLocalAndRemote runs one table of operations against a Local and a
// Remote (over the control API), each with real whatsmeow clients linked
// through the sandbox, and requires the same results and the same faults,
// message for message.
func TestLocalAndRemote(t *testing.T) {
	runs := map[string][]outcome{}
	for _, kind := range []string{"local", "remote"} {
		t.Run(kind, func(t *testing.T) {
			e := newEnv(t, kind == "remote")
			ctx := context.Background()
			for _, s := range steps() {
				res, err := s.run(t, ctx, e)
				o := outcome{Result: res}
				if err != nil {
					f := fault.From(err)
					if f == nil {
						t.Fatalf("%s: unclassified error %v", s.name, err)
					}
					o = outcome{Code: f.Code, Field: f.Field, Message: f.Message}
					for id, label := range e.ids { // the same message in both runs
						o.Message = strings.ReplaceAll(o.Message, id, "<"+label+">")
					}
				}
				switch w := s.want; {
				case w == nil && err != nil:
					t.Fatalf("%s: %v (%s %s)", s.name, err, o.Code, o.Field)
				case w != nil && err == nil:
					t.Fatalf("%s: succeeded (%v), want %s", s.name, res, w.code)
				case w != nil && (o.Code != w.code || o.Field != w.field || !strings.Contains(o.Message, w.contains)):
					t.Fatalf("%s: %s field %q %q, want %s field %q containing %q", s.name, o.Code, o.Field, o.Message, w.code, w.field, w.contains)
				}
				runs[kind] = append(runs[kind], o)
			}
		})
	}
	if t.Failed() {
		return
	}
	local, remote := runs["local"], runs["remote"]
	if len(local) != len(remote) {
		t.Fatalf("local ran %d steps, remote %d", len(local), len(remote))
	}
	for i, s := range steps() {
		if !reflect.DeepEqual(local[i], remote[i]) {
			t.Errorf("%s: local %+v, remote %+v", s.name, local[i], remote[i])
		}
	}
}

func steps() []step {
	return []step{
		{"link: the phone is not a number", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			return sandbox.Do(ctx, e.b, sandbox.LinkDevice{QRCode: e.qr, Phone: "49170x234567"})
		}, invalid("phone", "7 to 15 digits")},
		{"link: the number is not on WhatsApp", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			return sandbox.Do(ctx, e.b, sandbox.LinkDevice{QRCode: e.qr, Phone: "4917012340000"})
		}, invalid("phone", "not on WhatsApp")},
		{"link: not a QR code", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			return sandbox.Do(ctx, e.b, sandbox.LinkDevice{QRCode: "nonsense", Phone: me})
		}, invalid("qrCode", "QR code")},
		{"link by QR", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			if _, err := sandbox.Do(ctx, e.b, sandbox.LinkDevice{QRCode: e.qr, Phone: me}); err != nil {
				return nil, err
			}
			ps := next[*events.PairSuccess](t, e.rec, nil)
			next[*events.Connected](t, e.rec, nil)
			e.dev = ps.ID
			return ps.ID.String(), nil
		}, nil},
		{"link: the QR code is used up", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			return sandbox.Do(ctx, e.b, sandbox.LinkDevice{QRCode: e.qr, Phone: me})
		}, failsWith(fault.Conflict, "no session shows this QR code")},
		{"connections of the linked device", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			// The pairing connection never logged in: the login after
			// PairSuccess is the device's first, and still open.
			c, err := e.b.Connections(ctx)
			want := map[string]sandbox.DeviceConnections{e.dev.String(): {Open: 1, MaxOpen: 1, Logins: 1}}
			if err == nil && !reflect.DeepEqual(c, want) {
				t.Errorf("connections %+v, want %+v", c, want)
			}
			return c, err
		}, nil},

		{"account of the linked phone", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			a, err := sandbox.Do(ctx, e.b, sandbox.Account{Phone: me})
			if err == nil && (a == nil || len(a.LinkedDevices) != 1 || a.LinkedDevices[0] != e.dev.String() || a.Privacy["lastSeen"] != "all") {
				t.Errorf("account %+v, want linked device %s and default privacy", a, e.dev)
			}
			return a, err
		}, nil},
		{"account: not on WhatsApp", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			a, err := sandbox.Do(ctx, e.b, sandbox.Account{Phone: "4917012340000"})
			if err == nil && a != nil {
				t.Errorf("account %+v of a number not on WhatsApp", a)
			}
			return a, err
		}, nil},
		{"account: not a number", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			return sandbox.Do(ctx, e.b, sandbox.Account{Phone: "12ab"})
		}, invalid("phone", "7 to 15 digits")},

		{"a contact writes", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			sent, err := sandbox.Do(ctx, e.b, sandbox.SendText{From: contact, To: jid(me), Text: "hello from the sandbox"})
			if err != nil {
				return nil, err
			}
			id := sent.ID
			m := next(t, e.rec, func(m *events.Message) bool { return !m.Info.IsFromMe })
			if m.Info.ID != id || m.Message.GetConversation() != "hello from the sandbox" || m.Info.Sender.User != contact {
				t.Errorf("client got %s %q from %s, want %s", m.Info.ID, m.Message.GetConversation(), m.Info.Sender, id)
			}
			e.name("contact-text", id)
			return "received", nil
		}, nil},
		{"a contact sends an image", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			e.image = content("image", 3000)
			sent, err := sandbox.Do(ctx, e.b, sandbox.SendImage{From: contact, To: jid(me), Image: e.image, Mimetype: "image/jpeg", Caption: "a picture"})
			if err != nil {
				return nil, err
			}
			id := sent.ID
			m := next(t, e.rec, func(m *events.Message) bool { return !m.Info.IsFromMe })
			img := m.Message.GetImageMessage()
			if m.Info.ID != id || img.GetCaption() != "a picture" || img.GetMimetype() != "image/jpeg" {
				t.Errorf("client got %s %+v, want image %s", m.Info.ID, img, id)
			}
			data, err := e.cli.Download(ctx, img)
			if err != nil || !bytes.Equal(data, e.image) {
				t.Errorf("client downloaded %d bytes (%v), want the %d sent", len(data), err, len(e.image))
			}
			return "received", nil
		}, nil},
		{"a contact sends a burst", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			n, err := sandbox.Do(ctx, e.b, sandbox.SendBurst{From: contact, To: jid(me), Count: 20, Prefix: "burst-"})
			if err != nil {
				return nil, err
			}
			for i := 1; i <= 20; i++ {
				m := next(t, e.rec, func(m *events.Message) bool { return !m.Info.IsFromMe })
				if want := fmt.Sprintf("burst-%d", i); m.Message.GetConversation() != want || m.Info.Sender.User != contact {
					t.Fatalf("text %d of the burst: %q from %s, want %q in order", i, m.Message.GetConversation(), m.Info.Sender, want)
				}
				if secret := m.Message.GetMessageContextInfo().GetMessageSecret(); secret != nil {
					t.Errorf("text %d of the burst: a message secret %x, want none without Secrets", i, secret)
				}
			}
			return n, nil
		}, nil},
		{"a contact sends a burst with message secrets", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			n, err := sandbox.Do(ctx, e.b, sandbox.SendBurst{From: contact, To: jid(me), Count: 5, Prefix: "secret-", Secrets: true})
			if err != nil {
				return nil, err
			}
			for i := 1; i <= 5; i++ {
				m := next(t, e.rec, func(m *events.Message) bool { return !m.Info.IsFromMe })
				if want := fmt.Sprintf("secret-%d", i); m.Message.GetConversation() != want {
					t.Fatalf("text %d of the burst: %q, want %q in order", i, m.Message.GetConversation(), want)
				}
				if secret := m.Message.GetMessageContextInfo().GetMessageSecret(); len(secret) != 32 {
					t.Errorf("text %d of the burst: a message secret of %d bytes, want 32, as phones give texts", i, len(secret))
				}
			}
			return n, nil
		}, nil},
		{"burst: none", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			return sandbox.Do(ctx, e.b, sandbox.SendBurst{From: contact, To: jid(me), Count: 0, Prefix: "x"})
		}, invalid("count", "from 1 to 10000")},
		{"burst: too many", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			return sandbox.Do(ctx, e.b, sandbox.SendBurst{From: contact, To: jid(me), Count: 10001, Prefix: "x"})
		}, invalid("count", "from 1 to 10000")},
		{"burst: a prefix longer than a text", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			return sandbox.Do(ctx, e.b, sandbox.SendBurst{From: contact, To: jid(me), Count: 1, Prefix: strings.Repeat("x", 65536)})
		}, invalid("prefix", "65536")},
		{"burst: from a number not on WhatsApp", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			return sandbox.Do(ctx, e.b, sandbox.SendBurst{From: notOnWA, To: jid(me), Count: 1, Prefix: "x"})
		}, invalid("from", "not on WhatsApp")},
		{"burst: to an account without a linked device", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			return sandbox.Do(ctx, e.b, sandbox.SendBurst{From: contact, To: jid(lonely), Count: 3, Prefix: "x"})
		}, failsWith(fault.Conflict, lonely+" has no linked device")},
		{"send: empty text", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			return sandbox.Do(ctx, e.b, sandbox.SendText{From: contact, To: jid(me), Text: ""})
		}, invalid("text", "must not be empty")},
		{"send: into a group", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			return sandbox.Do(ctx, e.b, sandbox.SendText{From: contact, To: "120363025246125888@g.us", Text: "hi all"})
		}, invalid("to", "is a group")},
		{"send: to a bare number", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			return sandbox.Do(ctx, e.b, sandbox.SendText{From: contact, To: me, Text: "hi"})
		}, invalid("to", "user JID")},
		{"send: from a number not on WhatsApp", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			return sandbox.Do(ctx, e.b, sandbox.SendText{From: notOnWA, To: jid(me), Text: "hi"})
		}, invalid("from", "not on WhatsApp")},
		{"send: to an account without a linked device", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			return sandbox.Do(ctx, e.b, sandbox.SendText{From: contact, To: jid(lonely), Text: "anyone?"})
		}, failsWith(fault.Conflict, lonely+" has no linked device")},
		{"send image: without a linked device", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			return sandbox.Do(ctx, e.b, sandbox.SendImage{From: contact, To: jid(lonely), Image: e.image, Mimetype: "image/jpeg"})
		}, failsWith(fault.Conflict, lonely+" has no linked device")},
		{"send image: not an image", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			return sandbox.Do(ctx, e.b, sandbox.SendImage{From: contact, To: jid(me), Image: []byte("plain text"), Mimetype: "text/plain"})
		}, invalid("mimetype", "image type")},
		{"send image: too large", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			return sandbox.Do(ctx, e.b, sandbox.SendImage{From: contact, To: jid(me), Image: make([]byte, 16<<20+1), Mimetype: "image/jpeg"})
		}, failsWith(fault.TooLarge, "up to 16 MiB")},

		{"inbox: what the contact's phone decrypted", inboxStep, nil},
		{"media of the image the contact received", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			data, err := sandbox.Do(ctx, e.b, sandbox.Media{Phone: contact, MessageID: e.label["client-image"]})
			if err == nil && !bytes.Equal(data, content("client image", 5000)) {
				t.Errorf("media of %d bytes differs from the image sent", len(data))
			}
			return len(data), err
		}, nil},
		{"media: a text has none", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			return sandbox.Do(ctx, e.b, sandbox.Media{Phone: contact, MessageID: e.label["client-text"]})
		}, failsWith(fault.NotFound, "has no attachment")},
		{"media: no such message", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			return sandbox.Do(ctx, e.b, sandbox.Media{Phone: contact, MessageID: "3EB0NOSUCHMESSAGE"})
		}, failsWith(fault.NotFound, "received no message")},
		{"inbox: not on WhatsApp", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			return sandbox.Do(ctx, e.b, sandbox.Inbox{Phone: notOnWA})
		}, invalid("phone", "not on WhatsApp")},

		{"react", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			if _, err := sandbox.Do(ctx, e.b, sandbox.React{From: contact, To: jid(me), MessageID: e.label["client-text"], Emoji: "👍"}); err != nil {
				return nil, err
			}
			m := next(t, e.rec, func(m *events.Message) bool { return m.Message.GetReactionMessage() != nil })
			r := m.Message.GetReactionMessage()
			if r.GetText() != "👍" || r.GetKey().GetID() != e.label["client-text"] || r.GetKey().GetFromMe() || m.Info.Sender.User != contact {
				t.Errorf("reaction %+v from %s, want 👍 on the client's message", r, m.Info.Sender)
			}
			return "reacted", nil
		}, nil},
		{"react: empty emoji", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			return sandbox.Do(ctx, e.b, sandbox.React{From: contact, To: jid(me), MessageID: e.label["client-text"], Emoji: ""})
		}, invalid("emoji", "must not be empty")},
		{"react: no message id", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			return sandbox.Do(ctx, e.b, sandbox.React{From: contact, To: jid(me), MessageID: " ", Emoji: "👍"})
		}, invalid("messageId", "must not be empty")},
		{"read receipt", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			if _, err := sandbox.Do(ctx, e.b, sandbox.Receipt{From: contact, To: jid(me), MessageID: e.label["client-text"], Type: "read"}); err != nil {
				return nil, err
			}
			r := next[*events.Receipt](t, e.rec, func(r *events.Receipt) bool { return r.Type == types.ReceiptTypeRead })
			if len(r.MessageIDs) != 1 || r.MessageIDs[0] != e.label["client-text"] || r.Sender.User != contact {
				t.Errorf("receipt %+v, want read of the client's message by %s", r, contact)
			}
			return "read", nil
		}, nil},
		{"receipt: unknown type", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			return sandbox.Do(ctx, e.b, sandbox.Receipt{From: contact, To: jid(me), MessageID: e.label["client-text"], Type: "seen"})
		}, invalid("type", "delivered, read or played")},
		{"typing", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			if _, err := sandbox.Do(ctx, e.b, sandbox.Presence{From: contact, To: jid(me), State: "composing"}); err != nil {
				return nil, err
			}
			p := next[*events.ChatPresence](t, e.rec, nil)
			if p.State != types.ChatPresenceComposing || p.Chat.User != contact {
				t.Errorf("chat presence %+v, want composing in the chat with %s", p, contact)
			}
			return string(p.State), nil
		}, nil},
		{"presence: available without a subscriber", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			return sandbox.Do(ctx, e.b, sandbox.Presence{From: contact, To: jid(me), State: "available"})
		}, failsWith(fault.Conflict, "only to subscribers")},
		{"presence: unknown state", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			return sandbox.Do(ctx, e.b, sandbox.Presence{From: contact, To: jid(me), State: "typing"})
		}, invalid("state", "available, unavailable, composing or paused")},
		{"presence: to an account without a linked device", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			return sandbox.Do(ctx, e.b, sandbox.Presence{From: contact, To: jid(lonely), State: "composing"})
		}, failsWith(fault.Conflict, "has no linked device")},

		{"group the session created", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			info, err := e.cli.CreateGroup(ctx, whatsmeow.ReqCreateGroup{Name: "Sandbox team", Participants: []types.JID{types.NewJID(contact, types.DefaultUserServer)}})
			if err != nil {
				t.Fatal(err)
			}
			e.group = info.JID
			g, err := sandbox.Do(ctx, e.b, sandbox.Group{JID: info.JID.String()})
			if err != nil || g == nil {
				return g, err
			}
			want := []sandbox.GroupParticipant{{Phone: me, Role: "superadmin"}, {Phone: contact, Role: "member"}}
			if g.JID != info.JID.String() || g.Subject != "Sandbox team" || len(g.InviteCode) == 0 || !reflect.DeepEqual(g.Participants, want) ||
				g.Owner != me || g.MemberAddMode != "ADMINS" || time.Since(g.Created) > time.Minute || g.Created.After(time.Now()) {
				t.Errorf("group %+v, want %s with %v, created by %s just now", g, info.JID, want, me)
			}
			g.JID, g.InviteCode, g.Created = "<group>", "<code>", time.Time{} // different in each run
			return g, nil
		}, nil},
		{"group: unknown", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			g, err := sandbox.Do(ctx, e.b, sandbox.Group{JID: "120363000000000001@g.us"})
			if err == nil && g != nil {
				t.Errorf("unknown group %+v", g)
			}
			return g, err
		}, nil},
		{"group: not a group JID", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			return sandbox.Do(ctx, e.b, sandbox.Group{JID: jid(me)})
		}, invalid("jid", "group JID")},

		{"drop the connection", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			quiesce(e.net, e.dev)
			if _, err := sandbox.Do(ctx, e.b, sandbox.DropConnection{Device: e.dev.String()}); err != nil {
				return nil, err
			}
			next[*events.Disconnected](t, e.rec, nil)
			next[*events.Connected](t, e.rec, nil)
			return "reconnected", nil
		}, nil},
		{"drop: not a device JID", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			return sandbox.Do(ctx, e.b, sandbox.DropConnection{Device: jid(me)})
		}, invalid("device", "linked device")},
		{"drop: no such linked device", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			return sandbox.Do(ctx, e.b, sandbox.DropConnection{Device: me + ":9@s.whatsapp.net"})
		}, failsWith(fault.NotFound, "is not a linked device")},

		{"pairing code: no session waits", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			return sandbox.Do(ctx, e.b, sandbox.EnterPairingCode{Phone: coded, Code: "ABCD-EFGH"})
		}, failsWith(fault.Conflict, "no session is waiting for a pairing code of "+coded)},
		{"pairing code: malformed", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			return sandbox.Do(ctx, e.b, sandbox.EnterPairingCode{Phone: coded, Code: "ABC"})
		}, invalid("code", "8-character")},
		{"pairing code: wrong", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			e.cli2, e.rec2 = newClient(t, e, &e.dev2)
			if err := e.cli2.Connect(); err != nil {
				t.Fatal(err)
			}
			next[*events.QR](t, e.rec2, nil)
			code, err := e.cli2.PairPhone(ctx, coded, true, whatsmeow.PairClientChrome, "Chrome (Linux)")
			if err != nil {
				t.Fatal(err)
			}
			e.code = code
			wrong := []byte(code)
			wrong[0] = map[bool]byte{true: 'Z', false: 'A'}[wrong[0] != 'Z']
			return sandbox.Do(ctx, e.b, sandbox.EnterPairingCode{Phone: coded, Code: string(wrong)})
		}, invalid("code", "is wrong")},
		{"link by pairing code", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			if _, err := sandbox.Do(ctx, e.b, sandbox.EnterPairingCode{Phone: coded, Code: e.code}); err != nil {
				return nil, err
			}
			ps := next[*events.PairSuccess](t, e.rec2, nil)
			next[*events.Connected](t, e.rec2, nil)
			e.dev2 = ps.ID
			return ps.ID.String(), nil
		}, nil},
		{"remove the device", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			quiesce(e.net, e.dev2)
			if _, err := sandbox.Do(ctx, e.b, sandbox.RemoveDevice{Device: e.dev2.String()}); err != nil {
				return nil, err
			}
			lo := next[*events.LoggedOut](t, e.rec2, nil)
			// The network closes the socket; whatsmeow must not be asked to
			// as well (its read pump reads its closed flag unlocked while
			// Close writes it), and it deletes its store in the background:
			// wait for that, so that nothing of it runs when the test ends.
			e.removed[e.cli2] = true
			testclient.Until(t, 10*time.Second, "the removed client deletes its device", func() bool {
				devs, err := e.cli2.Store.Container.(*sqlstore.Container).GetAllDevices(ctx)
				return err == nil && len(devs) == 0
			})
			return fmt.Sprintf("logged out, on connect %v", lo.OnConnect), nil
		}, nil},
		{"remove: already removed", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			return sandbox.Do(ctx, e.b, sandbox.RemoveDevice{Device: e.dev2.String()})
		}, failsWith(fault.NotFound, "is not a linked device")},
		{"drop: the device is offline", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			quiesce(e.net, e.dev)
			e.cli.Disconnect()
			testclient.Until(t, 10*time.Second, "the network sees the client leave", func() bool { return e.net.Idle(e.dev) >= 24*time.Hour })
			return sandbox.Do(ctx, e.b, sandbox.DropConnection{Device: e.dev.String()})
		}, failsWith(fault.NotConnected, "is not connected")},
		{"burst to the offline device waits in the network's queue", func(t *testing.T, ctx context.Context, e *env) (any, error) {
			n, err := sandbox.Do(ctx, e.b, sandbox.SendBurst{From: contact, To: jid(me), Count: 5, Prefix: "later-"})
			if err == nil && e.net.Unacked(e.dev) != 5 {
				t.Errorf("the network holds %d stanzas for the offline device, want the 5 texts", e.net.Unacked(e.dev))
			}
			return n, err
		}, nil},
	}
}

// content is deterministic test bytes, the same in both runs.
func content(seed string, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed[i%len(seed)] ^ byte(i*31)
	}
	return b
}

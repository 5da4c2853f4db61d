package whatsapp

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// The contacts of the message tests: accounts of the network with a phone.
const (
	peer     = "4915155501234"
	peer2    = "4915155505678"
	peerNoWA = "4915155500000" // numbers ending in 0000 are not on WhatsApp
)

func phoneJID(phone string) types.JID { return types.NewJID(phone, types.DefaultUserServer) }

// tinyPNG is a real 2×2 PNG.
func tinyPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(1, 1, color.RGBA{R: 255, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// inboxMessage waits until the phone of account has received message id.
func (e *env) inboxMessage(account, id string) wafake.Received {
	e.t.Helper()
	var got wafake.Received
	e.waitUntil("message "+id+" in the inbox of "+account, func() bool {
		for _, r := range e.net.Inbox(account) {
			if r.ID == id {
				got = r
				return true
			}
		}
		return false
	})
	return got
}

// event waits for the first event of kind in session sid whose data id is
// id, and returns it with its position.
func (e *env) event(sid, kind, id string) (published, int) {
	e.t.Helper()
	return e.eventBy(sid, kind, "id", id)
}

// eventBy is event for kinds that name their subject by another key (a
// call event's callId).
func (e *env) eventBy(sid, kind, key, id string) (published, int) {
	e.t.Helper()
	var ev published
	at := -1
	e.waitUntil(kind+" of "+id, func() bool {
		for i, x := range e.pub.events(sid) {
			if x.Kind == kind && x.Data[key] == id {
				ev, at = x, i
				return true
			}
		}
		return false
	})
	return ev, at
}

// wantData checks the keys of want in data.
func wantData(t *testing.T, what string, data, want map[string]any) {
	t.Helper()
	for k, v := range want {
		// Compared as a receiver reads them: the JSON of each value.
		got, _ := json.Marshal(data[k])
		w, _ := json.Marshal(v)
		if _, present := data[k]; !present || string(got) != string(w) {
			t.Errorf("%s: %s = %s, want %s", what, k, got, w)
		}
	}
}

// TestSend sends every kind of message through the manager and checks what
// the recipient's phone decrypted and what the session published.
func TestSend(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager()
	e.pairQR(m, "s1", phone)
	to := phoneJID(peer)

	first, err := m.Send(ctx, "s1", Outgoing{To: to, Type: "text", Text: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if first.Chat != to || first.ID == "" || time.Since(first.Timestamp) > time.Minute {
		t.Errorf("Send = %+v", first)
	}
	// The gateway names the chat by number; whatsmeow addresses the message
	// to the contact's LID ("send: always use LID for DMs").
	peerAcct, _ := e.net.Account(peer)
	if r := e.inboxMessage(peer, first.ID); r.Message.GetConversation() != "hello" || r.From.User != phone || r.To.IsEmpty() || r.To != peerAcct.LID {
		t.Errorf("the contact received %+v, want it addressed to its LID %s", r, peerAcct.LID)
	}

	pic, doc, ogg := tinyPNG(t), []byte("%PDF-1.4 a tiny document"), []byte("OggS not really opus")
	wave := make([]byte, 64)
	for i := range wave {
		wave[i] = byte(i * 100 / 63)
	}
	media := func(t *testing.T, msg *waE2E.Message, want []byte) {
		t.Helper()
		got, err := e.net.MediaOf(msg)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("the recipient's media: %d bytes, %v; want %d bytes", len(got), err, len(want))
		}
	}
	reserved := NewMessageID()
	tests := []struct {
		name  string
		out   Outgoing
		check func(t *testing.T, msg *waE2E.Message)
		data  map[string]any // of outbound-message.upsert
	}{
		{"text with a reserved id", Outgoing{ID: reserved, Type: "text", Text: "plain"},
			func(t *testing.T, msg *waE2E.Message) {
				if msg.GetConversation() != "plain" {
					t.Errorf("got %v", msg)
				}
			},
			map[string]any{"id": reserved, "type": "text", "text": "plain", "quotedId": nil, "mentions": nil, "caption": nil}},
		{"text with a mention and a quote", Outgoing{Type: "text", Text: "hi @" + peer2, Mentions: []types.JID{phoneJID(peer2)},
			Quoted: &Quote{ID: first.ID, Sender: phoneJID(phone), Chat: to, Text: "hello"}},
			func(t *testing.T, msg *waE2E.Message) {
				x := msg.GetExtendedTextMessage()
				ci := x.GetContextInfo()
				if x.GetText() != "hi @"+peer2 || !slices.Equal(ci.GetMentionedJID(), []string{phoneJID(peer2).String()}) ||
					ci.GetStanzaID() != first.ID || ci.GetParticipant() != phoneJID(phone).String() ||
					ci.GetQuotedMessage().GetConversation() != "hello" || ci.RemoteJID != nil {
					t.Errorf("got %v", msg)
				}
			},
			map[string]any{"type": "text", "text": "hi @" + peer2, "quotedId": first.ID, "mentions": []string{phoneJID(peer2).String()}}},
		{"image", Outgoing{Type: "image", Caption: "a dot", Media: &Media{Data: pic, Mimetype: "image/png", Width: 2, Height: 2, Thumbnail: []byte{0xff, 0xd8}}},
			func(t *testing.T, msg *waE2E.Message) {
				img := msg.GetImageMessage()
				if img.GetCaption() != "a dot" || img.GetMimetype() != "image/png" || img.GetWidth() != 2 || img.GetHeight() != 2 ||
					!bytes.Equal(img.GetJPEGThumbnail(), []byte{0xff, 0xd8}) {
					t.Errorf("got %v", msg)
				}
				media(t, msg, pic)
			},
			map[string]any{"type": "image", "caption": "a dot", "mimetype": "image/png", "size": uint64(len(pic)), "text": nil}},
		{"video as GIF", Outgoing{Type: "video", GIFPlayback: true, Media: &Media{Data: doc, Mimetype: "video/mp4", Seconds: 3}},
			func(t *testing.T, msg *waE2E.Message) {
				v := msg.GetVideoMessage()
				if !v.GetGifPlayback() || v.GetSeconds() != 3 || v.GetMimetype() != "video/mp4" {
					t.Errorf("got %v", msg)
				}
				media(t, msg, doc)
			},
			map[string]any{"type": "video", "mimetype": "video/mp4"}},
		{"document", Outgoing{Type: "document", Caption: "the report", Media: &Media{Data: doc, Mimetype: "application/pdf", FileName: "report.pdf"}},
			func(t *testing.T, msg *waE2E.Message) {
				d := msg.GetDocumentMessage()
				if d.GetFileName() != "report.pdf" || d.GetTitle() != "report.pdf" || d.GetCaption() != "the report" || d.GetMimetype() != "application/pdf" {
					t.Errorf("got %v", msg)
				}
				media(t, msg, doc)
			},
			map[string]any{"type": "document", "fileName": "report.pdf", "caption": "the report", "size": uint64(len(doc))}},
		{"voice note", Outgoing{Type: "audio", VoiceNote: true, Media: &Media{Data: ogg, Mimetype: "audio/ogg", Seconds: 7, Waveform: wave}},
			func(t *testing.T, msg *waE2E.Message) {
				a := msg.GetAudioMessage()
				if !a.GetPTT() || a.GetSeconds() != 7 || !bytes.Equal(a.GetWaveform(), wave) || a.GetMimetype() != voiceNoteMimetype {
					t.Errorf("got %v", msg)
				}
				media(t, msg, ogg)
			},
			map[string]any{"type": "voice", "mimetype": voiceNoteMimetype}},
		{"audio", Outgoing{Type: "audio", Media: &Media{Data: ogg, Mimetype: "audio/mpeg", Seconds: 9}},
			func(t *testing.T, msg *waE2E.Message) {
				a := msg.GetAudioMessage()
				if a.GetPTT() || a.GetSeconds() != 9 || a.GetMimetype() != "audio/mpeg" || a.Waveform != nil {
					t.Errorf("got %v", msg)
				}
				media(t, msg, ogg)
			},
			map[string]any{"type": "audio", "mimetype": "audio/mpeg"}},
		{"location", Outgoing{Type: "location", Latitude: 52.5163, Longitude: 13.3777, Name: "Brandenburger Tor", Address: "Pariser Platz, Berlin"},
			func(t *testing.T, msg *waE2E.Message) {
				l := msg.GetLocationMessage()
				if l.GetDegreesLatitude() != 52.5163 || l.GetDegreesLongitude() != 13.3777 || l.GetName() != "Brandenburger Tor" || l.GetAddress() != "Pariser Platz, Berlin" {
					t.Errorf("got %v", msg)
				}
			},
			map[string]any{"type": "location", "latitude": 52.5163, "longitude": 13.3777, "name": "Brandenburger Tor", "address": "Pariser Platz, Berlin", "size": nil}},
		{"contact", Outgoing{Type: "contact", ContactName: "Ada Lovelace", VCard: VCard(peer2, "Ada", "Lovelace")},
			func(t *testing.T, msg *waE2E.Message) {
				c := msg.GetContactMessage()
				if c.GetDisplayName() != "Ada Lovelace" || !strings.Contains(c.GetVcard(), "waid="+peer2+":") {
					t.Errorf("got %v", msg)
				}
			},
			map[string]any{"type": "contact", "name": "Ada Lovelace", "vcard": VCard(peer2, "Ada", "Lovelace")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := tt.out
			out.To = to
			sent, err := m.Send(ctx, "s1", out)
			if err != nil {
				t.Fatal(err)
			}
			if out.ID != "" && sent.ID != out.ID {
				t.Errorf("sent as %s, want the reserved id %s", sent.ID, out.ID)
			}
			r := e.inboxMessage(peer, sent.ID)
			if r.Chat != phoneJID(phone) {
				t.Errorf("arrived in chat %s", r.Chat)
			}
			tt.check(t, r.Message)

			up, at := e.event("s1", KindOutboundMessage, sent.ID)
			rec := up.Message
			if rec == nil || rec.ID != sent.ID || rec.Chat != to.String() || rec.Sender != phoneJID(phone).String() || !rec.FromMe ||
				rec.Type != tt.data["type"] || !rec.Timestamp.Equal(sent.Timestamp) {
				t.Errorf("record %+v", rec)
			}
			want := map[string]any{
				"id": sent.ID, "chat": to.String(), "sender": phoneJID(phone).String(), "senderPhone": phone, "fromMe": true,
				"isGroup": false, "timestamp": sent.Timestamp.UTC().Format("2006-01-02T15:04:05.000Z"),
			}
			wantData(t, "outbound-message.upsert", up.Data, want)
			wantData(t, "outbound-message.upsert", up.Data, tt.data)
			if lid, _ := up.Data["senderLid"].(string); !strings.HasSuffix(lid, "@lid") {
				t.Errorf("senderLid %v", up.Data["senderLid"])
			}
			res, after := e.event("s1", KindMessagesSend, sent.ID)
			wantData(t, "messages.send", res.Data, map[string]any{"chat": to.String(), "status": "sent", "timestamp": want["timestamp"]})
			if after < at {
				t.Errorf("messages.send (#%d) before outbound-message.upsert (#%d)", after, at)
			}
		})
	}

	t.Run("not on WhatsApp", func(t *testing.T) {
		before := len(e.net.Inbox(peer))
		id := NewMessageID()
		_, err := m.Send(ctx, "s1", Outgoing{ID: id, To: phoneJID(peerNoWA), Type: "text", Text: "anyone?"})
		wantFault(t, err, fault.WhatsAppRefused, "number "+peerNoWA+" is not on WhatsApp")
		failed, _ := e.event("s1", KindMessagesSend, id)
		wantData(t, "messages.send", failed.Data, map[string]any{"status": "failed", "error": "number " + peerNoWA + " is not on WhatsApp"})
		for _, ev := range e.pub.events("s1") {
			if ev.Kind == KindOutboundMessage && ev.Data["id"] == id {
				t.Error("outbound-message.upsert of a message that was not sent")
			}
		}
		if len(e.net.Inbox(peerNoWA)) != 0 || len(e.net.Inbox(peer)) != before {
			t.Error("something was sent")
		}
	})

	t.Run("group", func(t *testing.T) {
		g, err := m.CreateGroup(ctx, "s1", "Sends", "", []types.JID{phoneJID(peer), phoneJID(peer2)})
		if err != nil {
			t.Fatal(err)
		}
		sent, err := m.Send(ctx, "s1", Outgoing{To: g.JID, Type: "text", Text: "hello all"})
		if err != nil {
			t.Fatal(err)
		}
		for _, member := range []string{peer, peer2} {
			if r := e.inboxMessage(member, sent.ID); r.Chat != g.JID || r.Message.GetConversation() != "hello all" {
				t.Errorf("%s received %+v", member, r)
			}
		}
		up, _ := e.event("s1", KindOutboundMessage, sent.ID)
		wantData(t, "outbound-message.upsert", up.Data, map[string]any{"chat": g.JID.String(), "isGroup": true, "sender": phoneJID(phone).String()})

		// Announcement group where the account is no longer an admin.
		yes := true
		if _, err := m.UpdateGroup(ctx, "s1", g.JID, GroupUpdate{OnlyAdminsCanPost: &yes}); err != nil {
			t.Fatal(err)
		}
		if err := e.net.SetRole(g.JID, phone, wafake.RoleMember); err != nil {
			t.Fatal(err)
		}
		_, err = m.Send(ctx, "s1", Outgoing{To: g.JID, Type: "text", Text: "may I?"})
		wantFault(t, err, fault.WhatsAppRefused, "only admins can send messages to group "+g.JID.String())
	})

	t.Run("revoke", func(t *testing.T) {
		sent, err := m.Send(ctx, "s1", Outgoing{To: to, Type: "text", Text: "oops"})
		if err != nil {
			t.Fatal(err)
		}
		rv, err := m.Revoke(ctx, "s1", to, sent.ID)
		if err != nil {
			t.Fatal(err)
		}
		p := e.inboxMessage(peer, rv.ID).Message.GetProtocolMessage()
		if p.GetType() != waE2E.ProtocolMessage_REVOKE || p.GetKey().GetID() != sent.ID || !p.GetKey().GetFromMe() {
			t.Errorf("the contact received %v", p)
		}
		upd, _ := e.event("s1", KindMessagesUpdate, sent.ID)
		wantData(t, "messages.update", upd.Data, map[string]any{"chat": to.String(), "status": "revoked"})
		up, _ := e.event("s1", KindOutboundMessage, rv.ID)
		wantData(t, "outbound-message.upsert", up.Data, map[string]any{"type": "revoke", "quotedId": sent.ID})
	})

	t.Run("invalid", func(t *testing.T) {
		wantFault(t, errOfSend(m.Send(ctx, "s1", Outgoing{To: to, Type: "image"})), fault.Invalid, "empty")
		wantFault(t, errOfSend(m.Send(ctx, "s1", Outgoing{To: to, Type: "sticker", Text: "x"})), fault.Invalid, "sticker")
		wantFault(t, errOfSend(m.Send(ctx, "s1", Outgoing{To: to, Type: "text", Text: " "})), fault.Invalid, "text")
	})

	t.Run("disconnected", func(t *testing.T) {
		if err := m.Disconnect("s1"); err != nil {
			t.Fatal(err)
		}
		wantFault(t, errOfSend(m.Send(ctx, "s1", Outgoing{To: to, Type: "text", Text: "late"})), fault.NotConnected, "DISCONNECTED")
		wantFault(t, errOfSend(m.Revoke(ctx, "s1", to, first.ID)), fault.NotConnected, "DISCONNECTED")
		wantFault(t, errOfSend(m.Send(ctx, "never", Outgoing{To: to, Type: "text", Text: "x"})), fault.NotConnected)
	})
}

func errOfSend(_ Sent, err error) error { return err }

func TestVCard(t *testing.T) {
	t.Parallel()
	tests := []struct {
		phone, first, last string
		want               []string
	}{
		{"491701234567", "Ada", "Lovelace", []string{"BEGIN:VCARD\nVERSION:3.0\n", "\nN:Lovelace;Ada;;;\n", "\nFN:Ada Lovelace\n",
			"\nTEL;type=CELL;type=VOICE;waid=491701234567:+491701234567\n", "\nEND:VCARD"}},
		{"+491701234567", "Smith, Jr; \\ the\nthird", "", []string{"\nN:;Smith\\, Jr\\; \\\\ the\\nthird;;;\n", "waid=491701234567:+491701234567"}},
		{"491701234567", "", "", []string{"\nFN:+491701234567\n"}},
	}
	for _, tt := range tests {
		got := VCard(tt.phone, tt.first, tt.last)
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("VCard(%q, %q, %q) = %q, missing %q", tt.phone, tt.first, tt.last, got, w)
			}
		}
	}
}

func TestNewMessageID(t *testing.T) {
	t.Parallel()
	a, b := NewMessageID(), NewMessageID()
	if a == b || !strings.HasPrefix(a, "3EB0") || len(a) != 22 || strings.ToUpper(a) != a {
		t.Errorf("ids %q, %q", a, b)
	}
}

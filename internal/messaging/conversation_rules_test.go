package messaging

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp"
)

// TestEmojiRule: a reaction is one emoji as a person sees it (one
// grapheme cluster that is an emoji, however many code points), or "" to
// take it back.
func TestEmojiRule(t *testing.T) {
	for _, tt := range []struct {
		name, emoji string
		ok          bool
	}{
		{"empty: the reaction taken back", "", true},
		{"thumbs up", "👍", true},
		{"with a skin tone", "👍🏽", true},
		{"with VS16", "❤️", true},
		{"text-style pictograph", "©", true},
		{"ZWJ family", "👨‍👩‍👧‍👦", true},
		{"ZWJ with VS16 and a skin tone", "👩🏻‍❤️‍💋‍👨🏼", true},
		{"ZWJ handshake with two skin tones", "🧑🏽‍🤝‍🧑🏻", true},
		{"rainbow flag", "🏳️‍🌈", true},
		{"country flag", "🇩🇪", true},
		{"subdivision flag (tags)", "🏴󠁧󠁢󠁥󠁮󠁧󠁿", true},
		{"keycap", "1️⃣", true},
		{"keycap without VS16", "#⃣", true},

		{"two emoji", "👍👍", false},
		{"two flags", "🇩🇪🇫🇷", false},
		{"an emoji and a skin tone apart", "👍🏽🏽", false},
		{"a skin tone alone", "🏽", false},
		{"one regional indicator", "🇩", false},
		{"three regional indicators", "🇩🇪🇫", false},
		{"a ZWJ at the end", "👍‍", false},
		{"a ZWJ at the start", "‍👍", false},
		{"a ZWJ to a letter", "👍‍a", false},
		{"tags without their end", "🏴󠁧󠁢", false},
		{"a letter", "a", false},
		{"a digit", "1", false},
		{"a hash", "#", false},
		{"a space", " ", false},
		{"an emoji and a space", "👍 ", false},
		{"a word and an emoji", "ok👍", false},
		{"a control before", "👍", false},
		{"a combining accent", "👍́", false},
		{"a CJK letter", "一", false},
		{"a currency sign", "€", false},
		{"invalid UTF-8", "ÿ", false},
		{"longer than any emoji", "👨‍👩‍👧‍👦‍👨‍👩‍👧‍👦", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := checkEmoji(tt.emoji)
			if tt.ok {
				if err != nil {
					t.Fatalf("%q refused: %v", tt.emoji, err)
				}
				return
			}
			wantFault(t, err, fault.Invalid, "emoji", "emoji must be one emoji, or empty to take the reaction back")
		})
	}
}

// TestReactRules: a reaction goes to a stored message that was sent or
// received, never to one that was not sent.
func TestReactRules(t *testing.T) {
	e := newRulesEnv(t)
	ctx := context.Background()
	for _, tt := range []struct {
		name, id, emoji string
		code            fault.Code
		field           string
		want            string
	}{
		{"not an emoji", "RECEIVED", "yes", fault.Invalid, "emoji", "emoji must be one emoji"},
		{"unknown message", "NOPE", "👍", fault.NotFound, "", "message NOPE not found"},
		{"scheduled message", "SCHEDULED", "👍", fault.Conflict, "", "message SCHEDULED was not sent (status scheduled): there is nothing to react to"},
		{"failed message", "FAILED", "👍", fault.Conflict, "", "(status failed)"},
		{"received", "RECEIVED", "👍", "", "", ""},
		{"own, taken back", "SENTNOW", "", "", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.s.React(ctx, "s1", tt.id, tt.emoji, "")
			if tt.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantFault(t, err, tt.code, tt.field, tt.want)
		})
	}
	if got := e.ops.ran(); !slices.Equal(got, []string{whatsapp.OpReact().Name(), whatsapp.OpReact().Name()}) {
		t.Errorf("ran %v, want two reactions", got)
	}
}

// TestEditRules: an edit replaces the text or caption of a message this
// account sent within WhatsApp's 15 minutes.
func TestEditRules(t *testing.T) {
	e := newRulesEnv(t)
	ctx := context.Background()
	for _, tt := range []struct {
		name, id, text string
		code           fault.Code
		field          string
		want           string
	}{
		{"empty text", "SENTNOW", " ", fault.Invalid, "text", "text must not be empty"},
		{"unknown message", "NOPE", "x", fault.NotFound, "", "message NOPE not found"},
		{"received message", "RECEIVED", "x", fault.WhatsAppRefused, "", "message RECEIVED was received, not sent by this account"},
		{"not sent yet", "SCHEDULED", "x", fault.Conflict, "", "message SCHEDULED is scheduled: only a sent message can be edited"},
		{"a location", "SENTLOC", "x", fault.WhatsAppRefused, "", "message SENTLOC is a location: WhatsApp edits texts and the captions of images, videos and documents"},
		{"caption past its limit", "SENTIMAGE", strings.Repeat("a", maxCaptionLen+1), fault.Invalid, "text", "text must be at most 1024 characters (got 1025)"},
		{"text past its limit", "SENTNOW", strings.Repeat("a", maxTextLen+1), fault.Invalid, "text", "text must be at most 65536 characters"},
		{"too old", "SENTOLD", "x", fault.WhatsAppRefused, "", "message SENTOLD is too old to edit: WhatsApp allows edits within 15m0s of sending, and it was sent 16m0s ago"},
		{"within the window", "SENTEDGE", "x", "", "", ""},
		{"a text longer than a caption", "SENTNOW", strings.Repeat("a", maxCaptionLen+1), "", "", ""},
		{"a caption", "SENTIMAGE", "new caption", "", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.s.Edit(ctx, "s1", tt.id, tt.text, "")
			if tt.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantFault(t, err, tt.code, tt.field, tt.want)
		})
	}
	t.Run("the window is the clock's", func(t *testing.T) {
		e.now = e.now.Add(2 * time.Minute) // SENTEDGE is now 16 minutes old
		_, err := e.s.Edit(ctx, "s1", "SENTEDGE", "x", "")
		wantFault(t, err, fault.WhatsAppRefused, "", "too old to edit")
	})
}

// TestPresenceRules: the account's own presence has no chat; typing,
// recording and paused need one.
func TestPresenceRules(t *testing.T) {
	e := newRulesEnv(t)
	ctx := context.Background()
	for _, tt := range []struct {
		name, state string
		chat        *string
		field, want string
	}{
		{"unknown state", "TYPING", nil, "state", `state must be one of AVAILABLE, UNAVAILABLE, COMPOSING, RECORDING, PAUSED; got "TYPING"`},
		{"available in a chat", "AVAILABLE", ptr(peerNumber), "chat", "chat goes with COMPOSING, RECORDING and PAUSED only"},
		{"unavailable in a chat", "UNAVAILABLE", ptr(peerNumber), "chat", "chat goes with COMPOSING, RECORDING and PAUSED only"},
		{"composing nowhere", "COMPOSING", nil, "chat", "chat is required with COMPOSING"},
		{"recording in a blank chat", "RECORDING", ptr(" "), "chat", "chat is required with RECORDING"},
		{"paused in a national number", "PAUSED", ptr("0155 50654321"), "chat", "chat: use the international format"},
		{"available", "AVAILABLE", nil, "", ""},
		{"available, blank chat", "available", ptr(""), "", ""},
		{"composing, written loosely", " composing ", ptr(peerNumber), "", ""},
		{"paused in a group", "PAUSED", ptr(groupJID), "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := e.s.SendPresence(ctx, "s1", tt.state, tt.chat)
			if tt.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantFault(t, err, fault.Invalid, tt.field, tt.want)
		})
	}
	t.Run("subscribe to a group", func(t *testing.T) {
		wantFault(t, e.s.SubscribePresence(ctx, "s1", groupJID), fault.Invalid, "chat", "chat must be a user, not a group")
	})
	t.Run("subscribe to a person", func(t *testing.T) {
		if err := e.s.SubscribePresence(ctx, "s1", peerNumber); err != nil {
			t.Fatal(err)
		}
	})
}

// TestRejectCallRules: a call is named by its event's id and caller.
func TestRejectCallRules(t *testing.T) {
	e := newRulesEnv(t)
	ctx := context.Background()
	for _, tt := range []struct {
		name, callID, from string
		field, want        string
	}{
		{"no call id", "", peerNumber, "callId", "callId must be the id of a call event: 1 to 64 letters and digits"},
		{"call id too long", strings.Repeat("A", maxCallIDLen+1), peerNumber, "callId", "1 to 64 letters and digits"},
		{"call id with a dash", "ABC-123", peerNumber, "callId", `(got "ABC-123")`},
		{"caller a group", "ABC123", groupJID, "from", "from must be the caller, a user"},
		{"caller national", "ABC123", "0155 50654321", "from", "from: use the international format"},
		{"caller empty", "ABC123", "", "from", "from must not be empty"},
		{"a call", strings.Repeat("F", 32), peerNumber, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := e.s.RejectCall(ctx, "s1", tt.callID, tt.from)
			if tt.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantFault(t, err, fault.Invalid, tt.field, tt.want)
		})
	}
}

// TestMarkReadRules: read receipts go for received messages of the chat;
// a message not stored is taken as the contact's in a direct chat only.
func TestMarkReadRules(t *testing.T) {
	e := newRulesEnv(t)
	ctx := context.Background()
	many := make([]string, MaxReadIDs+1)
	for i := range many {
		many[i] = "ID"
	}
	for _, tt := range []struct {
		name, chat string
		ids        []string
		code       fault.Code
		field      string
		want       string
	}{
		{"chat national", "0155 50654321", nil, fault.Invalid, "chat", "chat: use the international format"},
		{"too many ids", peerNumber, many, fault.Invalid, "messageIds", "messageIds must name at most 1000 messages (got 1001)"},
		{"blank id", peerNumber, []string{"RECEIVED", " "}, fault.Invalid, "messageIds[1]", "messageIds[1] must not be empty"},
		{"id of 16 KiB", peerNumber, []string{"RECEIVED", strings.Repeat("A", 16<<10)}, fault.Invalid, "messageIds[1]", "messageIds[1] must be at most 128 bytes (got 16384)"},
		{"id one byte too long", peerNumber, []string{strings.Repeat("é", MaxMessageIDLen/2) + "A"}, fault.Invalid, "messageIds[0]", "messageIds[0] must be at most 128 bytes (got 129)"},
		{"id of 128 bytes", peerNumber, []string{strings.Repeat("A", MaxMessageIDLen)}, "", "", ""},
		{"own message", peerNumber, []string{"SENTNOW"}, fault.Invalid, "messageIds[0]", "messageIds[0]: message SENTNOW was sent by this account; only received messages are marked read"},
		{"another chat's", peerNumber, []string{"RECEIVED", "GROUPMSG"}, fault.Invalid, "messageIds[1]", "message GROUPMSG is a message of another chat (" + groupJID + ")"},
		{"unknown in a group", groupJID, []string{"NOPE"}, fault.NotFound, "", "messageIds[0]: message NOPE of group " + groupJID + " is not stored, so its sender is unknown"},
		{"received", peerNumber, []string{"RECEIVED", "RECEIVED"}, "", "", ""},
		{"unknown in a direct chat", peerNumber, []string{"NOT-STORED"}, "", "", ""},
		{"every unread", peerNumber, nil, "", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := e.s.MarkRead(ctx, "s1", tt.chat, tt.ids)
			if tt.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantFault(t, err, tt.code, tt.field, tt.want)
		})
	}
}

// TestIdempotencyKeyRule: a key is 1-255 printable ASCII characters.
func TestIdempotencyKeyRule(t *testing.T) {
	for _, tt := range []struct {
		name, key, want string
	}{
		{"a UUID", "0b8f5c2e-6c1d-4f5e-9a51-3f1b2a7c9d10", ""},
		{"255 characters", strings.Repeat("k", maxKeyLen), ""},
		{"256 characters", strings.Repeat("k", maxKeyLen+1), "idempotencyKey must be at most 255 characters (got 256)"},
		{"a newline", "key\n", "idempotencyKey must be printable ASCII (a UUID, say); byte 3 is not"},
		{"not ASCII", "schlüssel", "idempotencyKey must be printable ASCII"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := checkKey(tt.key)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantFault(t, err, fault.Invalid, "idempotencyKey", tt.want)
		})
	}
}

// TestFingerprint: two requests have one fingerprint exactly when they
// ask for the same send: every field of a Request counts but the key.
func TestFingerprint(t *testing.T) {
	base := Request{Type: TypeText, Number: peerNumber, Text: "hi"}
	fp := func(r Request) string {
		t.Helper()
		s, err := fingerprint(r)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	want := fp(base)
	if again := fp(Request{Type: TypeText, Number: peerNumber, Text: "hi", IdempotencyKey: "k"}); again != want {
		t.Error("the key changes the fingerprint")
	}
	// Each field of Request set to a value of its own (reflection, so a
	// field added later is covered) changes the fingerprint.
	typ := reflect.TypeFor[Request]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Name == "IdempotencyKey" {
			continue
		}
		t.Run(f.Name, func(t *testing.T) {
			r := base
			v := reflect.ValueOf(&r).Elem().Field(i)
			set(t, v)
			if fp(r) == want {
				t.Errorf("a request differing in %s has the same fingerprint", f.Name)
			}
		})
	}
}

// set gives v a value other than the base request's.
func set(t *testing.T, v reflect.Value) {
	t.Helper()
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Slice:
		v.Set(reflect.Append(reflect.MakeSlice(v.Type(), 0, 1), reflect.New(v.Type().Elem()).Elem()))
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		if p.Elem().Kind() != reflect.Struct {
			set(t, p.Elem())
		} else {
			set(t, p.Elem().Field(0))
		}
		v.Set(p)
	case reflect.Int, reflect.Float64:
		if v.Kind() == reflect.Int {
			v.SetInt(v.Int() + 1)
		} else {
			v.SetFloat(v.Float() + 1)
		}
	default:
		t.Fatalf("no value for a field of kind %s", v.Kind())
	}
}

// TestSameNode: a key held by an earlier run of this node is its own.
func TestSameNode(t *testing.T) {
	a, b := newInstance("n1"), newInstance("n1")
	if a == b || !sameNode(a, b) || sameNode(a, newInstance("n2")) || !strings.HasPrefix(a, "n1/") {
		t.Errorf("instances %q %q", a, b)
	}
}

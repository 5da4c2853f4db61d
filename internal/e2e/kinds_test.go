package e2e

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/whatsapp"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// The numbers of TestEveryKindStored: the account, and contacts and
// groups set up before it links.
const (
	kindsPhone     = "4915550030001"
	kindsBlocked   = "4915550030002" // on the block list when the device links
	kindsGroupHost = "4915550030003" // created a group with the account in it before it linked
)

// TestEveryKindStored: for every kind of docs/events.md, the simulated
// network sends the stanza that produces it (or the API does what derives
// it) to one linked session, and the event is read back from the stored
// log through the GraphQL events query: the envelope (id, a seq that
// continues the log without a gap, the session, occurredAt), the kind, and
// the data with the values the test controls. Each row is a subtest named
// by the kind and sets up what it needs itself, so one row runs alone:
// go test -run 'TestEveryKindStored/groups.update' ./internal/e2e/
func TestEveryKindStored(t *testing.T) {
	t.Parallel()
	// Media downloaded on demand only: the media-update row expires a
	// media the keeper would otherwise have kept as it arrived.
	cfg := apptest.SandboxConfig(t)
	cfg.Media.Kind = config.MediaNone
	s := apptest.Start(t, cfg)
	n := s.Network(t)
	// What the login finds: a block list and a group the account is in.
	if err := n.SetBlocklist(kindsPhone, []string{kindsBlocked}); err != nil {
		t.Fatal(err)
	}
	listed, err := n.CreateGroup(kindsGroupHost, "Vorher", kindsPhone)
	if err != nil {
		t.Fatal(err)
	}
	sess := s.LinkSession(t, kindsPhone)
	dev, err := whatsapp.ParseJID(sess.JID)
	if err != nil {
		t.Fatal(err)
	}
	k := &kindsEnv{s: s, n: n, sess: sess, dev: dev, listed: listed}

	rows := kindRows()
	var covered []string
	for _, r := range rows {
		covered = append(covered, r.kind)
	}
	var all []string
	for _, kind := range append(events.Selectable(), events.WebhookTest) {
		all = append(all, string(kind))
	}
	slices.Sort(covered)
	slices.Sort(all)
	if !slices.Equal(covered, all) {
		t.Fatalf("the table covers %v, the kinds are %v", covered, all)
	}

	for _, r := range rows {
		t.Run(r.kind, func(t *testing.T) {
			k.begin(t)
			r.run(t, k)
			if !slices.Contains(k.asserted, r.kind) {
				t.Errorf("the row asserted no stored %s", r.kind)
			}
		})
	}
}

// kindRow is one kind: run drives what produces it and asserts the
// stored events with kindsEnv.stored.
type kindRow struct {
	kind string
	run  func(t *testing.T, k *kindsEnv)
}

func kindRows() []kindRow {
	return slices.Concat(messageRows(), chatRows(), accountRows())
}

// kindsEnv is the linked session the rows share, and how far its log was
// read and checked.
type kindsEnv struct {
	s      *apptest.Server
	n      *wafake.Network
	sess   apptest.Session
	dev    whatsapp.JID
	listed whatsapp.JID // the group created before the login

	checkedID  string // the last event of the log checked so far ("" none)
	checkedSeq int64
	checkedAt  string
	log        map[int64]gqlEvent // every event checked, by seq

	rowFrom  string          // the log's last event when the row began
	used     map[string]bool // events a row matched already
	asserted []string        // the kinds the row asserted
	synced   bool            // the device synced the phone's app state
}

// begin starts a row: its events are those after the log's end now.
func (k *kindsEnv) begin(t *testing.T) {
	t.Helper()
	k.sync(t)
	k.rowFrom = k.checkedID
	k.used = map[string]bool{}
	k.asserted = nil
}

// fromLink makes the row look for its events from the start of the log:
// for kinds the linking itself produced.
func (k *kindsEnv) fromLink() { k.rowFrom = "" }

const eventsQuery = `query($s: ID!, $k: [EventKind!], $a: String, $f: Int) {
  events(sessionId: $s, kinds: $k, after: $a, first: $f) { edges { cursor node { id seq kind sessionId occurredAt data } } pageInfo { hasNextPage endCursor } }
}`

// page reads the stored events of the session after cursor after ("" from
// the start), of kinds (nil: all), every page.
func (k *kindsEnv) page(t *testing.T, kinds []string, after string) []gqlEvent {
	t.Helper()
	var out []gqlEvent
	for {
		vars := map[string]any{"s": k.sess.ID, "f": 500}
		if kinds != nil {
			vars["k"] = kinds
		}
		if after != "" {
			vars["a"] = after
		}
		var p struct {
			Events struct {
				Edges []struct {
					Cursor string
					Node   gqlEvent
				}
				PageInfo struct {
					HasNextPage bool
					EndCursor   *string
				}
			}
		}
		k.s.MustGraphQL(t, apptest.AdminToken, eventsQuery, vars, &p)
		for _, e := range p.Events.Edges {
			if e.Cursor != e.Node.ID {
				t.Errorf("cursor %s of event %s", e.Cursor, e.Node.ID)
			}
			out = append(out, e.Node)
		}
		if !p.Events.PageInfo.HasNextPage {
			return out
		}
		after = *p.Events.PageInfo.EndCursor
	}
}

var (
	eventID      = regexp.MustCompile(`^evt_[0-9A-HJKMNP-TV-Z]{26}$`)
	eventInstant = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)
	knownEnums   = func() map[string]bool {
		m := map[string]bool{events.WebhookTest.Enum(): true}
		for _, kind := range events.Selectable() {
			m[kind.Enum()] = true
		}
		return m
	}()
)

// sync reads the log from the last event checked to its end and checks
// each event's envelope: an evt_ id, the seq after the one before it, the
// session, a known kind, occurredAt in milliseconds, never earlier than
// the event before.
func (k *kindsEnv) sync(t *testing.T) {
	t.Helper()
	if k.log == nil {
		k.log = map[int64]gqlEvent{}
	}
	for _, e := range k.page(t, nil, k.checkedID) {
		if e.Seq != k.checkedSeq+1 {
			t.Fatalf("event %s has seq %d after %d: the log has a gap or a repeat", e.ID, e.Seq, k.checkedSeq)
		}
		if !eventID.MatchString(e.ID) || e.SessionID != k.sess.ID || !knownEnums[e.Kind] ||
			!eventInstant.MatchString(e.OccurredAt) || e.OccurredAt < k.checkedAt {
			t.Errorf("envelope of seq %d: id %q session %q kind %q occurredAt %q (the one before %q)",
				e.Seq, e.ID, e.SessionID, e.Kind, e.OccurredAt, k.checkedAt)
		}
		k.checkedID, k.checkedSeq, k.checkedAt = e.ID, e.Seq, e.OccurredAt
		k.log[e.Seq] = e
	}
}

// want is one event a row expects: its kind, the data it must have
// exactly (every key, no other), and the keys of data that tell it from
// other events of the kind (nil: any event of the kind).
type want struct {
	kind string
	key  []string
	data map[string]any
}

// ev is a want of kind with data, told apart by the values of key.
func ev(kind string, data map[string]any, key ...string) want {
	return want{kind: kind, key: key, data: data}
}

// matcher stands for a value the test does not control in want.data.
type matcher struct {
	what string
	ok   func(v any) bool
}

// recent is WhatsApp's time of now (the simulated network runs on the
// wall clock): a UTC timestamp in milliseconds within a minute of it.
var recent = matcher{"a time of now", func(v any) bool {
	s, _ := v.(string)
	ts, err := time.Parse(time.RFC3339, s)
	return err == nil && eventInstant.MatchString(s) && time.Since(ts).Abs() < time.Minute
}}

// nonEmpty is any string but "".
var nonEmpty = matcher{"a string", func(v any) bool { s, _ := v.(string); return s != "" }}

// stored waits until the log holds, after the row began, an event for each
// of wants, in that order (each after the one before), and checks each
// one's data exactly. It returns the events.
func (k *kindsEnv) stored(t *testing.T, wants ...want) []gqlEvent {
	t.Helper()
	var kinds []string
	for _, w := range wants {
		if enum := events.Kind(w.kind).Enum(); !slices.Contains(kinds, enum) {
			kinds = append(kinds, enum)
		}
	}
	var got []gqlEvent
	deadline := time.Now().Add(20 * time.Second)
	for {
		got = k.find(t, k.page(t, kinds, k.rowFrom), wants)
		if len(got) == len(wants) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 20 s the log holds %d of the %d events wanted; the next is %s with %v; the log after the row began:\n%s",
				len(got), len(wants), wants[len(got)].kind, keyOf(wants[len(got)]), k.dump(t))
		}
		time.Sleep(20 * time.Millisecond)
	}
	k.sync(t)
	for i, e := range got {
		w := wants[i]
		k.used[e.ID] = true
		k.asserted = append(k.asserted, w.kind)
		if e.Kind != events.Kind(w.kind).Enum() {
			t.Errorf("event %s: kind %s, want %s", e.ID, e.Kind, w.kind)
		}
		// The filtered query shows the event as the whole log holds it.
		if l, ok := k.log[e.Seq]; !ok || l.ID != e.ID || !sameJSON(l.Data, e.Data) || l.OccurredAt != e.OccurredAt {
			t.Errorf("%s seq %d: the filtered query's %s differs from the log's %+v", w.kind, e.Seq, e.ID, l)
		}
		var data map[string]any
		if err := json.Unmarshal(e.Data, &data); err != nil {
			t.Fatalf("%s %s: data %s: %v", w.kind, e.ID, e.Data, err)
		}
		exactKindData(t, fmt.Sprintf("%s (seq %d)", w.kind, e.Seq), data, w.data)
	}
	return got
}

// find matches wants in order against evs: each want takes the first event
// after the previous match of its kind, not used by the row before, whose
// key values are those wanted.
func (k *kindsEnv) find(t *testing.T, evs []gqlEvent, wants []want) []gqlEvent {
	var got []gqlEvent
	var after int64
	for _, w := range wants {
		enum := events.Kind(w.kind).Enum()
		found := false
		for _, e := range evs {
			if e.Seq <= after || e.Kind != enum || k.used[e.ID] {
				continue
			}
			var data map[string]any
			if err := json.Unmarshal(e.Data, &data); err != nil {
				t.Fatalf("%s: data %s: %v", e.ID, e.Data, err)
			}
			if keysMatch(data, w) {
				got, after, found = append(got, e), e.Seq, true
				break
			}
		}
		if !found {
			return got
		}
	}
	return got
}

func keysMatch(data map[string]any, w want) bool {
	for _, key := range w.key {
		if !sameValue(data[key], w.data[key]) {
			return false
		}
	}
	return true
}

func keyOf(w want) map[string]any {
	out := map[string]any{}
	for _, key := range w.key {
		out[key] = w.data[key]
	}
	return out
}

// sameValue compares a value of stored data with a wanted one (a
// matcher, or a value compared as JSON).
func sameValue(got, want any) bool {
	if m, ok := want.(matcher); ok {
		return m.ok(got)
	}
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	return string(g) == string(w)
}

// exactKindData checks that data has exactly the keys of want, each with
// its value.
func exactKindData(t *testing.T, what string, data, want map[string]any) {
	t.Helper()
	for key := range data {
		if _, ok := want[key]; !ok {
			t.Errorf("%s: unexpected key %s in %v", what, key, data)
		}
	}
	for key, w := range want {
		g, present := data[key]
		switch {
		case !present:
			t.Errorf("%s: no key %s in %v", what, key, data)
		case !sameValue(g, w):
			gb, _ := json.Marshal(g)
			if m, ok := w.(matcher); ok {
				t.Errorf("%s: %s = %s, want %s", what, key, gb, m.what)
			} else {
				wb, _ := json.Marshal(w)
				t.Errorf("%s: %s = %s, want %s", what, key, gb, wb)
			}
		}
	}
}

// dump lists the log after the row began, for a failure's message.
func (k *kindsEnv) dump(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, e := range k.page(t, nil, k.rowFrom) {
		fmt.Fprintf(&b, "  %d %s %s\n", e.Seq, e.Kind, e.Data)
	}
	return b.String()
}

// waitAppState waits until the device fetched the app state collections
// the phone writes to: a write before that would come in the device's
// first full sync, as part of the collection's whole state rather than as
// the one change the row expects.
func (k *kindsEnv) waitAppState(t *testing.T) {
	t.Helper()
	if k.synced {
		return
	}
	deadline := time.Now().Add(20 * time.Second)
	for !k.n.AppStateSynced(k.dev) {
		if time.Now().After(deadline) {
			t.Fatal("the device did not fetch the phone's app state within 20 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	k.synced = true
}

// userJID is a user's phone JID.
func userJID(phone string) string { return phone + "@s.whatsapp.net" }

// userOf is a user's phone JID as the network takes it.
func userOf(t *testing.T, phone string) whatsapp.JID {
	t.Helper()
	j, err := whatsapp.ParseJID(userJID(phone))
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// lid is the LID the network gave account phone.
func (k *kindsEnv) lid(t *testing.T, phone string) string {
	t.Helper()
	a, ok := k.n.Account(phone)
	if !ok || a.LID.IsEmpty() {
		t.Fatalf("the network has no LID of %s", phone)
	}
	return a.LID.String()
}

// sendText sends text to number through the API and returns the message
// id and WhatsApp's time of it.
func (k *kindsEnv) sendText(t *testing.T, number, text string) (id, timestamp string) {
	t.Helper()
	var out struct {
		SendText struct{ MessageID, Timestamp string }
	}
	k.s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $in: SendTextInput!) { sendText(sessionId: $s, input: $in) { messageId timestamp } }`,
		map[string]any{"s": k.sess.ID, "in": map[string]any{"number": number, "text": text}}, &out)
	return out.SendText.MessageID, out.SendText.Timestamp
}

// messageData is an inbound- or outbound-message.upsert's data: every key
// null but those set.
func messageData(set map[string]any) map[string]any {
	d := map[string]any{
		"id": nil, "chat": nil, "sender": nil, "senderPhone": nil, "senderLid": nil, "fromMe": false, "pushName": nil,
		"timestamp": recent, "type": nil, "text": nil, "caption": nil, "fileName": nil, "mimetype": nil, "size": nil,
		"mediaUrl": nil, "latitude": nil, "longitude": nil, "name": nil, "address": nil, "vcard": nil, "quotedId": nil,
		"mentions": nil, "isGroup": false, "pollOptions": nil, "viewOnce": false,
	}
	for key, v := range set {
		d[key] = v
	}
	return d
}

// with is base with the keys of set replaced.
func with(base, set map[string]any) map[string]any {
	d := map[string]any{}
	for key, v := range base {
		d[key] = v
	}
	for key, v := range set {
		d[key] = v
	}
	return d
}

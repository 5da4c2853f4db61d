package messaging

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/metrics"
	"github.com/wagraph/wagraph/whatsapp"
)

// TestKindTable: every kind has each of its parts, and the adapter's
// builders are exactly those the kinds name: a kind whose message the
// adapter cannot build, or a builder no kind sends, fails here.
func TestKindTable(t *testing.T) {
	seen := map[string]bool{}
	var named []string
	for _, k := range KindTable() {
		t.Run(k.Name, func(t *testing.T) {
			switch {
			case k.Name == "" || seen[k.Name]:
				t.Fatalf("kind %q: empty or twice in the table", k.Name)
			case k.Mutation == "":
				t.Error("no GraphQL mutation")
			case !strings.HasPrefix(k.Route, "POST /session/{sessionId}/"):
				t.Errorf("route %q is no POST of a session's", k.Route)
			case k.prepare == nil:
				t.Error("no rules (prepare)")
			case k.Sample == nil:
				t.Fatal("no sample")
			case len(k.Builders) == 0:
				t.Error("no builder of the adapter")
			}
			seen[k.Name] = true
			for _, b := range k.Builders {
				if !slices.Contains(whatsapp.Builders(), b) {
					t.Errorf("builder %q: the adapter has none of that name (it has %v)", b, whatsapp.Builders())
				}
			}
			if typ := k.Sample().Type; !slices.Contains(k.Builders, typ) {
				t.Errorf("its sample is a %q, which is none of its builders %v", typ, k.Builders)
			}
			named = append(named, k.Builders...)
		})
	}
	for _, b := range whatsapp.Builders() {
		if !slices.Contains(named, b) {
			t.Errorf("the adapter builds %q, which no kind of send names", b)
		}
	}
}

// TestScheduledSendKeepsEverything: a send stored for later goes out as it
// went in, for every kind, through the scheduled store of a real database:
// a field the stored form forgot would be sent without it after the delay
// (a poll without options, a sticker that no longer moves, a forward no
// longer marked).
func TestScheduledSendKeepsEverything(t *testing.T) {
	ctx := context.Background()
	db := sessionDB(t)
	var mu sync.Mutex
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	k := &keptSender{}
	s := New(Options{DB: db, Sender: k, Publisher: &events{}, Now: clock})

	cases := map[string]whatsapp.Outgoing{}
	for _, kind := range KindTable() {
		cases[kind.Name] = kind.Sample()
	}
	to, _ := whatsapp.ParseJID("4915550000001@s.whatsapp.net")
	cases["poll of any number of options"] = whatsapp.Outgoing{Type: "poll", To: to, Text: "Welcher Tag?", Poll: &whatsapp.PollSpec{Options: []string{"Mo", "Di"}, Selectable: 0}}
	cases["forwarded text"] = whatsapp.Outgoing{Type: "text", To: to, Text: "hi", Forwarded: true}
	for name, out := range cases {
		t.Run(name, func(t *testing.T) {
			res, err := s.schedule(ctx, "s1", out, 10)
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			now = now.Add(time.Minute)
			mu.Unlock()
			if _, err := s.runDue(ctx); err != nil {
				t.Fatal(err)
			}
			got := k.last(t)
			out.ID = res.MessageID
			if md := out.Media; md != nil && md.Body != nil {
				// Media kept in a file (a forward's) is stored as its bytes.
				stored := *md
				data, err := io.ReadAll(io.NewSectionReader(md.Body, 0, md.Body.Size()))
				if err != nil {
					t.Fatal(err)
				}
				stored.Data, stored.Body = data, nil
				out.Media = &stored
			}
			for _, d := range differences(got, out) {
				t.Errorf("stored and sent with %s", d)
			}
		})
	}
}

// differences names each field of got that is not want's, with both.
func differences(got, want whatsapp.Outgoing) []string {
	var out []string
	g, w := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := range g.NumField() {
		if gf, wf := g.Field(i).Interface(), w.Field(i).Interface(); !reflect.DeepEqual(gf, wf) {
			out = append(out, fmt.Sprintf("%s %s, want %s", g.Type().Field(i).Name, show(gf), show(wf)))
		}
	}
	return out
}

// show is a field's value, what a pointer points at rather than where.
func show(v any) string {
	if r := reflect.ValueOf(v); r.Kind() == reflect.Pointer && !r.IsNil() {
		return fmt.Sprintf("&%+v", r.Elem().Interface())
	}
	return fmt.Sprintf("%+v", v)
}

// TestSamplesSetEveryField: every field of whatsapp.Outgoing (and of its
// media) is set in some kind's sample, so that the round trip above covers
// a field added to them.
func TestSamplesSetEveryField(t *testing.T) {
	set := map[string]bool{}
	mark := func(prefix string, v reflect.Value) {
		for i := range v.NumField() {
			if !v.Field(i).IsZero() {
				set[prefix+v.Type().Field(i).Name] = true
			}
		}
	}
	for _, k := range KindTable() {
		out := k.Sample()
		mark("", reflect.ValueOf(out))
		if out.Media != nil {
			mark("Media.", reflect.ValueOf(*out.Media))
		}
	}
	check := func(prefix string, typ reflect.Type) {
		for i := range typ.NumField() {
			name := prefix + typ.Field(i).Name
			if !set[name] && name != "ID" { // the row's id, not the payload's
				t.Errorf("no kind's sample sets %s", name)
			}
		}
	}
	check("", reflect.TypeFor[whatsapp.Outgoing]())
	check("Media.", reflect.TypeFor[whatsapp.Media]())
}

// TestScheduledSendStoredBefore: a row stored by an earlier version, whose
// stored form was a struct of its own, reads as it was meant.
func TestScheduledSendStoredBefore(t *testing.T) {
	old := `{"type":"image","to":"4915550000001@s.whatsapp.net","caption":"c","media":{"mimetype":"image/jpeg","width":2,"height":2},` +
		`"viewOnce":true,"mentions":["4915550000002@s.whatsapp.net"],` +
		`"quoted":{"ID":"Q1","Sender":"4915550000002@s.whatsapp.net","Chat":"4915550000001@s.whatsapp.net","Text":"t"},` +
		`"poll":{"options":["a","b"],"selectable":1},"vcard":"V","contactName":"N","gifPlayback":true,"forwarded":true}`
	got, err := decodeScheduled("3EB0X", []byte(old), []byte("png"))
	if err != nil {
		t.Fatal(err)
	}
	to, _ := whatsapp.ParseJID("4915550000001@s.whatsapp.net")
	other, _ := whatsapp.ParseJID("4915550000002@s.whatsapp.net")
	want := whatsapp.Outgoing{ID: "3EB0X", Type: "image", To: to, Caption: "c", ViewOnce: true, GIFPlayback: true, Forwarded: true,
		Media:    &whatsapp.Media{Data: []byte("png"), Mimetype: "image/jpeg", Width: 2, Height: 2},
		Mentions: []whatsapp.JID{other}, Quoted: &whatsapp.Quote{ID: "Q1", Sender: other, Chat: to, Text: "t"},
		Poll: &whatsapp.PollSpec{Options: []string{"a", "b"}, Selectable: 1}, VCard: "V", ContactName: "N"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read\n%+v\nwant\n%+v", got, want)
	}
}

// TestKindsCounted: every kind is a label of the metrics of sends from the
// first scrape, and its sends are observed under its name, not "unknown".
func TestKindsCounted(t *testing.T) {
	m := metrics.New(metrics.Options{Counters: metrics.NewCounters(metrics.Labels{SendKinds: Kinds(), SendOutcomes: []string{OutcomeSent}})})
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	obs := &observed{}
	s := New(Options{Observer: obs})
	for _, k := range KindTable() {
		series := fmt.Sprintf(`wagraph_sends_total{kind=%q,outcome="sent"} 0`, k.Name)
		if !strings.Contains(string(body), series) {
			t.Errorf("kind %s: the metrics lack %s", k.Name, series)
		}
		s.observe(k.Name, false, nil)
		if got := obs.take(); len(got) != 1 || got[0] != [2]string{k.Name, OutcomeSent} {
			t.Errorf("kind %s: observed as %v", k.Name, got)
		}
	}
}

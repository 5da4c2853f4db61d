package messaging

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp"
)

// keptSender keeps what it is asked to send and answers with an id.
type keptSender struct {
	mu   sync.Mutex
	sent []whatsapp.Outgoing
}

func (k *keptSender) Run(ctx context.Context, id string, c whatsapp.Call) error {
	return sendsWith(failingSender{}, k.send).Run(ctx, id, c)
}

func (k *keptSender) send(out whatsapp.Outgoing) (whatsapp.Sent, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.sent = append(k.sent, out)
	return whatsapp.Sent{ID: "SENT" + string(rune('A'+len(k.sent))), Timestamp: time.Now()}, nil
}

func (k *keptSender) last(t *testing.T) whatsapp.Outgoing {
	t.Helper()
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.sent) == 0 {
		t.Fatal("nothing was sent")
	}
	return k.sent[len(k.sent)-1]
}

func newRequestService(t *testing.T) (*Service, *keptSender) {
	t.Helper()
	ctx := context.Background()
	db := sessionDB(t)
	db.Message.Create().SetSessionID("s1").SetMessageID("QUOTED1").SetChat("4915550654321@s.whatsapp.net").
		SetSender("4915550654321@s.whatsapp.net").SetFromMe(false).SetType("text").SetText("the question").
		SetStatus("received").SetTimestamp(time.Now().UTC()).ExecX(ctx)
	k := &keptSender{}
	return New(Options{DB: db, Sender: k}), k
}

func ptr[T any](v T) *T { return &v }

// TestSendNumbers: every number field of a send takes the number as people
// write it and addresses the same account; a national number is refused
// naming the field it was given in.
func TestSendNumbers(t *testing.T) {
	s, k := newRequestService(t)
	ctx := context.Background()
	const want = "4915550654321@s.whatsapp.net"
	for _, number := range []string{"4915550654321", "+49 1555 0654321", "0049 1555 0654321", "(49) 1555-0654321", "49.1555.0654321", want} {
		t.Run("number "+number, func(t *testing.T) {
			if _, err := s.Send(ctx, "s1", Request{Type: TypeText, Number: number, Text: "hi", Mentions: []string{number}}); err != nil {
				t.Fatal(err)
			}
			out := k.last(t)
			if out.To.String() != want || len(out.Mentions) != 1 || out.Mentions[0].String() != want {
				t.Errorf("sent to %s mentioning %v, want %s", out.To, out.Mentions, want)
			}
		})
	}
	t.Run("contact card", func(t *testing.T) {
		_, err := s.Send(ctx, "s1", Request{Type: TypeContact, Number: "4915550654321",
			Contact: &Contact{PhoneNumber: "+49 (1555) 065-4321", FirstName: "Ada"}})
		if err != nil {
			t.Fatal(err)
		}
		if v := k.last(t).VCard; !strings.Contains(v, "waid=4915550654321:+4915550654321") {
			t.Errorf("vCard %q does not carry the number's digits", v)
		}
	})

	refused := []struct {
		name  string
		req   Request
		field string
		want  string
	}{
		{"national number", Request{Type: TypeText, Number: "015550654321", Text: "hi"}, "number",
			`number: use the international format: country code then number, e.g. 491551234567 (got "015550654321")`},
		{"national mention", Request{Type: TypeText, Number: "4915550654321", Text: "hi", Mentions: []string{"4915550654322", "0155 50654321"}}, "mentions[1]",
			"mentions[1]: use the international format"},
		{"national contact", Request{Type: TypeContact, Number: "4915550654321", Contact: &Contact{PhoneNumber: "01555 0654321", FirstName: "Ada"}}, "contact.phoneNumber",
			"contact.phoneNumber: use the international format"},
		{"JID in a contact card", Request{Type: TypeContact, Number: "4915550654321", Contact: &Contact{PhoneNumber: "4915550654321@s.whatsapp.net", FirstName: "Ada"}}, "contact.phoneNumber",
			"contact.phoneNumber must be a phone number, not a JID"},
		{"two servers", Request{Type: TypeText, Number: "4915550012222@s.whatsapp.net@g.us", Text: "hi"}, "number",
			"more than one '@'"},
		{"letters", Request{Type: TypeText, Number: "49 1555 CALLME", Text: "hi"}, "number",
			"number must be a phone number of 7 to 15 digits in international format"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Send(ctx, "s1", tt.req)
			if f := fault.From(err); f == nil || f.Code != fault.Invalid || f.Field != tt.field || !strings.Contains(f.Message, tt.want) {
				t.Fatalf("err %v (%+v), want a %s fault containing %q", err, f, tt.field, tt.want)
			}
		})
	}
}

// TestSendQuotedEmpty: quoted "" (what client generators send for an
// optional string they were not given) is no quote; a quoted id is looked
// up; an unknown one is refused naming quoted.
func TestSendQuotedEmpty(t *testing.T) {
	s, k := newRequestService(t)
	ctx := context.Background()
	for _, q := range []*string{nil, ptr(""), ptr("  ")} {
		if _, err := s.Send(ctx, "s1", Request{Type: TypeText, Number: "4915550654321", Text: "hi", Quoted: q}); err != nil {
			t.Fatalf("quoted %v: %v", q, err)
		}
		if out := k.last(t); out.Quoted != nil {
			t.Errorf("quoted %v: sent with quote %+v", q, out.Quoted)
		}
	}
	if _, err := s.Send(ctx, "s1", Request{Type: TypeText, Number: "4915550654321", Text: "answer", Quoted: ptr("QUOTED1")}); err != nil {
		t.Fatal(err)
	}
	if out := k.last(t); out.Quoted == nil || out.Quoted.ID != "QUOTED1" || out.Quoted.Text != "the question" {
		t.Errorf("quote %+v, want QUOTED1", out.Quoted)
	}
	_, err := s.Send(ctx, "s1", Request{Type: TypeText, Number: "4915550654321", Text: "hi", Quoted: ptr("NOPE")})
	if f := fault.From(err); f == nil || f.Code != fault.Invalid || f.Field != "quoted" || !strings.Contains(f.Message, "quoted message NOPE") {
		t.Fatalf("unknown quote: %v", err)
	}
}

package events_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/whatsapp"
)

// producedByWhatsApp pairs every Kind* constant of the WhatsApp adapter with
// the kind of this package it spells. whatsapp may not import events, so
// the two tables are kept as one by this test: a constant added, renamed or
// respelled on either side alone fails it.
var producedByWhatsApp = map[string]struct {
	adapter string
	kind    events.Kind
}{
	"KindConnectionUpdate":  {whatsapp.KindConnectionUpdate, events.ConnectionUpdate},
	"KindCredsUpdate":       {whatsapp.KindCredsUpdate, events.CredsUpdate},
	"KindInboundMessage":    {whatsapp.KindInboundMessage, events.InboundMessageUpsert},
	"KindOutboundMessage":   {whatsapp.KindOutboundMessage, events.OutboundMessageUpsert},
	"KindMessagesSend":      {whatsapp.KindMessagesSend, events.MessagesSend},
	"KindMessagesUpdate":    {whatsapp.KindMessagesUpdate, events.MessagesUpdate},
	"KindMessagesReaction":  {whatsapp.KindMessagesReaction, events.MessagesReaction},
	"KindMessageReceipt":    {whatsapp.KindMessageReceipt, events.MessageReceiptUpdate},
	"KindCall":              {whatsapp.KindCall, events.Call},
	"KindPresenceUpdate":    {whatsapp.KindPresenceUpdate, events.PresenceUpdate},
	"KindPhoneNumberShare":  {whatsapp.KindPhoneNumberShare, events.ChatsPhoneNumberShare},
	"KindHistorySet":        {whatsapp.KindHistorySet, events.MessagingHistorySet},
	"KindChatsUpsert":       {whatsapp.KindChatsUpsert, events.ChatsUpsert},
	"KindContactsUpsert":    {whatsapp.KindContactsUpsert, events.ContactsUpsert},
	"KindMediaUpdate":       {whatsapp.KindMediaUpdate, events.MessagesMediaUpdate},
	"KindBlocklistSet":      {whatsapp.KindBlocklistSet, events.BlocklistSet},
	"KindBlocklistUpdate":   {whatsapp.KindBlocklistUpdate, events.BlocklistUpdate},
	"KindChatsUpdate":       {whatsapp.KindChatsUpdate, events.ChatsUpdate},
	"KindChatsDelete":       {whatsapp.KindChatsDelete, events.ChatsDelete},
	"KindMessagesDelete":    {whatsapp.KindMessagesDelete, events.MessagesDelete},
	"KindContactsUpdate":    {whatsapp.KindContactsUpdate, events.ContactsUpdate},
	"KindGroupsUpsert":      {whatsapp.KindGroupsUpsert, events.GroupsUpsert},
	"KindGroupsUpdate":      {whatsapp.KindGroupsUpdate, events.GroupsUpdate},
	"KindGroupParticipants": {whatsapp.KindGroupParticipants, events.GroupParticipantsUpdate},
	"KindGroupJoinRequest":  {whatsapp.KindGroupJoinRequest, events.GroupJoinRequest},
	"KindLabelsEdit":        {whatsapp.KindLabelsEdit, events.LabelsEdit},
	"KindLabelsAssociation": {whatsapp.KindLabelsAssociation, events.LabelsAssociation},
}

// TestWhatsAppKinds: the adapter's Kind* constants (read from its source, so
// a new one cannot be forgotten here) are exactly the table above, and each
// spells a known kind of this package.
func TestWhatsAppKinds(t *testing.T) {
	declared := whatsAppKindConstants(t)
	if got, want := slices.Sorted(maps.Keys(declared)), slices.Sorted(maps.Keys(producedByWhatsApp)); !slices.Equal(got, want) {
		t.Fatalf("whatsapp declares the kind constants %v; this table pairs %v", got, want)
	}
	seen := map[events.Kind]string{}
	for name, p := range producedByWhatsApp {
		if declared[name] != p.adapter {
			t.Errorf("whatsapp.%s: source says %q, compiled %q", name, declared[name], p.adapter)
		}
		if string(p.kind) != p.adapter {
			t.Errorf("whatsapp.%s = %q, but it stands for events kind %q", name, p.adapter, p.kind)
		}
		if !events.Kind(p.adapter).IsKnown() {
			t.Errorf("whatsapp.%s = %q is not a kind of events.md", name, p.adapter)
		}
		if other, dup := seen[p.kind]; dup {
			t.Errorf("whatsapp.%s and whatsapp.%s both spell %q", name, other, p.kind)
		}
		seen[p.kind] = name
	}
}

// TestTimestampLayout: envelopes and the adapter's data write timestamps
// alike.
func TestTimestampLayout(t *testing.T) {
	at := time.Date(2026, 11, 22, 11, 4, 5, 123_999_999, time.FixedZone("CET", 3600))
	if got, want := at.UTC().Format(events.TimestampLayout), whatsapp.Timestamp(at); got != want {
		t.Errorf("events write %s, whatsapp writes %s", got, want)
	}
}

// whatsAppKindConstants reads the Kind* constants declared in the whatsapp
// package's source (tests excluded), name to value.
func whatsAppKindConstants(t *testing.T) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	const dir = "../../whatsapp"
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if !strings.HasPrefix(n.Name, "Kind") {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Fatalf("whatsapp.%s is not a string literal: keep the kind constants plain", n.Name)
					}
					v, _ := strconv.Unquote(lit.Value)
					out[n.Name] = v
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no Kind* constant found in ../../whatsapp: has the package moved?")
	}
	return out
}

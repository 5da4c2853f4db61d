package events_test

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/internal/events/payload"
)

// docsPath is the page receivers are written from.
const docsPath = "../../docs/events.md"

// dataTypes is what the data of each kind can be, as the producers build it
// (whatsapp's handlers, the service's own events). A kind added to the
// table of kinds without a line here fails TestDocsEveryKind.
var dataTypes = map[events.Kind][]reflect.Type{
	events.Call:                    {reflect.TypeFor[payload.Call]()},
	events.BlocklistSet:            {reflect.TypeFor[payload.Blocklist]()},
	events.BlocklistUpdate:         {reflect.TypeFor[payload.BlocklistChange]()},
	events.ChatsDelete:             {reflect.TypeFor[payload.ChatDelete]()},
	events.ChatsPhoneNumberShare:   {reflect.TypeFor[payload.PhoneNumberShare]()},
	events.ChatsUpdate:             {reflect.TypeFor[payload.ChatUpdate]()},
	events.ChatsUpsert:             {reflect.TypeFor[payload.Chat]()},
	events.ConnectionUpdate:        {reflect.TypeFor[payload.Connection]()},
	events.ContactsUpdate:          {reflect.TypeFor[payload.ContactUpdate]()},
	events.ContactsUpsert:          {reflect.TypeFor[payload.Contact]()},
	events.CredsUpdate:             {reflect.TypeFor[payload.Creds]()},
	events.GroupParticipantsUpdate: {reflect.TypeFor[payload.GroupParticipants]()},
	events.GroupJoinRequest:        {reflect.TypeFor[payload.GroupJoinRequest]()},
	events.GroupsUpdate:            {reflect.TypeFor[payload.GroupUpdate]()},
	events.GroupsUpsert:            {reflect.TypeFor[payload.Group]()},
	events.LabelsAssociation:       {reflect.TypeFor[payload.LabelAssociation]()},
	events.LabelsEdit:              {reflect.TypeFor[payload.Label]()},
	events.MessageReceiptUpdate:    {reflect.TypeFor[payload.Receipt]()},
	events.MessagesDelete:          {reflect.TypeFor[payload.MessageDelete]()},
	events.MessagesMediaUpdate:     {reflect.TypeFor[payload.MediaUpdate]()},
	events.MessagesReaction:        {reflect.TypeFor[payload.Reaction]()},
	events.MessagesSend:            {reflect.TypeFor[payload.MessageStatus]()},
	events.MessagesUpdate:          {reflect.TypeFor[payload.MessageStatus]()},
	events.MessagingHistorySet:     {reflect.TypeFor[payload.HistorySet]()},
	events.PresenceUpdate:          {reflect.TypeFor[payload.Presence]()},
	events.InboundMessageUpsert:    {reflect.TypeFor[payload.Message]()},
	events.OutboundMessageUpsert:   {reflect.TypeFor[payload.Message]()},
	events.WebhookTest:             {reflect.TypeFor[payload.WebhookTest]()},
}

// allKinds is every kind the service produces.
func allKinds() []events.Kind { return append(events.Selectable(), events.WebhookTest) }

// TestDocsEveryKind: the table above has every kind, and only kinds.
func TestDocsEveryKind(t *testing.T) {
	for _, k := range allKinds() {
		if len(dataTypes[k]) == 0 {
			t.Errorf("kind %s has no data type in dataTypes", k)
		}
	}
	for k := range dataTypes {
		if !k.IsKnown() {
			t.Errorf("dataTypes has %q, which is no kind", k)
		}
	}
}

// section is the text under one heading of the docs.
type section struct {
	level int
	title string
	body  []string
}

// sections splits markdown into its headings' sections; lines inside code
// blocks are never headings.
func sections(doc string) []section {
	var out []section
	fenced := false
	for line := range strings.SplitSeq(doc, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if !fenced && strings.HasPrefix(line, "#") {
			level := len(line) - len(strings.TrimLeft(line, "#"))
			if level < len(line) && line[level] == ' ' {
				out = append(out, section{level: level, title: strings.TrimSpace(line[level:])})
				continue
			}
		}
		if len(out) > 0 {
			out[len(out)-1].body = append(out[len(out)-1].body, line)
		}
	}
	return out
}

// kindSections returns the "### `kind`" sections by kind, each with the text
// up to the next heading of level 3 or less (none are deeper).
func kindSections(t *testing.T, doc string) map[events.Kind]section {
	t.Helper()
	out := map[events.Kind]section{}
	for _, s := range sections(doc) {
		name, ok := strings.CutPrefix(s.title, "`")
		if s.level != 3 || !ok || !strings.HasSuffix(name, "`") {
			continue
		}
		k := events.Kind(strings.TrimSuffix(name, "`"))
		if !k.IsKnown() {
			t.Errorf("docs: section %q is no kind", s.title)
			continue
		}
		if _, dup := out[k]; dup {
			t.Errorf("docs: kind %s has two sections", k)
		}
		out[k] = s
	}
	return out
}

// tableFields are the names in the first column of a section's tables
// (`name`, `parent.name`, `list[].name`), each with its last cell: when the
// value is null.
func tableFields(s section) map[string]string {
	out := map[string]string{}
	for _, line := range s.body {
		cells := strings.Split(strings.TrimSuffix(strings.TrimSpace(line), "|"), "|")
		if !strings.HasPrefix(line, "|") || len(cells) < 3 {
			continue
		}
		first := strings.TrimSpace(cells[1])
		if len(first) > 2 && strings.HasPrefix(first, "`") && strings.HasSuffix(first, "`") {
			out[strings.Trim(first, "`")] = strings.TrimSpace(cells[len(cells)-1])
		}
	}
	return out
}

// jsonName is a field's JSON key; "" for a field not written.
func jsonName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "-" {
		return ""
	}
	if name == "" {
		return f.Name
	}
	return name
}

var timeType = reflect.TypeFor[payload.Time]()

// object is the struct a field's value is made of (through pointers and
// slices), and whether it is a list of them; nil when the value is no
// object of the payload package (strings, numbers, times).
func object(t reflect.Type) (reflect.Type, bool) {
	list := false
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		list = list || t.Kind() == reflect.Slice
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t == timeType || t.PkgPath() != timeType.PkgPath() {
		return nil, false
	}
	return t, list
}

// isKindData reports whether t is the data of some kind: inside another
// kind's data (a history part's messages) it is documented with that kind,
// not again.
func isKindData(t reflect.Type) bool {
	for _, ts := range dataTypes {
		if slices.Contains(ts, t) {
			return true
		}
	}
	return false
}

// documentedNames are the names a table must list for t: its keys, and
// those of the objects inside it, spelled parent.key or list[].key. An
// object the kind never sets (null "always", as messages.send's vote)
// is listed without its inside.
func documentedNames(t reflect.Type, prefix string, listed map[string]string) []string {
	var out []string
	for f := range fieldsOf(t) {
		name := jsonName(f)
		if name == "" {
			continue
		}
		out = append(out, prefix+name)
		if listed[prefix+name] == "always" {
			continue
		}
		if inner, list := object(f.Type); inner != nil && !isKindData(inner) {
			sep := "."
			if list {
				sep = "[]."
			}
			out = append(out, documentedNames(inner, prefix+name+sep, listed)...)
		}
	}
	return out
}

func fieldsOf(t reflect.Type) func(func(reflect.StructField) bool) {
	return func(yield func(reflect.StructField) bool) {
		for i := range t.NumField() {
			if !yield(t.Field(i)) {
				return
			}
		}
	}
}

// keys are the JSON keys of struct t.
func keys(t reflect.Type) []string {
	var out []string
	for f := range fieldsOf(t) {
		if name := jsonName(f); name != "" {
			out = append(out, name)
		}
	}
	return out
}

// exactKeys checks that every object in v (decoded JSON) that t describes
// has exactly t's keys: receivers are told every key is always present.
func exactKeys(t reflect.Type, v any, path string) []string {
	if v == nil {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t.Kind() == reflect.Slice:
		var errs []string
		items, _ := v.([]any)
		for _, item := range items {
			errs = append(errs, exactKeys(t.Elem(), item, path+"[]")...)
		}
		return errs
	case t.Kind() != reflect.Struct || t == timeType:
		return nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return []string{path + " is not an object"}
	}
	if got, want := slices.Sorted(maps.Keys(obj)), slices.Sorted(slices.Values(keys(t))); !slices.Equal(got, want) {
		return []string{path + " has the keys " + strings.Join(got, ", ") + "; " + t.Name() + " has " + strings.Join(want, ", ")}
	}
	var errs []string
	for f := range fieldsOf(t) {
		if name := jsonName(f); name != "" {
			errs = append(errs, exactKeys(f.Type, obj[name], path+"."+name)...)
		}
	}
	return errs
}

// example is the first JSON block of a section.
func example(s section) (string, bool) {
	var b strings.Builder
	in := false
	for _, line := range s.body {
		switch {
		case !in && strings.TrimSpace(line) == "```json":
			in = true
		case in && strings.HasPrefix(line, "```"):
			return b.String(), true
		case in:
			b.WriteString(line + "\n")
		}
	}
	return "", false
}

// checkExample checks a section's example envelope: the envelope's keys,
// its kind, and data that decodes strictly into one of the kind's types
// with exactly its keys.
func checkExample(t *testing.T, k events.Kind, s section) {
	t.Helper()
	text, ok := example(s)
	if !ok {
		t.Errorf("docs: %s has no example envelope (```json)", k)
		return
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &env); err != nil {
		t.Errorf("docs: %s: the example is not JSON: %v", k, err)
		return
	}
	if got, want := slices.Sorted(maps.Keys(env)), []string{"data", "event", "id", "seq", "sessionId", "timestamp"}; !slices.Equal(got, want) {
		t.Errorf("docs: %s: the example envelope has the keys %v, want %v", k, got, want)
	}
	var e events.Envelope
	if err := json.Unmarshal([]byte(text), &e); err != nil {
		t.Errorf("docs: %s: the example does not read as an envelope: %v", k, err)
		return
	}
	if e.Kind != k || !strings.HasPrefix(e.ID, "evt_") || e.Seq < 1 || e.SessionID == "" {
		t.Errorf("docs: %s: the example envelope says event %q, id %q, seq %d, sessionId %q", k, e.Kind, e.ID, e.Seq, e.SessionID)
	}
	var data any
	if err := json.Unmarshal(e.Data, &data); err != nil {
		t.Errorf("docs: %s: data: %v", k, err)
		return
	}
	if _, ok := data.(map[string]any); !ok {
		t.Errorf("docs: %s: the example's data is not an object: %s", k, e.Data)
		return
	}
	var mismatch []string
	for _, typ := range dataTypes[k] {
		dec := json.NewDecoder(bytes.NewReader(e.Data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(reflect.New(typ).Interface()); err != nil {
			mismatch = append(mismatch, typ.Name()+": "+err.Error())
			continue
		}
		errs := exactKeys(typ, data, "data")
		if len(errs) == 0 {
			return
		}
		mismatch = append(mismatch, typ.Name()+": "+strings.Join(errs, "; "))
	}
	t.Errorf("docs: %s: the example's data is none of the kind's types:\n  %s", k, strings.Join(mismatch, "\n  "))
}

// TestDocsKinds holds docs/events.md to the code: every kind has a section
// naming its GraphQL value, a field table listing every key of its data
// (and of the objects inside), and an example envelope whose data has
// exactly those keys; the section "Kinds" indexes every kind.
func TestDocsKinds(t *testing.T) {
	raw, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	byKind := kindSections(t, doc)
	var index section
	for _, s := range sections(doc) {
		if s.level == 2 && s.title == "Kinds" {
			index = s
		}
	}
	for _, k := range allKinds() {
		t.Run(string(k), func(t *testing.T) {
			if !slices.ContainsFunc(index.body, func(line string) bool { return strings.Contains(line, "`"+string(k)+"`") }) {
				t.Errorf("docs: the section Kinds does not index %s", k)
			}
			s, ok := byKind[k]
			if !ok {
				t.Fatalf("docs: no section \"### `%s`\"", k)
			}
			if body := strings.Join(s.body, "\n"); !strings.Contains(body, "`"+k.Enum()+"`") {
				t.Errorf("docs: %s does not name its GraphQL value `%s`", k, k.Enum())
			}
			listed := tableFields(s)
			for _, typ := range dataTypes[k] {
				for _, name := range documentedNames(typ, "", listed) {
					if _, ok := listed[name]; !ok {
						t.Errorf("docs: %s: the field table has no row `%s` (%s)", k, name, typ.Name())
					}
				}
			}
			checkExample(t, k, s)
		})
	}
}

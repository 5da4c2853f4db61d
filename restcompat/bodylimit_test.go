package restcompat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/graph"
	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/internal/events"
	"github.com/wagraph/wagraph/internal/fault"
)

// TestRouteBodyLimits (issue 31, finding 2): every route refuses a body
// over its own limit with 413 naming the limit: announced, before a byte
// of it is read; sent without a length, cut at the limit. The limits are
// the table's: a few fields 64 KiB, lists 512 KiB, a text 1 MiB, a media
// send --max-body; --max-body caps them all.
func TestRouteBodyLimits(t *testing.T) {
	const maxBody = 64 << 20
	want := map[string]int64{
		"sendText": 1 << 20, "editMessage": 1 << 20,
		"markRead": 512 << 10, "createGroup": 512 << 10, "demoteGroupParticipants": 512 << 10, "addGroupParticipants": 512 << 10, "removeGroupParticipants": 512 << 10, "promoteGroupParticipants": 512 << 10, "approveGroupJoinRequests": 512 << 10, "rejectGroupJoinRequests": 512 << 10, "createWebhook": 512 << 10, "updateWebhook": 512 << 10,
		"sendImage": maxBody, "sendVideo": maxBody, "sendDocument": maxBody, "sendAudio": maxBody, "sendSticker": maxBody, "updateDisplayPicture": maxBody,
	}
	h := New(Deps{Resolvers: &graph.Resolver{}, MaxBody: maxBody}, slog.New(slog.DiscardHandler))
	param := regexp.MustCompile(`\{[^}]+\}`)
	for _, rt := range routes() {
		t.Run(rt.id, func(t *testing.T) {
			limit := rt.bodyLimit(maxBody)
			if w, ok := want[rt.id]; ok && limit != w || !ok && limit != 64<<10 {
				t.Fatalf("limit %d, want %d", limit, cmp(want[rt.id], 64<<10))
			}
			path := param.ReplaceAllString(rt.path, "p")
			wantMsg := "request body is larger than the limit of " + config.FormatSize(limit)

			r := httptest.NewRequest(rt.method, path, unread{t})
			r.ContentLength = limit + 1
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			if msg := failureMessage(t, rec); rec.Code != http.StatusRequestEntityTooLarge || msg != wantMsg || rec.Header().Get("Connection") != "close" {
				t.Errorf("announced %d bytes: %d %q, Connection %q; want 413 %q, closed", limit+1, rec.Code, msg, rec.Header().Get("Connection"), wantMsg)
			}
			if rt.body == nil || limit > 1<<20 {
				return // no body is read; a media send's cut is --max-body's (internal/middleware)
			}
			// Sent without a length, a valid start that goes on: cut.
			body := &countingReader{r: io.MultiReader(strings.NewReader(`{"x":"`), endless('a'))}
			r = httptest.NewRequest(rt.method, path, body)
			r.ContentLength = -1
			rec = httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			if msg := failureMessage(t, rec); rec.Code != http.StatusRequestEntityTooLarge || msg != wantMsg {
				t.Errorf("sent without a length: %d %q; want 413 %q", rec.Code, msg, wantMsg)
			}
			if body.n > limit+64<<10 {
				t.Errorf("%d bytes read of an endless body; want the limit, %d", body.n, limit)
			}
		})
	}
	// --max-body below a route's limit wins; without one, a media send has
	// no limit of its own.
	for _, rt := range routes() {
		if got := rt.bodyLimit(1 << 10); got != 1<<10 {
			t.Errorf("%s: limit %d under --max-body 1 KiB", rt.id, got)
		}
		if got := rt.bodyLimit(0); rt.maxBody == mediaBody && got != math.MaxInt64 {
			t.Errorf("%s: limit %d without --max-body", rt.id, got)
		}
	}
}

func cmp(a, b int64) int64 {
	if a != 0 {
		return a
	}
	return b
}

func failureMessage(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	var f failure
	if err := json.Unmarshal(rec.Body.Bytes(), &f); err != nil {
		t.Fatalf("answer %d %q is no failure envelope", rec.Code, rec.Body)
	}
	return f.Message
}

// unread fails the test when read: a body refused by its announced length.
type unread struct{ t *testing.T }

func (u unread) Read([]byte) (int, error) {
	u.t.Error("a body announced over the limit was read")
	return 0, io.EOF
}

// endless reads c without end.
type endless byte

func (e endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(e)
	}
	return len(p), nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// TestListsBoundedWhileDecoding (issue 31, finding 2): a list past its
// declared maxItems is refused while the body is walked, saying how many
// it held, before encoding/json builds it: decoding a body costs about
// the body itself, not the ~14 times a list of tiny strings did. A list
// at its bound, and a media send's large source, decode.
func TestListsBoundedWhileDecoding(t *testing.T) {
	dbtest.OneBackend(t, "a body's lists bounded while it is decoded, before any storage is reached")
	list := func(head, item, tail string, size int) (string, int) {
		n := (size - len(head) - len(tail)) / (len(item) + 1)
		return head + strings.TrimSuffix(strings.Repeat(item+",", n), ",") + tail, n
	}
	ids, nIDs := list(`{"messageIds":[`, `"a"`, `]}`, 500<<10)
	mentions, nMentions := list(`{"number":"491701234567","text":"hi","mentions":[`, `"1"`, `]}`, 1000<<10)
	admins, nAdmins := list(`[`, `"1"`, `]`, 500<<10)
	imageMentions, nImage := list(`{"number":"491701234567","source":"aGk=","mentions":[`, `"1"`, `]}`, 30<<20)
	atBound, _ := list(`{"messageIds":[`, `"3EB0C431C26A1916E2F5"`, `]}`, 1000*23+17)
	source := `{"number":"491701234567","source":"` + strings.Repeat("QUJD", 30<<18) + `"}`
	for _, tt := range []struct {
		name     string
		into     any
		body     string
		field    string
		want     string // the refusal; "" decodes
		maxAlloc float64
	}{
		{"markRead ids", &markReadRequest{}, ids, "messageIds", fmt.Sprintf("messageIds must hold at most 1000 items (got %d)", nIDs), 1.5},
		{"text mentions", &sendTextRequest{}, mentions, "mentions", fmt.Sprintf("mentions must hold at most 1024 items (got %d)", nMentions), 1.5},
		{"admins to demote", &demoteRequest{}, admins, "", fmt.Sprintf("the request body must hold at most 1024 items (got %d)", nAdmins), 1.5},
		{"image mentions", &sendImageRequest{}, imageMentions, "mentions", fmt.Sprintf("mentions must hold at most 1024 items (got %d)", nImage), 1.25},
		{"poll options", &sendPollRequest{}, `{"number":"1","question":"q","options":["1","2","3","4","5","6","7","8","9","10","11","12","13"]}`,
			"options", "options must hold at most 12 items (got 13)", 0},
		{"markRead at its bound", &markReadRequest{}, atBound, "", "", 0},
		{"image source of 30 MiB", &sendImageRequest{}, source, "", "", 2.25},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tt.body))
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := decodeBody(r, tt.into, false)
			runtime.ReadMemStats(&after)
			alloc := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(tt.body))
			t.Logf("%d KiB body: allocated %.2f times its size", len(tt.body)>>10, alloc)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
			} else if f := fault.From(err); f == nil || f.Code != fault.Invalid || f.Field != tt.field || f.Message != tt.want {
				t.Fatalf("got %v, want %s %q on %q", err, fault.Invalid, tt.want, tt.field)
			}
			if tt.maxAlloc > 0 && alloc > tt.maxAlloc {
				t.Errorf("decoding allocated %.2f times the body; want at most %.2f", alloc, tt.maxAlloc)
			}
		})
	}
	var in markReadRequest
	if err := decodeBody(httptest.NewRequest(http.MethodPost, "/", strings.NewReader(atBound)), &in, false); err != nil || len(in.MessageIDs) != 1000 {
		t.Errorf("1000 ids: %d decoded, %v", len(in.MessageIDs), err)
	}
}

// TestEveryListBounded: every list a request body may hold declares its
// maxItems (a tag, or its type's PrepareJSONSchema), so that the walk
// bounds it while decoding and the document shows the bound.
func TestEveryListBounded(t *testing.T) {
	var check func(t reflect.Type, path string, b bound, seen map[reflect.Type]bool)
	check = func(typ reflect.Type, path string, b bound, seen map[reflect.Type]bool) {
		for typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		switch typ.Kind() {
		case reflect.Slice, reflect.Array:
			if typ.Elem().Kind() == reflect.Uint8 && typ.Kind() == reflect.Slice {
				return // json.RawMessage: a value the decoder keeps as is
			}
			if b.maxItems == 0 && typeBound(typ).maxItems == 0 {
				t.Errorf("%s (%s) declares no maxItems", path, typ)
			}
			check(typ.Elem(), path+"[]", bound{}, seen)
		case reflect.Map:
			check(typ.Elem(), path+".*", bound{}, seen)
		case reflect.Struct:
			if seen[typ] {
				return
			}
			seen[typ] = true
			for _, f := range structFields(typ) {
				check(f.typ, strings.TrimPrefix(path+"."+f.name, "."), f.bound, seen)
			}
		}
	}
	for _, rt := range routes() {
		if rt.body != nil {
			check(reflect.TypeOf(rt.body), rt.id, bound{}, map[reflect.Type]bool{})
		}
	}
}

// TestLargestBodiesFit: the largest body each rule allows, written the
// longest way (every character an escaped emoji, 12 bytes, where the
// field takes any; a number spelled with dashes to its longest), is under
// its route's limit and decodes. Its sizes are the document's maxLength
// and maxItems, so a rule that grows past its route's limit fails here.
func TestLargestBodiesFit(t *testing.T) {
	raw, err := Document()
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	// num reads a number of the document at a JSON pointer, following
	// $refs on the way.
	var lookup func(ptr string) any
	deref := func(node any) any {
		for {
			m, _ := node.(map[string]any)
			ref, ok := m["$ref"].(string)
			if !ok {
				return node
			}
			node = lookup(ref)
		}
	}
	lookup = func(ptr string) any {
		var node any = doc
		for _, k := range strings.Split(strings.TrimPrefix(ptr, "#/"), "/") {
			m, _ := deref(node).(map[string]any)
			node = m[k]
		}
		return node
	}
	num := func(ptr string) int {
		n, ok := lookup(ptr).(float64)
		if !ok {
			t.Fatalf("%s is no number in the document", ptr)
		}
		return int(n)
	}
	s := "#/components/schemas/"
	emoji := func(n int) string { return `"` + strings.Repeat(`\ud83d\ude00`, n) + `"` }
	ascii := func(n int) string { return `"` + strings.Repeat("k", n) + `"` }
	recipientLen := num(s + "User/maxLength")
	recipient := `"49` + strings.Repeat("-", recipientLen-12) + `1701234567"`
	recipients := func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat(recipient+",", n), ",") + "]" }
	items := func(n int, item string) string {
		return "[" + strings.TrimSuffix(strings.Repeat(item+",", n), ",") + "]"
	}
	var selected, headers []string
	for _, k := range events.Selectable() {
		selected = append(selected, strconv.Quote(string(k))+":true")
	}
	for i := range num(s + "WebhookHeadersInput/maxProperties") {
		name := fmt.Sprintf("X-%03d-", i) + strings.Repeat("h", 128-6)
		headers = append(headers, strconv.Quote(name)+":"+emoji(num(s+"WebhookHeadersInput/additionalProperties/maxLength")/4))
	}
	webhook := `{"url":"https://example.com/` + strings.Trim(emoji(num(s+"CreateWebhookRequest/properties/url/maxLength")-20), `"`) + `",` +
		`"displayName":` + emoji(num(s+"CreateWebhookRequest/properties/displayName/maxLength")) + `,"enabled":true,` +
		`"events":{` + strings.Join(selected, ",") + `},"headers":{` + strings.Join(headers, ",") + `}}`
	group := `"subject":` + emoji(num(s+"CreateGroupRequest/properties/subject/maxLength")) +
		`,"description":` + emoji(num(s+"CreateGroupRequest/properties/description/maxLength"))
	key := `"idempotencyKey":` + ascii(num(s+"SendTextRequest/properties/idempotencyKey/maxLength"))
	largest := map[string]string{
		"sendText": `{"number":` + recipient + `,"text":` + emoji(num(s+"SendTextRequest/properties/text/maxLength")) +
			`,"mentions":` + recipients(num(s+"Mentions/maxItems")) + `,"quoted":` + ascii(num(s+"MessageID/maxLength")) +
			`,"delay":86400,"linkPreview":false,` + key + `}`,
		"editMessage": `{"text":` + emoji(num(s+"EditMessageRequest/properties/text/maxLength")) + `}`,
		// An id of 128 bytes is at most 32 emoji.
		"markRead":                 `{"messageIds":` + items(num(s+"MarkReadRequest/properties/messageIds/maxItems"), emoji(num(s+"MessageID/maxLength")/4)) + `}`,
		"createGroup":              `{` + group + `,"participants":` + recipients(num(s+"CreateGroupRequest/properties/participants/maxItems")) + `}`,
		"updateGroup":              `{` + group + `,"onlyAdminsCanPost":true,"onlyAdminsCanEditInfo":true}`,
		"demoteGroupParticipants":  recipients(num(s + "DemoteRequest/maxItems")),
		"addGroupParticipants":     recipients(num(s + "ParticipantsRequest/maxItems")),
		"removeGroupParticipants":  recipients(num(s + "ParticipantsRequest/maxItems")),
		"promoteGroupParticipants": recipients(num(s + "ParticipantsRequest/maxItems")),
		"approveGroupJoinRequests": recipients(num(s + "ParticipantsRequest/maxItems")),
		"rejectGroupJoinRequests":  recipients(num(s + "ParticipantsRequest/maxItems")),
		"sendGroupInvite":          `{"number":` + recipient + `,"message":` + emoji(num(s+"SendGroupInviteRequest/properties/message/maxLength")) + `}`,
		"createWebhook":            webhook,
		"updateWebhook":            webhook,
		"sendPoll": `{"number":` + recipient + `,"question":` + emoji(num(s+"SendPollRequest/properties/question/maxLength")) +
			`,"options":` + items(num(s+"SendPollRequest/properties/options/maxItems"), emoji(num(s+"PollChoice/maxLength"))) +
			`,"selectableCount":12,"delay":86400,` + key + `}`,
		"sendLocation": `{"number":` + recipient + `,"latitude":-89.99999999999999,"longitude":-179.99999999999999,"address":` +
			emoji(num(s+"SendLocationByAddress/properties/address/maxLength")) + `,"name":` + emoji(num(s+"SendLocationByAddress/properties/name/maxLength")) +
			`,"delay":86400,` + key + `}`,
		"sendContact": `{"number":` + recipient + `,"contact":{"phoneNumber":` + recipient + `,"firstName":` +
			emoji(num(s+"ContactCard/properties/firstName/maxLength")) + `,"lastName":` + emoji(num(s+"ContactCard/properties/lastName/maxLength")) +
			`},"delay":86400,` + key + `}`,
	}
	for _, rt := range routes() {
		if rt.body == nil || rt.maxBody == mediaBody {
			continue
		}
		body, ok := largest[rt.id]
		if !ok {
			// A few short fields: its example, ten times over, fits.
			if body = rt.bodyExample; body == "" {
				body = rt.bodyExamples[0].json
			}
			if limit := rt.bodyLimit(0); int64(10*len(body)) > limit {
				t.Errorf("%s: ten times its example is %d bytes, over its limit of %d: give it its largest body here", rt.id, 10*len(body), limit)
			}
			continue
		}
		t.Run(rt.id, func(t *testing.T) {
			limit := rt.bodyLimit(0)
			t.Logf("largest body %d KiB, limit %s", len(body)>>10, config.FormatSize(limit))
			if int64(len(body)) > limit {
				t.Fatalf("the largest body is %d bytes, over the limit of %d", len(body), limit)
			}
			r := httptest.NewRequest(rt.method, "/", nil)
			r.Body = http.MaxBytesReader(httptest.NewRecorder(), io.NopCloser(bytes.NewReader([]byte(body))), limit)
			r.ContentLength = -1
			into := reflect.New(reflect.TypeOf(rt.body)).Interface()
			if err := decodeBody(r, into, rt.optional); err != nil {
				t.Fatalf("refused: %v", err)
			}
		})
	}
}

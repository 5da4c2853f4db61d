package restcompat_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/dbtest"
	"github.com/wagraph/wagraph/restcompat"
)

// clientRun is what testdata/tools/client.mts prints.
type clientRun struct {
	Created struct{ ID, Name, Status, TokenPrefix string }
	Read    struct {
		ID, Name, Status, CreatedAt string
		JID                         *string
	}
	Listed  []string
	Webhook struct {
		HTTPStatus       int
		ID, SecretPrefix string
		Selected         []string
	}
	Webhooks struct {
		Total int
		Page  string
		IDs   []string
	}
	Deleted map[string]any
	Refused struct {
		HTTPStatus      int
		Status, Message string
	}
	Sent, Location struct {
		MessageID string
		Timestamp *string
	}
	Message struct {
		ID, Chat, Type string
		FromMe         bool
		Text           *string
	}
}

// TestOpenAPITypeScriptClient generates a TypeScript client from the
// served document with openapi-typescript, type-checks a program using it
// through openapi-fetch under tsc --strict, and runs that program against a
// sandbox server: the generated types must be usable as they are (every
// success's data present, whole object schemas) and true to what the
// server answers.
func TestOpenAPITypeScriptClient(t *testing.T) {
	dbtest.OneBackend(t, "the REST document's generated TypeScript client type-checked and run: the contract's shape, the same on every backend")
	generate, tsc := npmTool(t, "openapi-typescript"), npmTool(t, "tsc")
	srv := apptest.StartSandbox(t)
	const phone, recipient = "4915550300001", "4915550300002"
	linked := srv.LinkSession(t, phone)

	dir := t.TempDir()
	doc := servedDocument(t, srv, dir)
	modules, err := filepath.Abs(filepath.Join(toolsDir, "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	program, err := os.ReadFile(filepath.Join(toolsDir, "client.mts"))
	if err != nil {
		t.Fatal(err)
	}
	config := fmt.Sprintf("export const baseUrl = %q;\nexport const token = %q;\nexport const linkedSession = %q;\nexport const recipient = %q;\n",
		srv.URL+restcompat.Prefix, apptest.AdminToken, linked.ID, recipient)
	for name, content := range map[string][]byte{"client.mts": program, "config.mts": []byte(config)} {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	if out, err := runTool(t, dir, generate, doc, "--output", "schema.d.ts"); err != nil {
		t.Fatalf("openapi-typescript: %v\n%s", err, out)
	}
	compile := []string{"--strict", "--target", "es2022", "--module", "nodenext", "--moduleResolution", "nodenext",
		"--lib", "es2022,dom", "client.mts", "config.mts"}
	if out, err := runTool(t, dir, tsc, append([]string{"--noEmit"}, compile...)...); err != nil {
		schema, _ := os.ReadFile(filepath.Join(dir, "schema.d.ts"))
		t.Fatalf("tsc --strict --noEmit: %v\n%s\n(the generated schema.d.ts is %d bytes)", err, out, len(schema))
	}
	// Checked above: emit JavaScript without checking again.
	if out, err := runTool(t, dir, tsc, append([]string{"--noCheck", "--outDir", "js"}, compile...)...); err != nil {
		t.Fatalf("tsc (emit): %v\n%s", err, out)
	}
	out, err := runTool(t, dir, "node", filepath.Join("js", "client.mjs"))
	if err != nil {
		t.Fatalf("the client program failed: %v\n%s", err, out)
	}
	var got clientRun
	if err := json.Unmarshal([]byte(lastLine(out)), &got); err != nil {
		t.Fatalf("the client program printed %q: %v", out, err)
	}
	t.Logf("client: %s", lastLine(out))

	// Sessions, as the server has them.
	var session struct {
		Data struct{ ID, Name, Status, CreatedAt string }
	}
	srv.REST(t, http.MethodGet, "/session/"+got.Created.ID, apptest.AdminToken, "").JSON(t, &session)
	if got.Created.ID == "" || session.Data.ID != got.Created.ID || session.Data.Name != "typescript client" || got.Created.Name != "typescript client" {
		t.Errorf("created %+v; the server has %+v", got.Created, session.Data)
	}
	if got.Created.TokenPrefix != "wgs_" || got.Created.Status != "DISCONNECTED" {
		t.Errorf("created %+v, want a wgs_ token and DISCONNECTED", got.Created)
	}
	if got.Read.ID != got.Created.ID || got.Read.Name != session.Data.Name || got.Read.Status != "DISCONNECTED" ||
		got.Read.JID != nil || got.Read.CreatedAt != session.Data.CreatedAt {
		t.Errorf("read %+v; the server has %+v", got.Read, session.Data)
	}
	if !slices.Contains(got.Listed, got.Created.ID) || !slices.Contains(got.Listed, linked.ID) {
		t.Errorf("listed %v, want %s and %s among them", got.Listed, got.Created.ID, linked.ID)
	}

	// The webhook: created (201, with its secret), listed, then deleted.
	if got.Webhook.HTTPStatus != http.StatusCreated || got.Webhook.SecretPrefix != "whsec_" ||
		!slices.Equal(got.Webhook.Selected, []string{"messages.update"}) {
		t.Errorf("webhook %+v, want 201, a whsec_ secret and messages.update selected", got.Webhook)
	}
	if got.Webhooks.Total != 1 || got.Webhooks.Page != "1" || !slices.Equal(got.Webhooks.IDs, []string{got.Webhook.ID}) {
		t.Errorf("webhooks %+v, want the one webhook %s", got.Webhooks, got.Webhook.ID)
	}
	if got.Deleted == nil || len(got.Deleted) != 0 {
		t.Errorf("delete's data %v, want {}", got.Deleted)
	}
	if res := srv.REST(t, http.MethodGet, "/session/"+got.Created.ID+"/webhook/"+got.Webhook.ID, apptest.AdminToken, ""); res.Status != http.StatusNotFound {
		t.Errorf("the deleted webhook: %d %s", res.Status, res.Body)
	}

	// The refused send: the typed failure envelope.
	if got.Refused.HTTPStatus != http.StatusConflict || got.Refused.Status != "failed" ||
		!strings.Contains(got.Refused.Message, got.Created.ID) || !strings.Contains(got.Refused.Message, "not connected") {
		t.Errorf("refused %+v, want 409 failed naming session %s as not connected", got.Refused, got.Created.ID)
	}

	// The sends through the linked session, as the server stored them.
	if got.Sent.MessageID == "" || got.Sent.Timestamp == nil || got.Location.MessageID == "" || got.Location.Timestamp == nil ||
		got.Location.MessageID == got.Sent.MessageID {
		t.Errorf("sent %+v and %+v, want two message ids with timestamps", got.Sent, got.Location)
	}
	var stored struct {
		Data struct {
			ID, Chat, Type, Timestamp string
			FromMe                    bool
			Text                      *string
		}
	}
	srv.REST(t, http.MethodGet, "/session/"+linked.ID+"/message/"+got.Sent.MessageID, apptest.AdminToken, "").JSON(t, &stored)
	m := stored.Data
	if m.ID != got.Sent.MessageID || m.Chat != recipient+"@s.whatsapp.net" || !m.FromMe || m.Type != "text" ||
		m.Text == nil || *m.Text != "hello from TypeScript" || m.Timestamp != *got.Sent.Timestamp {
		t.Errorf("the server stored %+v for the text the client sent (%+v)", m, got.Sent)
	}
	if got.Message.ID != m.ID || got.Message.Chat != m.Chat || got.Message.Type != m.Type || got.Message.Text == nil || *got.Message.Text != *m.Text {
		t.Errorf("the client read %+v, the server has %+v", got.Message, m)
	}
	srv.REST(t, http.MethodGet, "/session/"+linked.ID+"/message/"+got.Location.MessageID, apptest.AdminToken, "").JSON(t, &stored)
	if stored.Data.Type != "location" || stored.Data.Chat != recipient+"@s.whatsapp.net" {
		t.Errorf("the server stored %+v for the location", stored.Data)
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndexByte(s, '\n')+1:]
}

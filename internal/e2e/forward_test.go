package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"google.golang.org/protobuf/proto"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/internal/testclient"
)

// TestForwardMessage: a received text and a received image are forwarded
// to another contact, whose phone decrypts them marked as forwarded: the
// text as it was, the image downloaded and uploaded again (the same bytes
// under new keys) with its caption. What the store cannot send again (a
// location) is refused naming messageId; an unknown message is 404.
func TestForwardMessage(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	n := s.Network(t)
	const phone, ana, ben = apptest.LinkedPhone, "4915550280002", "4915550280003"
	text, err := n.SendText(ana, phone, "Weiterleiten bitte")
	if err != nil {
		t.Fatal(err)
	}
	photo := pngImage(t, 48, 32)
	img, err := n.SendImage(ana, phone, photo, "image/png", "das Foto")
	if err != nil {
		t.Fatal(err)
	}
	pdf := []byte("%PDF-1.4\n% the minutes of the meeting\n%%EOF\n")
	up, err := n.Upload(pdf, whatsmeow.MediaDocument)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := n.SendMessage(ana, phone, &waE2E.Message{DocumentMessage: &waE2E.DocumentMessage{
		URL: proto.String(up.URL), DirectPath: proto.String(up.DirectPath), MediaKey: up.MediaKey,
		FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: proto.Uint64(up.FileLength),
		Mimetype: proto.String("application/pdf"), FileName: proto.String("Protokoll.pdf"), Caption: proto.String("das Protokoll"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	loc, err := n.SendMessage(ana, phone, &waE2E.Message{LocationMessage: &waE2E.LocationMessage{
		DegreesLatitude: proto.Float64(52.5), DegreesLongitude: proto.Float64(13.4),
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{text, img, doc, loc} {
		inboundText(t, s, sess.ID, id)
	}
	testclient.Until(t, 10*time.Second, "the image stored with its media", func() bool {
		return storedWithReactions(t, s, sess.ID, img).Message.Caption != nil
	})

	var fw struct{ ForwardMessage struct{ MessageID string } }
	s.MustGraphQL(t, apptest.AdminToken, `mutation($s: ID!, $m: ID!, $n: String!) { forwardMessage(sessionId: $s, messageId: $m, number: $n) { messageId } }`,
		map[string]any{"s": sess.ID, "m": text, "n": ben}, &fw)
	got := received(t, s, ben, fw.ForwardMessage.MessageID)
	if got.Type != "text" || str(got.Text) != "Weiterleiten bitte" || !got.Forwarded {
		t.Errorf("Ben's phone decrypted %+v, want the text marked forwarded", got)
	}

	r := s.REST(t, "POST", "/session/"+sess.ID+"/message/"+img+"/forward", apptest.AdminToken, `{"number":"`+ben+`"}`)
	if r.Status != http.StatusOK {
		t.Fatalf("REST forward: %d %s", r.Status, r.Body)
	}
	var env struct{ Data struct{ MessageID string } }
	r.JSON(t, &env)
	got = received(t, s, ben, env.Data.MessageID)
	sum := sha256.Sum256(photo)
	if got.Type != "image" || str(got.Caption) != "das Foto" || !got.Forwarded || str(got.MediaSha256) != hex.EncodeToString(sum[:]) {
		t.Errorf("Ben's phone decrypted %+v, want Ana's image (sha256 %x) with its caption, marked forwarded", got, sum)
	}

	// A document is uploaded again from the file it was downloaded to,
	// under its name and its type as sniffed from its first bytes.
	r = s.REST(t, "POST", "/session/"+sess.ID+"/message/"+doc+"/forward", apptest.AdminToken, `{"number":"`+ben+`"}`)
	if r.Status != http.StatusOK {
		t.Fatalf("REST forward of a document: %d %s", r.Status, r.Body)
	}
	r.JSON(t, &env)
	got = received(t, s, ben, env.Data.MessageID)
	sum = sha256.Sum256(pdf)
	if got.Type != "document" || str(got.FileName) != "Protokoll.pdf" || str(got.Mimetype) != "application/pdf" ||
		str(got.Caption) != "das Protokoll" || !got.Forwarded || str(got.MediaSha256) != hex.EncodeToString(sum[:]) {
		t.Errorf("Ben's phone decrypted %+v, want Ana's document (sha256 %x) named Protokoll.pdf, marked forwarded", got, sum)
	}

	r = s.REST(t, "POST", "/session/"+sess.ID+"/message/"+loc+"/forward", apptest.AdminToken, `{"number":"`+ben+`"}`)
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Message(t), "messageId") {
		t.Errorf("forwarding a location: %d %q, want 400 naming messageId", r.Status, r.Message(t))
	}
	r = s.REST(t, "POST", "/session/"+sess.ID+"/message/NOPE/forward", apptest.AdminToken, `{"number":"`+ben+`"}`)
	if r.Status != http.StatusNotFound {
		t.Errorf("forwarding an unknown message: %d %s, want 404", r.Status, r.Body)
	}
	r = s.REST(t, "POST", "/session/"+sess.ID+"/message/"+text+"/forward", apptest.AdminToken, `{"number":"12"}`)
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Message(t), "number") {
		t.Errorf("forwarding to a bad number: %d %q, want 400 naming number", r.Status, r.Message(t))
	}
}

// TestInboundEditsAndRevokes: a contact's edit of its own message arrives
// encrypted under the message's secret, as phones send edits, and is
// decrypted and applied like a plain one. Edits and revokes the network
// passes on unchecked are judged by the receiver: another contact's
// encrypted edit of that message cannot even be decrypted, and a contact's
// edit or revoke of the account's own message is refused; none of them
// changes the stored message.
func TestInboundEditsAndRevokes(t *testing.T) {
	t.Parallel()
	s, sess := apptest.StartLinked(t)
	n := s.Network(t)
	const phone, ana, eve = apptest.LinkedPhone, "4915550290002", "4915550290003"
	theirs, err := n.SendText(ana, phone, "Treffen um 5")
	if err != nil {
		t.Fatal(err)
	}
	inboundText(t, s, sess.ID, theirs)
	mine := restSend(t, s, sess.ID, "text", map[string]any{"number": ana, "text": "Gut"})
	received(t, s, ana, mine)

	control := func(q string, vars map[string]any) {
		t.Helper()
		vars["s"] = sess.ID
		s.MustGraphQL(t, apptest.AdminToken, q, vars, nil)
	}
	const edit = `mutation($s: ID!, $f: String!, $m: ID!, $t: String!) { sandboxEdit(sessionId: $s, from: $f, messageId: $m, text: $t) }`
	const revoke = `mutation($s: ID!, $f: String!, $m: ID!) { sandboxRevoke(sessionId: $s, from: $f, messageId: $m) }`
	control(edit, map[string]any{"f": ana, "m": theirs, "t": "Treffen um 6"})
	testclient.Until(t, 10*time.Second, "the encrypted edit applied to the stored message", func() bool {
		return str(storedWithReactions(t, s, sess.ID, theirs).Message.Text) == "Treffen um 6"
	})
	testclient.Until(t, 10*time.Second, "messages.update (edited) with the new text", func() bool {
		for _, d := range eventData(t, s, sess.ID, "MESSAGES_UPDATE") {
			if d["id"] == theirs && d["status"] == "edited" && d["text"] == "Treffen um 6" {
				return true
			}
		}
		return false
	})

	control(edit, map[string]any{"f": eve, "m": theirs, "t": "Treffen abgesagt"})
	control(edit, map[string]any{"f": ana, "m": mine, "t": "Schlecht"})
	control(revoke, map[string]any{"f": ana, "m": mine})
	testclient.Until(t, 10*time.Second, "the three refused: one undecryptable, two by someone else than the sender", func() bool {
		failed, refused := 0, 0
		for _, d := range eventData(t, s, sess.ID, "MESSAGES_UPDATE") {
			switch {
			case d["status"] == "failed" && strings.Contains(str2(d["error"]), theirs):
				failed++
			case (d["status"] == "edit-refused" || d["status"] == "revoke-refused") && d["id"] == mine:
				refused++
			}
		}
		return failed == 1 && refused == 2
	})
	stored := storedWithReactions(t, s, sess.ID, theirs).Message
	if str(stored.Text) != "Treffen um 6" {
		t.Errorf("Eve's edit changed Ana's message to %q", str(stored.Text))
	}
	if got := storedWithReactions(t, s, sess.ID, mine).Message; str(got.Text) != "Gut" {
		t.Errorf("Ana's edit changed the account's message to %q", str(got.Text))
	}

	control(revoke, map[string]any{"f": ana, "m": theirs})
	testclient.Until(t, 10*time.Second, "Ana's revoke of her own message applied", func() bool {
		var m struct{ Message struct{ Status string } }
		s.MustGraphQL(t, apptest.AdminToken, `query($s: ID!, $m: ID!) { message(sessionId: $s, id: $m) { status } }`,
			map[string]any{"s": sess.ID, "m": theirs}, &m)
		return m.Message.Status == "revoked"
	})
	var m struct{ Message struct{ Status string } }
	s.MustGraphQL(t, apptest.AdminToken, `query($s: ID!, $m: ID!) { message(sessionId: $s, id: $m) { status } }`,
		map[string]any{"s": sess.ID, "m": mine}, &m)
	if m.Message.Status != "sent" {
		t.Errorf("the account's own message is %s after Ana's revoke, want sent", m.Message.Status)
	}
}

package wafake_test

import (
	"encoding/base64"
	"net/http"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/wagraph/wagraph/internal/testclient"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// TestHistorySync: the phone hands the linked device its chat history as an
// encrypted, compressed media blob; the client downloads it and emits
// events.HistorySync with the chats and messages.
func TestHistorySync(t *testing.T) {
	t.Parallel()
	n := startNetwork(t)
	cli, ps := linkByQR(t, n, "491701234567")
	got := make(chan *events.HistorySync, 1)
	cli.AddEventHandler(func(evt any) {
		if h, ok := evt.(*events.HistorySync); ok {
			got <- h
		}
	})
	chat := types.NewJID("4915112345678", types.DefaultUserServer)
	when := time.Date(2026, 11, 1, 9, 30, 0, 0, time.UTC)
	err := n.SendHistorySync(ps.ID.User, []wafake.HistoryChat{{JID: chat, Messages: []wafake.HistoryMessage{
		{ID: "3EB0AAAA", Text: "old question", Time: when},
		{ID: "3EB0BBBB", FromMe: true, Text: "old answer", Time: when.Add(time.Minute)},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case h := <-got:
		convs := h.Data.GetConversations()
		if len(convs) != 1 || convs[0].GetID() != chat.String() || len(convs[0].GetMessages()) != 2 {
			t.Fatalf("history %+v", convs)
		}
		m := convs[0].GetMessages()[1].GetMessage()
		if m.GetKey().GetID() != "3EB0BBBB" || !m.GetKey().GetFromMe() || m.GetMessage().GetConversation() != "old answer" ||
			m.GetMessageTimestamp() != uint64(when.Add(time.Minute).Unix()) {
			t.Errorf("second message %v", m)
		}
		// Having processed it, the client deletes the blob from the media
		// server (DeleteMedia, upload.go): it is gone.
		url := "https://mmg.whatsapp.net" + h.Notification.GetDirectPath() + "&hash=" +
			base64.URLEncoding.EncodeToString(h.Notification.GetFileEncSHA256()) + "&mms-type=md-msg-hist&__wa-mms="
		testclient.Until(t, 10*time.Second, "the history blob gone (404)", func() bool {
			resp, err := n.HTTPClient().Get(url)
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusNotFound
		})
	case <-time.After(10 * time.Second):
		t.Fatal("no history sync within 10 s")
	}
}

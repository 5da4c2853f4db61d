package messaging

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/wagraph/wagraph/whatsapp"
)

// TestScheduledSendKeepsEverything: a send stored for later comes back as
// it went in, for every kind: a field the stored form forgot would be sent
// without it after the delay (a poll without options, a sticker that no
// longer moves, a forward no longer marked).
func TestScheduledSendKeepsEverything(t *testing.T) {
	to, _ := whatsapp.ParseJID("4915550000001@s.whatsapp.net")
	for _, out := range []whatsapp.Outgoing{
		{Type: "text", To: to, Text: "see https://example.com", Forwarded: true, LinkPreview: &whatsapp.LinkPreview{
			URL: "https://example.com/", MatchedText: "https://example.com", Title: "Example", Description: "An example",
			Thumbnail: []byte{0xff, 0xd8}, ThumbWidth: 100, ThumbHeight: 50,
		}},
		{Type: "poll", To: to, Text: "Welcher Tag?", Poll: &whatsapp.PollSpec{Options: []string{"Mo", "Di"}, Selectable: 0}},
		{Type: "sticker", To: to, Media: &whatsapp.Media{Data: []byte("RIFF"), Mimetype: "image/webp", Width: 512, Height: 512, Animated: true}},
	} {
		st, data := toStored(out)
		raw, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		var back stored
		if err := json.Unmarshal(raw, &back); err != nil {
			t.Fatal(err)
		}
		got, err := back.outgoing("", data)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, out) {
			t.Errorf("%s: stored and read back as\n%+v\nwant\n%+v", out.Type, got, out)
		}
	}
}

package whatsapp_test

import (
	"slices"
	"testing"

	"github.com/wagraph/wagraph/internal/messaging"
	"github.com/wagraph/wagraph/whatsapp"
)

// TestBuildEveryKind: the adapter builds the sample of every kind of send
// of internal/messaging's table into the message it names, keeping what
// the kind carries (read back as a received message is read), without a
// network: the upload is made up.
func TestBuildEveryKind(t *testing.T) {
	for _, k := range messaging.KindTable() {
		t.Run(k.Name, func(t *testing.T) {
			out := k.Sample()
			got, err := whatsapp.BuildOffline(out)
			if err != nil {
				t.Fatalf("build %s: %v", out.Type, err)
			}
			want := out.Type
			if out.Type == messaging.TypeAudio && out.VoiceNote {
				want = "voice"
			}
			if got.Type != want {
				t.Errorf("built a %q message, want %q", got.Type, want)
			}
			if got.Text != out.Text || got.Caption != out.Caption || got.VCard != out.VCard {
				t.Errorf("text %q caption %q vcard %q, want %q, %q, %q", got.Text, got.Caption, got.VCard, out.Text, out.Caption, out.VCard)
			}
			if out.Type == messaging.TypeLocation && (got.Name != out.Name || got.Address != out.Address) {
				t.Errorf("location %q at %q, want %q at %q", got.Name, got.Address, out.Name, out.Address)
			}
			if out.Type == messaging.TypeContact && got.Name != out.ContactName {
				t.Errorf("contact %q, want %q", got.Name, out.ContactName)
			}
			if p := out.Poll; p != nil && (!slices.Equal(got.PollOptions, p.Options) || got.PollSelectable != p.Selectable) {
				t.Errorf("poll options %v of %d, want %v of %d", got.PollOptions, got.PollSelectable, p.Options, p.Selectable)
			}
			if q := out.Quoted; q != nil && got.QuotedID != q.ID {
				t.Errorf("quotes %q, want %q", got.QuotedID, q.ID)
			}
			var mentions []string
			for _, m := range out.Mentions {
				mentions = append(mentions, m.String())
			}
			if !slices.Equal(got.Mentions, mentions) {
				t.Errorf("mentions %v, want %v", got.Mentions, mentions)
			}
			if got.Forwarded != out.Forwarded {
				t.Errorf("forwarded %v, want %v", got.Forwarded, out.Forwarded)
			}
			if out.ViewOnce && got.Message.GetViewOnceMessageV2() == nil {
				t.Error("a view-once message not wrapped as one")
			}
		})
	}
}

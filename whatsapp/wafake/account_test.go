package wafake_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/wagraph/wagraph/internal/testclient"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// eventsOf collects the events of type T a client emits.
func eventsOf[T any](cli *whatsmeow.Client) <-chan T {
	return eventsWhere(cli, func(T) bool { return true })
}

// eventsWhere collects the events of type T that keep says to keep.
func eventsWhere[T any](cli *whatsmeow.Client, keep func(T) bool) <-chan T {
	ch := make(chan T, 64)
	cli.AddEventHandler(func(evt any) {
		if e, ok := evt.(T); ok && keep(e) {
			select {
			case ch <- e:
			default:
			}
		}
	})
	return ch
}

// nextEvent waits up to 10 s for the next event on ch.
func nextEvent[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case e := <-ch:
		return e
	case <-time.After(10 * time.Second):
		var zero T
		t.Fatalf("no %T within 10 s", zero)
		return zero
	}
}

// noEvent checks that nothing arrives on ch for a moment.
func noEvent[T any](t *testing.T, ch <-chan T) {
	t.Helper()
	select {
	case e := <-ch:
		t.Errorf("unexpected event %+v", e)
	case <-time.After(300 * time.Millisecond):
	}
}

// linkSettled links a client like linkByQR and, before the test's cleanup
// disconnects it, waits until it acknowledged everything the network sent:
// whatsmeow sends acks from goroutines, and a send racing Disconnect is a
// data race inside whatsmeow (FrameSocket.SendFrame against Close).
func linkSettled(t *testing.T, n *wafake.Network, phone string) (*whatsmeow.Client, *events.PairSuccess) {
	t.Helper()
	cli, ps := linkByQR(t, n, phone)
	t.Cleanup(func() {
		testclient.Until(t, 10*time.Second, `n.Unacked(ps.ID) == 0`, func() bool { return n.Unacked(ps.ID) == 0 })
	})
	return cli, ps
}

// fakeJPEG is bytes with a JPEG header, which is all the network checks.
func fakeJPEG(t *testing.T) []byte {
	t.Helper()
	b := make([]byte, 2048)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return append([]byte{0xFF, 0xD8, 0xFF, 0xE0}, b...)
}

func hexSHA(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func TestPrivacySettings(t *testing.T) {
	t.Parallel()
	const phone = "491701110001"
	n := startNetwork(t)
	cliA, _ := linkSettled(t, n, phone)
	cliB, _ := linkSettled(t, n, phone)
	changedA, changedB := eventsOf[*events.PrivacySettings](cliA), eventsOf[*events.PrivacySettings](cliB)
	ctx := context.Background()

	got, err := cliA.TryFetchPrivacySettings(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	all := types.PrivacySettings{GroupAdd: "all", LastSeen: "all", Status: "all", Profile: "all", ReadReceipts: "all", Online: "all", CallAdd: "all"}
	if *got != all {
		t.Fatalf("fresh account's privacy %+v, want every category all", *got)
	}

	if _, err := cliA.SetPrivacySetting(ctx, types.PrivacySettingTypeLastSeen, types.PrivacySettingNone); err != nil {
		t.Fatal(err)
	}
	if acct, _ := n.Account(phone); acct.Privacy.LastSeen != types.PrivacySettingNone || acct.Privacy.Profile != types.PrivacySettingAll {
		t.Errorf("network holds %+v after setting last seen to none", acct.Privacy)
	}
	// The other linked device is told; the device that made the change is not.
	if e := nextEvent(t, changedB); !e.LastSeenChanged || e.ReadReceiptsChanged {
		t.Errorf("other device's event %+v, want only LastSeenChanged", e)
	}
	if s := cliB.GetPrivacySettings(ctx); s.LastSeen != types.PrivacySettingNone {
		t.Errorf("other device now sees last seen %q", s.LastSeen)
	}
	noEvent(t, changedA)
	if fresh, err := cliA.TryFetchPrivacySettings(ctx, true); err != nil || fresh.LastSeen != types.PrivacySettingNone {
		t.Errorf("refetched %+v (%v), want last seen none", fresh, err)
	}

	// A value the category does not take is refused and changes nothing.
	if _, err := cliA.SetPrivacySetting(ctx, types.PrivacySettingTypeReadReceipts, types.PrivacySettingContacts); !errors.Is(err, whatsmeow.ErrIQBadRequest) {
		t.Errorf("readreceipts=contacts: %v, want bad request", err)
	}
	if acct, _ := n.Account(phone); acct.Privacy.ReadReceipts != types.PrivacySettingAll {
		t.Errorf("a refused value was stored: %q", acct.Privacy.ReadReceipts)
	}

	// A change on the phone reaches both linked devices.
	if err := n.SetPrivacy(phone, types.PrivacySettingTypeCallAdd, types.PrivacySettingKnown); err != nil {
		t.Fatal(err)
	}
	for _, ch := range []<-chan *events.PrivacySettings{changedA, changedB} {
		if e := nextEvent(t, ch); !e.CallAddChanged {
			t.Errorf("phone change gave %+v, want CallAddChanged", e)
		}
	}
	if s := cliA.GetPrivacySettings(ctx); s.CallAdd != types.PrivacySettingKnown {
		t.Errorf("device sees calladd %q after the phone's change", s.CallAdd)
	}
	if err := n.SetPrivacy(phone, types.PrivacySettingTypeOnline, types.PrivacySettingNone); err == nil {
		t.Error("the phone set online=none")
	}
}

func TestDefaultDisappearingTimer(t *testing.T) {
	t.Parallel()
	const phone = "491701110002"
	n := startNetwork(t)
	cli, _ := linkSettled(t, n, phone)
	ctx := context.Background()
	if err := cli.SetDefaultDisappearingTimer(ctx, 7*24*time.Hour); err != nil {
		t.Fatal(err)
	}
	if acct, _ := n.Account(phone); acct.DisappearingSeconds != 604800 {
		t.Errorf("disappearing %d s, want 604800", acct.DisappearingSeconds)
	}
	if err := cli.SetDefaultDisappearingTimer(ctx, time.Hour); !errors.Is(err, whatsmeow.ErrIQBadRequest) {
		t.Errorf("1 h timer: %v, want bad request (WhatsApp offers off, 24 h, 7 d, 90 d)", err)
	}
	if err := cli.SetDefaultDisappearingTimer(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if acct, _ := n.Account(phone); acct.DisappearingSeconds != 0 {
		t.Errorf("disappearing %d s after turning it off", acct.DisappearingSeconds)
	}
}

func TestOwnProfilePicture(t *testing.T) {
	t.Parallel()
	const phone, other = "491701110003", "491701110004"
	n := startNetwork(t)
	cli, ps := linkSettled(t, n, phone)
	watcher, _ := linkSettled(t, n, other)
	pictures := eventsOf[*events.Picture](watcher)
	ctx := context.Background()
	own := ps.ID.ToNonAD()

	if _, err := watcher.GetProfilePictureInfo(ctx, own, nil); !errors.Is(err, whatsmeow.ErrProfilePictureNotSet) {
		t.Errorf("picture of an account without one: %v, want ErrProfilePictureNotSet", err)
	}
	if _, err := cli.SetGroupPhoto(ctx, types.EmptyJID, []byte("GIF89a not a jpeg")); !errors.Is(err, whatsmeow.ErrInvalidImageFormat) {
		t.Errorf("non-JPEG picture: %v, want ErrInvalidImageFormat", err)
	}

	jpeg := fakeJPEG(t)
	id, err := cli.SetGroupPhoto(ctx, types.EmptyJID, jpeg)
	if err != nil {
		t.Fatal(err)
	}
	acct, _ := n.Account(phone)
	if id == "" || acct.PictureID != id || acct.PictureSHA256 != hexSHA(jpeg) {
		t.Errorf("network holds picture %s %s, want %s %s", acct.PictureID, acct.PictureSHA256, id, hexSHA(jpeg))
	}
	if e := nextEvent(t, pictures); e.JID != own || e.PictureID != id || e.Remove {
		t.Errorf("contact's picture event %+v, want %s set to %s", e, own, id)
	}

	info, err := watcher.GetProfilePictureInfo(ctx, own, nil)
	if err != nil {
		t.Fatal(err)
	}
	if info.ID != id || info.Type != "image" || len(info.Hash) != 32 || hex.EncodeToString(info.Hash) != hexSHA(jpeg) {
		t.Errorf("picture info %+v", info)
	}
	resp, err := n.HTTPClient().Get(info.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || hexSHA(body) != hexSHA(jpeg) {
		t.Errorf("downloading %s: %d, %d bytes, want the picture", info.URL, resp.StatusCode, len(body))
	}
	if same, err := watcher.GetProfilePictureInfo(ctx, own, &whatsmeow.GetProfilePictureParams{ExistingID: id}); same != nil || err != nil {
		t.Errorf("asking with the current id: %+v, %v, want nil (unchanged)", same, err)
	}

	// With the own JID as target, the same as without one.
	jpeg2 := fakeJPEG(t)
	id2, err := cli.SetGroupPhoto(ctx, own, jpeg2)
	if err != nil || id2 == id {
		t.Fatalf("second picture: id %q (%v), want a new id", id2, err)
	}
	if acct, _ := n.Account(phone); acct.PictureSHA256 != hexSHA(jpeg2) {
		t.Error("the picture set with the own JID as target was not stored")
	}
	if e := nextEvent(t, pictures); e.PictureID != id2 {
		t.Errorf("second picture event %+v", e)
	}

	// Profile photo privacy "none" hides it from others, not from the owner.
	if _, err := cli.SetPrivacySetting(ctx, types.PrivacySettingTypeProfile, types.PrivacySettingNone); err != nil {
		t.Fatal(err)
	}
	if _, err := watcher.GetProfilePictureInfo(ctx, own, nil); !errors.Is(err, whatsmeow.ErrProfilePictureUnauthorized) {
		t.Errorf("hidden picture: %v, want ErrProfilePictureUnauthorized", err)
	}
	if mine, err := cli.GetProfilePictureInfo(ctx, own, nil); err != nil || mine.ID != id2 {
		t.Errorf("own hidden picture: %+v, %v", mine, err)
	}

	if _, err := cli.SetGroupPhoto(ctx, types.EmptyJID, nil); err != nil {
		t.Fatal(err)
	}
	if acct, _ := n.Account(phone); acct.PictureSHA256 != "" || acct.PictureID != "" {
		t.Errorf("picture still held after removal: %+v", acct)
	}
	if e := nextEvent(t, pictures); !e.Remove || e.JID != own {
		t.Errorf("removal event %+v", e)
	}
}

func TestStatusBlocklistAndAccountView(t *testing.T) {
	t.Parallel()
	const phone, rude, spammer = "491701110005", "491701110006", "491701110007"
	n := startNetwork(t)
	cliA, psA := linkSettled(t, n, phone)
	cliB, psB := linkSettled(t, n, phone)
	blockA, blockB := eventsOf[*events.Blocklist](cliA), eventsOf[*events.Blocklist](cliB)
	ctx := context.Background()

	about := "out of office"
	if err := cliA.SetStatusMessage(ctx, types.SetStatusInput{Text: &about}); err != nil {
		t.Fatal(err)
	}
	tooLong := strings.Repeat("x", 140)
	if err := cliA.SetStatusMessage(ctx, types.SetStatusInput{Text: &tooLong}); err == nil {
		t.Error("an about text of 140 characters was accepted")
	}
	// The status namespace also carries the status broadcast audience.
	if sp, err := cliA.GetStatusPrivacy(ctx); err != nil || len(sp) != 1 || sp[0].Type != types.StatusPrivacyTypeContacts {
		t.Errorf("status privacy %+v (%v), want the default (contacts)", sp, err)
	}
	cliA.Store.PushName = "Alice"
	if err := cliA.SendPresence(ctx, types.PresenceAvailable); err != nil {
		t.Fatal(err)
	}

	if list, err := cliA.GetBlocklist(ctx); err != nil || len(list.JIDs) != 0 {
		t.Fatalf("fresh blocklist %+v (%v), want empty", list, err)
	}
	rudeJID := types.NewJID(rude, types.DefaultUserServer)
	list, err := cliA.UpdateBlocklist(ctx, rudeJID, events.BlocklistChangeActionBlock)
	if err != nil || !slices.Equal(list.JIDs, []types.JID{rudeJID}) || list.DHash == "" {
		t.Fatalf("after blocking: %+v (%v)", list, err)
	}
	if e := nextEvent(t, blockB); len(e.Changes) != 1 || e.Changes[0].JID != rudeJID || e.Changes[0].Action != events.BlocklistChangeActionBlock || e.DHash != list.DHash {
		t.Errorf("other device's blocklist event %+v", e)
	}
	noEvent(t, blockA)
	if _, err := n.CallOffer(rude, psA.ID.ToNonAD()); err == nil {
		t.Error("a blocked contact could call")
	}

	// The phone blocks someone: both linked devices are told.
	if err := n.SetBlocked(phone, spammer, true); err != nil {
		t.Fatal(err)
	}
	for _, ch := range []<-chan *events.Blocklist{blockA, blockB} {
		if e := nextEvent(t, ch); len(e.Changes) != 1 || e.Changes[0].JID.User != spammer || e.Changes[0].Action != events.BlocklistChangeActionBlock {
			t.Errorf("phone's block event %+v", e)
		}
	}
	if list, err := cliB.GetBlocklist(ctx); err != nil || len(list.JIDs) != 2 {
		t.Errorf("blocklist %+v (%v), want both", list, err)
	}
	if _, err := cliB.UpdateBlocklist(ctx, rudeJID, events.BlocklistChangeActionUnblock); err != nil {
		t.Fatal(err)
	}
	if e := nextEvent(t, blockA); len(e.Changes) != 1 || e.Changes[0].Action != events.BlocklistChangeActionUnblock {
		t.Errorf("unblock event %+v", e)
	}

	acct, ok := n.Account(phone)
	if !ok {
		t.Fatal("no account")
	}
	want := []types.JID{psA.ID, psB.ID}
	if acct.Status != "out of office" || acct.PushName != "Alice" || !slices.Equal(acct.LinkedDevices, want) ||
		len(acct.Blocked) != 1 || acct.Blocked[0].User != spammer || acct.Privacy.Online != types.PrivacySettingAll {
		t.Errorf("account view %+v, want status, push name Alice, devices %v, blocked %s", acct, want, spammer)
	}
	if _, ok := n.Account("4917011100000"); ok {
		t.Error("a number ending in 0000 has an account")
	}
}

func TestIsOnWhatsApp(t *testing.T) {
	t.Parallel()
	n := startNetwork(t)
	cli, _ := linkSettled(t, n, "491701110008")
	got, err := cli.IsOnWhatsApp(context.Background(), []string{"+491701110009", "+491701110000"})
	if err != nil {
		t.Fatal(err)
	}
	on := map[string]types.IsOnWhatsAppResponse{}
	for _, r := range got {
		on[r.Query] = r
	}
	if len(got) != 2 || !on["+491701110009"].IsIn || on["+491701110000"].IsIn {
		t.Errorf("IsOnWhatsApp %+v, want the first on WhatsApp and the 0000 number not", got)
	}
	acct, ok := n.Account("491701110009")
	if !ok {
		t.Error("Account says the number on WhatsApp is not")
	}
	// whatsmeow asks in LID addressing mode (IsOnWhatsApp, user.go): a user
	// on WhatsApp is answered by LID, with the number beside it, and the
	// client learns the mapping.
	if r := on["+491701110009"]; r.JID != acct.LID || r.PhoneNumber != types.NewJID("491701110009", types.DefaultUserServer) {
		t.Errorf("answer %+v, want JID %s and the phone number", r, acct.LID)
	}
	if lid, err := cli.Store.LIDs.GetLIDForPN(context.Background(), types.NewJID("491701110009", types.DefaultUserServer)); err != nil || lid != acct.LID {
		t.Errorf("LID map gives %s (%v), want %s", lid, err, acct.LID)
	}
}

package wafake_test

import (
	"context"
	"slices"
	"testing"

	"go.mau.fi/whatsmeow/appstate"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"
)

// TestWhatAccountsTellAboutThemselves: a contact's push name and verified
// business name reach a linked device with the contact's messages
// (PushName, BusinessName), its about text by a status notification
// (UserAbout), also when set through whatsmeow's own call; the phone's own
// name change reaches its devices through app state.
func TestWhatAccountsTellAboutThemselves(t *testing.T) {
	t.Parallel()
	const phone, contact = "491701234572", "4915155501111"
	n := startNetwork(t)
	cli, _ := linkSettled(t, n, phone)
	waitAppStateSynced(t, cli)
	pushNames := eventsOf[*events.PushName](cli)
	business := eventsOf[*events.BusinessName](cli)
	abouts := eventsOf[*events.UserAbout](cli)
	ownName := eventsWhere(cli, func(e *events.PushNameSetting) bool { return e.Action.GetName() == "Shop Phone" })

	if _, err := n.SendText(contact, phone, "first"); err != nil {
		t.Fatal(err)
	}
	if e := nextEvent(t, pushNames); e.JID.User != contact || e.NewPushName != "Contact "+contact {
		t.Errorf("PushName %+v", e)
	}
	if err := n.SetPushName(contact, "Erika"); err != nil {
		t.Fatal(err)
	}
	if err := n.SetBusinessName(contact, "Erika's Shop"); err != nil {
		t.Fatal(err)
	}
	if _, err := n.SendText(contact, phone, "second"); err != nil {
		t.Fatal(err)
	}
	if e := nextEvent(t, pushNames); e.NewPushName != "Erika" || e.OldPushName != "Contact "+contact {
		t.Errorf("PushName %+v", e)
	}
	if e := nextEvent(t, business); e.JID.User != contact || e.NewBusinessName != "Erika's Shop" {
		t.Errorf("BusinessName %+v", e)
	}
	if a, _ := n.Account(contact); a.PushName != "Erika" {
		t.Errorf("network push name %q", a.PushName)
	}

	if err := n.SetAbout(contact, "Out fishing"); err != nil {
		t.Fatal(err)
	}
	if e := nextEvent(t, abouts); e.JID.User != contact || e.Status != "Out fishing" {
		t.Errorf("UserAbout %+v", e)
	}

	// The other way round: the session's account sets its about text, a
	// device of the contact hears of it.
	other, _ := linkSettled(t, n, contact)
	theirAbouts := eventsOf[*events.UserAbout](other)
	if err := cli.SetStatusMessage(context.Background(), types.SetStatusInput{Text: proto.String("Busy")}); err != nil {
		t.Fatal(err)
	}
	if e := nextEvent(t, theirAbouts); e.JID.User != phone || e.Status != "Busy" {
		t.Errorf("UserAbout of the session's account %+v", e)
	}

	// critical_block is the devices' to start (the phone seeds it not): a
	// device's first write, then the phone's change arrives as one.
	if err := cli.SendAppState(context.Background(), appstate.BuildSettingPushName("Shop")); err != nil {
		t.Fatal(err)
	}
	if err := n.SetPushName(phone, "Shop Phone"); err != nil {
		t.Fatal(err)
	}
	if e := nextEvent(t, ownName); e.Action.GetName() != "Shop Phone" {
		t.Errorf("PushNameSetting %+v", e)
	}
}

// TestBlocklistReplaced: the phone replacing its block list wholesale tells
// its devices only that it changed (action modify); they read it again.
func TestBlocklistReplaced(t *testing.T) {
	t.Parallel()
	const phone = "491701234573"
	n := startNetwork(t)
	cli, _ := linkSettled(t, n, phone)
	changes := eventsOf[*events.Blocklist](cli)
	if err := n.SetBlocked(phone, "4915155502222", true); err != nil {
		t.Fatal(err)
	}
	nextEvent(t, changes)
	if err := n.SetBlocklist(phone, []string{"4915155503333", "4915155504444"}); err != nil {
		t.Fatal(err)
	}
	e := nextEvent(t, changes)
	if e.Action != events.BlocklistActionModify || len(e.Changes) != 0 || e.PrevDHash == "" || e.DHash == e.PrevDHash {
		t.Errorf("Blocklist %+v", e)
	}
	list, err := cli.GetBlocklist(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []types.JID{pn("4915155503333"), pn("4915155504444")}
	if !slices.Equal(list.JIDs, want) || list.DHash != e.DHash {
		t.Errorf("block list %v (%s), want %v (%s)", list.JIDs, list.DHash, want, e.DHash)
	}
}

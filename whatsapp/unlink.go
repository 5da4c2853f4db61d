package whatsapp

import (
	"context"

	"go.mau.fi/whatsmeow"
	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"
)

// unlink asks WhatsApp to remove the session's device from the account
// (the phone no longer lists it), as whatsmeow's Logout does, without
// Logout's deletion of the keys through the client's own device: that
// rewrites the device's stores while the client's goroutines may still
// read them (whatsmeow's updatePushName, started for a message just
// received, reads Store.Contacts: a data race the detector found when a
// session was deleted as its messages arrived). The caller detaches the
// client, then deletes the keys through a device read anew (deleteKeys).
func unlink(ctx context.Context, cli *whatsmeow.Client) error {
	own := cli.Store.ID
	if own == nil {
		return whatsmeow.ErrNotLoggedIn
	}
	_, err := cli.DangerousInternals().SendIQ(ctx, whatsmeow.DangerousInfoQuery{
		Namespace: "md", Type: "set", To: types.ServerJID,
		Content: []waBinary.Node{{Tag: "remove-companion-device", Attrs: waBinary.Attrs{"jid": *own, "reason": "user_initiated"}}},
	})
	return err
}

// deleteKeys deletes the device keys of jid from the store, through a
// device read anew (no client's).
func (m *Manager) deleteKeys(ctx context.Context, jid types.JID) error {
	dev, err := m.store.GetDevice(ctx, jid)
	if err != nil {
		return err
	}
	if dev == nil {
		return nil
	}
	return dev.Delete(ctx)
}

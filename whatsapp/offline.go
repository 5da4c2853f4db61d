package whatsapp

// The offline queue: at a login WhatsApp replays what it kept for the
// device while it was offline (messages, receipts, notifications, calls),
// each stanza an event like any other, stored before it is acknowledged;
// then it says the replay is over. connection.update tells a receiver
// where the replay stands: {offlineSync: {completed: false, count,
// messages}} when WhatsApp announces it, {completed: true, count} once
// every stanza of it has been handled.

import (
	"go.mau.fi/whatsmeow/types/events"

	"github.com/wagraph/wagraph/internal/events/payload"
)

// handleOfflineSyncPreview: WhatsApp announces how much it is about to
// replay.
func (r *clientRun) handleOfflineSyncPreview(evt *events.OfflineSyncPreview) bool {
	messages := evt.Messages
	return r.publishOfflineSync(&payload.OfflineSync{Count: evt.Total, Messages: &messages})
}

// handleOfflineSyncCompleted: the replay is over. whatsmeow handles the
// stanzas of one connection in order, so every replayed message has been
// published (or refused, and will come again) before this.
func (r *clientRun) handleOfflineSyncCompleted(evt *events.OfflineSyncCompleted) bool {
	return r.publishOfflineSync(&payload.OfflineSync{Completed: true, Count: evt.Count})
}

// publishOfflineSync publishes connection.update with the session's
// current status and sync. The status is not changed: whatsmeow may tell
// the end of the replay before its Connected (which it dispatches once the
// login's own IQs are answered), and the status stays what it is.
func (r *clientRun) publishOfflineSync(sync *payload.OfflineSync) bool {
	d := &payload.Connection{OfflineSync: sync}
	return r.update(func(s *session) bool {
		c := s.st.connection()
		d.Status, d.QR, d.Reason = string(c.status), payload.Text(c.qr), payload.Text(c.reason)
		return true
	}, Event{Kind: KindConnectionUpdate, Data: d})
}

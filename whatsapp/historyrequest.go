package whatsapp

// requestHistory: older messages of a chat asked from the phone. The
// request is a peer message to the account's own phone (whatsmeow's
// BuildHistorySyncRequest, sent with SendPeerMessage) anchored on the
// oldest message the session holds of the chat; the phone answers later
// with an on-demand history sync, which arrives as any history sync does
// (history.go): downloaded, stored, and delivered as messaging-history.set
// with the chat asked about.

import (
	"context"
	"time"

	"go.mau.fi/whatsmeow/types"
)

// HistoryRequest asks the phone for up to Count messages of Chat older
// than the oldest one the session holds.
type HistoryRequest struct {
	Chat  types.JID
	Count int
	// OldestID is the oldest stored message of the chat, sent by the
	// account when OldestFromMe, at OldestAt; "" when none is stored:
	// the phone then gives the chat's most recent messages.
	OldestID     string
	OldestFromMe bool
	OldestAt     time.Time
}

// OpRequestHistory asks the phone for older messages of a chat.
func OpRequestHistory() Op[HistoryRequest, None] {
	return op("requestHistory", noResult((*Manager).RequestHistory))
}

// RequestHistory sends the phone the history request req.
func (m *Manager) RequestHistory(ctx context.Context, sessionID string, req HistoryRequest) error {
	cli, err := m.client(sessionID)
	if err != nil {
		return err
	}
	at := req.OldestAt
	if req.OldestID == "" {
		at = time.Now()
	}
	anchor := &types.MessageInfo{
		MessageSource: types.MessageSource{Chat: req.Chat, IsFromMe: req.OldestFromMe},
		ID:            req.OldestID, Timestamp: at,
	}
	if _, err := cli.SendPeerMessage(ctx, cli.BuildHistorySyncRequest(anchor, req.Count)); err != nil {
		return classify(sessionID, "ask the phone for the chat's history", err)
	}
	return nil
}

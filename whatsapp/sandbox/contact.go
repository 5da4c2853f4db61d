package sandbox

import (
	"context"
	"log/slog"
	"time"

	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// The controls of a simulated contact: the phone of From writing to To, a
// user JID (simulated phones only write 1:1 chats), reacting, confirming,
// showing its presence.

// SendText has the simulated phone of From send Text to To; every linked
// device of that account gets it. It answers the message id.
type SendText struct {
	From string `json:"from"`
	To   string `json:"to"`
	Text string `json:"text"`
}

func (SendText) control() Control[SendText, Sent] {
	return Control[SendText, Sent]{
		name: "send-text",
		check: func(q SendText) error {
			return first(checkContact(q.From, q.To), checkText(q.Text))
		},
		run: func(_ context.Context, n *wafake.Network, _ *slog.Logger, q SendText) (Sent, error) {
			to := checked(q.To).User
			id, err := n.SendText(q.From, to, q.Text)
			return Sent{id}, refusal(err, to)
		},
	}
}

// SendImage has the simulated phone of From send an image: uploaded to the
// network encrypted, as a phone would, then sent like SendText.
type SendImage struct {
	From     string `json:"from"`
	To       string `json:"to"`
	Image    []byte `json:"image"` // base64
	Mimetype string `json:"mimetype"`
	Caption  string `json:"caption,omitempty"`
}

func (SendImage) control() Control[SendImage, Sent] {
	return Control[SendImage, Sent]{
		name: "send-image",
		check: func(q SendImage) error {
			return first(checkContact(q.From, q.To), checkImage(q.Image, q.Mimetype))
		},
		run: func(_ context.Context, n *wafake.Network, _ *slog.Logger, q SendImage) (Sent, error) {
			to := checked(q.To).User
			// wafake uploads before it looks for a recipient's device: look
			// first, so that a refused send leaves no orphan blob.
			if len(n.LinkedDevices(to)) == 0 {
				return Sent{}, noDevice(to)
			}
			id, err := n.SendImage(q.From, to, q.Image, q.Mimetype, q.Caption)
			return Sent{id}, refusal(err, to)
		},
	}
}

// React has the simulated phone of From react with Emoji to message
// MessageID of its chat with To.
type React struct {
	From      string `json:"from"`
	To        string `json:"to"`
	MessageID string `json:"messageId"`
	Emoji     string `json:"emoji"`
}

func (React) control() Control[React, Done] {
	return Control[React, Done]{
		name: "react",
		check: func(q React) error {
			return first(checkContact(q.From, q.To), checkMessageID(q.MessageID), checkEmoji(q.Emoji))
		},
		run: func(_ context.Context, n *wafake.Network, _ *slog.Logger, q React) (Done, error) {
			to := checked(q.To).User
			_, err := n.SendReaction(q.From, to, q.MessageID, q.Emoji)
			return Done{}, refusal(err, to)
		},
	}
}

// Receipt has the simulated phone of From confirm message MessageID, which
// To sent it: Type is delivered, read or played.
type Receipt struct {
	From      string `json:"from"`
	To        string `json:"to"`
	MessageID string `json:"messageId"`
	Type      string `json:"type"`
}

func (Receipt) control() Control[Receipt, Done] {
	return Control[Receipt, Done]{
		name: "receipt",
		check: func(q Receipt) error {
			return first(checkContact(q.From, q.To), checkMessageID(q.MessageID), checkReceiptType(q.Type))
		},
		run: func(_ context.Context, n *wafake.Network, _ *slog.Logger, q Receipt) (Done, error) {
			to := checked(q.To)
			return Done{}, refusal(n.SendReceipt(q.From, to, []string{q.MessageID}, q.Type), to.User)
		},
	}
}

// Presence has From show State to To: available and unavailable reach the
// linked devices that subscribed to From (else a Conflict, as WhatsApp
// sends availability only to subscribers); composing and paused reach
// every online linked device of To.
type Presence struct {
	From  string `json:"from"`
	To    string `json:"to"`
	State string `json:"state"`
}

func (Presence) control() Control[Presence, Done] {
	return Control[Presence, Done]{
		name: "presence",
		check: func(q Presence) error {
			return first(checkContact(q.From, q.To), checkPresenceState(q.State))
		},
		run: func(_ context.Context, n *wafake.Network, _ *slog.Logger, q Presence) (Done, error) {
			to := checked(q.To)
			return Done{}, refusal(n.SendPresence(q.From, to, q.State), to.User)
		},
	}
}

// Call has From call To, a user JID (a video call with Video): every
// linked device of To gets the offer. Its answer is the call id.
type Call struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Video bool   `json:"video"`
}

func (Call) control() Control[Call, Sent] {
	return Control[Call, Sent]{
		name:  "call",
		check: func(q Call) error { return checkContact(q.From, q.To) },
		run: func(_ context.Context, n *wafake.Network, _ *slog.Logger, q Call) (Sent, error) {
			to := checked(q.To)
			id, err := n.Call(q.From, to, wafake.CallStanza{Stage: "offer", Video: q.Video})
			return Sent{ID: id}, refusal(err, to.User)
		},
	}
}

// checkContact accepts a simulated phone writing to a user: From an
// account, To its user JID.
func checkContact(from, to string) error {
	return first(checkAccount("from", from), checkUser("to", to))
}

// Vote has the simulated phone of From vote for Options (none takes its
// vote back) in poll PollID, which To sent it: encrypted under the poll's
// secret. The options are the receiver's to check, as on WhatsApp.
type Vote struct {
	From    string   `json:"from"`
	To      string   `json:"to"`
	PollID  string   `json:"pollId"`
	Options []string `json:"options"`
}

// maxVoteOptions bounds a vote: a poll has at most 12 options.
const maxVoteOptions = 12

func (Vote) control() Control[Vote, Done] {
	return Control[Vote, Done]{
		name: "vote",
		check: func(q Vote) error {
			return first(checkContact(q.From, q.To), checkID("pollId", q.PollID), checkVoteOptions(q.Options))
		},
		run: func(_ context.Context, n *wafake.Network, _ *slog.Logger, q Vote) (Done, error) {
			to := checked(q.To).User
			_, err := n.Vote(q.From, to, q.PollID, q.Options)
			return Done{}, refusal(err, to)
		},
	}
}

// Edit has the simulated phone of From send To an edit of MessageID
// (encrypted when the phone has the message's secret). Who may edit it,
// and whether it came within WhatsApp's window, is for the receiver to
// judge: SentAt (zero: now) is the edit's own time as the phone stamps it,
// so a late edit can be tried without waiting.
type Edit struct {
	From      string    `json:"from"`
	To        string    `json:"to"`
	MessageID string    `json:"messageId"`
	Text      string    `json:"text"`
	SentAt    time.Time `json:"sentAt,omitzero"`
}

func (Edit) control() Control[Edit, Done] {
	return Control[Edit, Done]{
		name: "edit",
		check: func(q Edit) error {
			return first(checkContact(q.From, q.To), checkMessageID(q.MessageID), checkText(q.Text), checkSentAt(q.SentAt))
		},
		run: func(_ context.Context, n *wafake.Network, _ *slog.Logger, q Edit) (Done, error) {
			to := checked(q.To).User
			_, err := n.SendEdit(q.From, to, q.MessageID, q.Text, q.SentAt)
			return Done{}, refusal(err, to)
		},
	}
}

// Revoke has the simulated phone of From delete MessageID for everyone in
// its chat with To; unchecked, as Edit.
type Revoke struct {
	From      string `json:"from"`
	To        string `json:"to"`
	MessageID string `json:"messageId"`
}

func (Revoke) control() Control[Revoke, Done] {
	return Control[Revoke, Done]{
		name: "revoke",
		check: func(q Revoke) error {
			return first(checkContact(q.From, q.To), checkMessageID(q.MessageID))
		},
		run: func(_ context.Context, n *wafake.Network, _ *slog.Logger, q Revoke) (Done, error) {
			to := checked(q.To).User
			_, err := n.SendRevoke(q.From, to, q.MessageID)
			return Done{}, refusal(err, to)
		},
	}
}

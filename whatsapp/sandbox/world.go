package sandbox

import (
	"context"
	"log/slog"
	"time"

	"go.mau.fi/whatsmeow/types"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// The controls that read the simulated world: what a phone received, and
// the network's view of groups and accounts. They change nothing.

// Inbox is every message the phone of Phone received, oldest first, as it
// decrypted them; a revoked message is marked Revoked.
type Inbox struct {
	Phone string `json:"phone"`
}

func (Inbox) control() Control[Inbox, []Message] {
	return Control[Inbox, []Message]{
		name:  "inbox",
		check: func(q Inbox) error { return checkAccount("phone", q.Phone) },
		run: func(_ context.Context, n *wafake.Network, log *slog.Logger, q Inbox) ([]Message, error) {
			return inboxOf(n, log, q.Phone, n.Inbox(q.Phone)), nil
		},
	}
}

// Media is the decrypted attachment of message MessageID that the phone of
// Phone received.
type Media struct {
	Phone     string `json:"phone"`
	MessageID string `json:"messageId"`
}

func (Media) control() Control[Media, []byte] {
	return Control[Media, []byte]{
		name: "media",
		check: func(q Media) error {
			return first(checkAccount("phone", q.Phone), checkMessageID(q.MessageID))
		},
		run: func(_ context.Context, n *wafake.Network, log *slog.Logger, q Media) ([]byte, error) {
			for _, r := range n.Inbox(q.Phone) {
				if r.ID != q.MessageID || r.From.User == q.Phone {
					continue
				}
				data, err := n.MediaOf(r.Message)
				if err != nil {
					log.Debug("sandbox: no readable attachment", "message", q.MessageID, "err", err)
					return nil, fault.New(fault.NotFound, "message %s has no attachment the phone can read", q.MessageID)
				}
				return data, nil
			}
			return nil, fault.New(fault.NotFound, "%s received no message %s", q.Phone, q.MessageID)
		},
	}
}

// Group is the network's view of group JID; nil when the network has no
// such group.
type Group struct {
	JID string `json:"jid"`
}

func (Group) control() Control[Group, *GroupInfo] {
	return Control[Group, *GroupInfo]{
		name:  "group",
		check: func(q Group) error { return checkGroup("jid", q.JID) },
		run: func(_ context.Context, n *wafake.Network, _ *slog.Logger, q Group) (*GroupInfo, error) {
			info, ok := n.Group(checked(q.JID))
			if !ok {
				return nil, nil
			}
			return groupOf(info), nil
		},
	}
}

// Account is the network's view of the account of Phone; nil when Phone is
// not on WhatsApp. An account nobody used yet has the defaults.
type Account struct {
	Phone string `json:"phone"`
}

func (Account) control() Control[Account, *AccountInfo] {
	return Control[Account, *AccountInfo]{
		name:  "account",
		check: func(q Account) error { return checkPhone("phone", q.Phone) },
		run: func(_ context.Context, n *wafake.Network, _ *slog.Logger, q Account) (*AccountInfo, error) {
			info, ok := n.Account(q.Phone)
			if !ok {
				return nil, nil
			}
			return accountOf(info, n.ReceiptsFor(q.Phone), n.ChatStatesFor(q.Phone)), nil
		},
	}
}

// GroupParticipant is a member of a group and its role: member, admin or
// superadmin.
type GroupParticipant struct {
	Phone string `json:"phone"`
	Role  string `json:"role"`
}

// GroupInfo is the network's view of a group (SandboxGroup).
type GroupInfo struct {
	JID           string             `json:"jid"`
	Subject       string             `json:"subject"`
	Description   string             `json:"description"`
	Announce      bool               `json:"announce"`
	Locked        bool               `json:"locked"`
	InviteCode    string             `json:"inviteCode"`
	PictureSHA256 string             `json:"pictureSha256,omitempty"`
	Participants  []GroupParticipant `json:"participants"`
	// Owner is the creator's phone; Created when it was created.
	Owner   string    `json:"owner"`
	Created time.Time `json:"created"`
	// ApprovalMode: admins approve who joins by link; JoinRequests are the
	// phones waiting, oldest first. MemberAddMode is ADMINS or ALL (who
	// may add members). EphemeralSeconds is the disappearing timer (0 off).
	ApprovalMode     bool     `json:"approvalMode"`
	JoinRequests     []string `json:"joinRequests"`
	MemberAddMode    string   `json:"memberAddMode"`
	EphemeralSeconds int      `json:"ephemeralSeconds"`
}

// AccountInfo is the network's view of an account (SandboxAccount).
// Privacy is keyed by the SandboxPrivacy field names (lastSeen, online,
// profilePicture, status, readReceipts, groupsAdd, callAdd) and holds
// WhatsApp's values (all, contacts, contact_blacklist, none,
// match_last_seen, known).
type AccountInfo struct {
	Phone               string            `json:"phone"`
	PushName            string            `json:"pushName"`
	PictureSHA256       string            `json:"pictureSha256,omitempty"`
	Privacy             map[string]string `json:"privacy"`
	DisappearingSeconds int               `json:"disappearingSeconds"`
	LinkedDevices       []string          `json:"linkedDevices"` // device JID strings
	About               string            `json:"about"`
	// Blocklist is the phones the account blocked, in the order it
	// blocked them.
	Blocklist []string `json:"blocklist"`
	// Presence is the availability the account last showed its contacts:
	// available, unavailable, or "" when it never did.
	Presence string `json:"presence,omitempty"`
	// ReadReceipts are the read receipts the account got for its messages,
	// one per message, oldest first.
	ReadReceipts []ReadReceipt `json:"readReceipts"`
	// ChatStates are the chat states shown to the account, oldest first.
	ChatStates []ChatState `json:"chatStates"`
	// LastCallRejected is whether the last call the account made was
	// rejected; nil when it made none.
	LastCallRejected *bool `json:"lastCallRejected,omitempty"`
}

// ReadReceipt is a read receipt an account got: From (a phone) read
// MessageID.
type ReadReceipt struct {
	From      string    `json:"from"`
	MessageID string    `json:"messageId"`
	At        time.Time `json:"at"`
}

// ChatState is a chat state shown to an account: From (a phone) typing
// (composing), recording a voice note, or paused.
type ChatState struct {
	From  string    `json:"from"`
	State string    `json:"state"`
	At    time.Time `json:"at"`
}

func groupOf(g wafake.GroupInfo) *GroupInfo {
	out := &GroupInfo{
		JID: g.JID.String(), Subject: g.Subject, Description: g.Description,
		Announce: g.Announce, Locked: g.Locked, InviteCode: g.InviteCode, PictureSHA256: g.PictureSHA256,
		Participants: make([]GroupParticipant, 0, len(g.Participants)),
		Owner:        g.Creator, Created: g.Created.UTC().Round(0), ApprovalMode: g.Approval,
		JoinRequests: append([]string{}, g.Requests...), MemberAddMode: "ADMINS",
		EphemeralSeconds: int(g.Disappearing / time.Second),
	}
	if g.AllMembersAdd {
		out.MemberAddMode = "ALL"
	}
	for _, p := range g.Participants {
		out.Participants = append(out.Participants, GroupParticipant{Phone: p.Phone, Role: p.Role})
	}
	return out
}

func accountOf(a wafake.AccountInfo, receipts []wafake.ReceiptInfo, states []wafake.ChatStateInfo) *AccountInfo {
	p := a.Privacy
	out := &AccountInfo{
		Phone: a.Phone, PushName: a.PushName, PictureSHA256: a.PictureSHA256, About: a.Status, LastCallRejected: a.LastCallRejected,
		DisappearingSeconds: int(a.DisappearingSeconds),
		Privacy: map[string]string{
			"lastSeen": string(p.LastSeen), "online": string(p.Online), "profilePicture": string(p.Profile),
			"status": string(p.Status), "readReceipts": string(p.ReadReceipts), "groupsAdd": string(p.GroupAdd),
			"callAdd": string(p.CallAdd),
		},
		LinkedDevices: make([]string, 0, len(a.LinkedDevices)),
	}
	for _, d := range a.LinkedDevices {
		out.LinkedDevices = append(out.LinkedDevices, d.String())
	}
	out.Blocklist = make([]string, 0, len(a.Blocked))
	for _, b := range a.Blocked {
		out.Blocklist = append(out.Blocklist, b.User)
	}
	switch {
	case a.Presence == nil:
	case *a.Presence:
		out.Presence = "available"
	default:
		out.Presence = "unavailable"
	}
	out.ReadReceipts = []ReadReceipt{}
	for _, r := range receipts {
		if r.Type != types.ReceiptTypeRead {
			continue
		}
		for _, id := range r.MessageIDs {
			out.ReadReceipts = append(out.ReadReceipts, ReadReceipt{From: r.From.User, MessageID: id, At: r.Timestamp.UTC()})
		}
	}
	out.ChatStates = make([]ChatState, 0, len(states))
	for _, c := range states {
		out.ChatStates = append(out.ChatStates, ChatState{From: c.From, State: c.State, At: c.At.UTC()})
	}
	return out
}

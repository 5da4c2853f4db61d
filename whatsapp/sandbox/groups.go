package sandbox

import (
	"context"
	"errors"
	"log/slog"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// RequestJoin has the phone of From ask to join group JID, whose admins
// approve who joins, by the group's invite link: the admins' linked
// devices are told (group.join-request), as when a phone asks.
type RequestJoin struct {
	JID  string `json:"jid"`
	From string `json:"from"`
}

func (RequestJoin) control() Control[RequestJoin, Done] {
	return Control[RequestJoin, Done]{
		name:  "request-join",
		check: func(q RequestJoin) error { return first(checkGroup("jid", q.JID), checkAccount("from", q.From)) },
		run: func(_ context.Context, n *wafake.Network, _ *slog.Logger, q RequestJoin) (Done, error) {
			jid := checked(q.JID)
			g, ok := n.Group(jid)
			switch {
			case !ok:
				return Done{}, fault.New(fault.NotFound, "the simulated network has no group %s", q.JID)
			case !g.Approval:
				return Done{}, fault.New(fault.Conflict, "group %s does not need approval: its admins must turn approvalMode on before anyone asks to join", q.JID)
			}
			for _, p := range g.Participants {
				if p.Phone == q.From {
					return Done{}, fault.New(fault.Conflict, "%s is already a participant of group %s", q.From, q.JID)
				}
			}
			if _, err := n.RequestJoinGroup(q.From, g.InviteCode); err != nil {
				var ge *wafake.GroupError
				if errors.As(err, &ge) {
					return Done{}, fault.New(fault.WhatsAppRefused, "the network refused the request to join group %s (%d %s)", q.JID, ge.Code, ge.Text)
				}
				return Done{}, refusal(err, q.From)
			}
			return Done{}, nil
		},
	}
}

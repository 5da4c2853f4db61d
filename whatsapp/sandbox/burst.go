package sandbox

import (
	"context"
	"log/slog"
	"unicode/utf8"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// A burst of texts from a simulated contact (sandboxSendBurst), for load
// and crash tests.

// SendBurst has the simulated phone of From send Count texts, Prefix+"1" to
// Prefix+Count, to To, a user JID, as fast as the network can; every linked
// device of that account gets them in order, an offline one at its next
// login. The burst is not tied to ctx once started: a caller that goes
// away (a server killed mid-call in a crash test) does not cut it short.
// With Secrets each text carries a message secret, as phones send texts
// now (whatsmeow stores one per message received); without, none, as
// bursts always did (the control API's field; the GraphQL mutation sends
// none).
type SendBurst struct {
	From    string `json:"from"`
	To      string `json:"to"`
	Count   int    `json:"count"`
	Prefix  string `json:"prefix"`
	Secrets bool   `json:"secrets,omitempty"`
}

// Burst is the answer of SendBurst: how many texts were queued.
type Burst struct {
	Queued int `json:"queued"`
}

func (SendBurst) control() Control[SendBurst, Burst] {
	return Control[SendBurst, Burst]{
		name: "send-burst",
		check: func(q SendBurst) error {
			return first(checkContact(q.From, q.To), checkBurst(q.Count, q.Prefix))
		},
		run: func(_ context.Context, n *wafake.Network, log *slog.Logger, q SendBurst) (Burst, error) {
			to := checked(q.To).User
			send := n.SendBurst
			if q.Secrets {
				send = n.SendBurstWithSecrets
			}
			ids, err := send(q.From, to, q.Prefix, q.Count)
			if err != nil {
				log.Warn("sandbox: burst cut short", "queued", len(ids), "count", q.Count, "err", err)
			}
			return Burst{len(ids)}, refusal(err, to)
		},
	}
}

// checkBurst accepts a burst size of 1 to wafake.MaxBurst, and a prefix
// that leaves room for the number within WhatsApp's text limit.
func checkBurst(count int, prefix string) error {
	if count < 1 || count > wafake.MaxBurst {
		return fault.InvalidField("count", "count must be from 1 to %d (got %d)", wafake.MaxBurst, count)
	}
	if n := utf8.RuneCountInString(prefix); n > maxTextRunes-len("10000") {
		return fault.InvalidField("prefix", "prefix has %d characters; with the number a text must stay within WhatsApp's %d", n, maxTextRunes)
	}
	return nil
}

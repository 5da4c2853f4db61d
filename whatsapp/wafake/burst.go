package wafake

import (
	"fmt"
	"strconv"
	"time"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"google.golang.org/protobuf/proto"
)

// MaxBurst is the most texts one SendBurst sends (sandbox.md).
const MaxBurst = 10_000

// SendBurst has the phone of account from send count texts, prefix+"1" to
// prefix+count, to every linked device of account to, one after another as
// fast as the network can, for load and crash tests. Each goes the way of
// SendText: encrypted, queued for each device until it acknowledges it, so a
// device that is offline, or crashes before acknowledging, gets the rest at
// its next login, in order (the offline queue). Unlike SendText, the texts
// carry no message secret: a burst keeps the shape it had before phones
// gave their messages secrets, so that the load figures (BENCHMARKS.md)
// compare across versions. It returns the message ids in the order sent;
// on an error, those queued before it.
func (n *Network) SendBurst(from, to, prefix string, count int) ([]string, error) {
	return n.sendBurst(from, to, prefix, count, false)
}

// SendBurstWithSecrets is SendBurst with each text carrying the message
// secret phones now give it (secrets.go), which the receiving whatsmeow
// stores per message: the load as phones send it today (issue 35).
func (n *Network) SendBurstWithSecrets(from, to, prefix string, count int) ([]string, error) {
	return n.sendBurst(from, to, prefix, count, true)
}

func (n *Network) sendBurst(from, to, prefix string, count int, secrets bool) ([]string, error) {
	if count < 1 || count > MaxBurst {
		return nil, &ValueError{What: fmt.Sprintf("a burst size (1 to %d)", MaxBurst), Value: strconv.Itoa(count)}
	}
	ids := make([]string, 0, count)
	for i := 1; i <= count; i++ {
		id, err := n.sendMessage(from, to, &waE2E.Message{Conversation: proto.String(prefix + strconv.Itoa(i))}, secrets, time.Time{})
		if err != nil {
			return ids, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

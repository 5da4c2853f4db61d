package whatsapp

// Poll votes: a vote is encrypted with a key derived from the poll's
// message secret, which whatsmeow keeps for every poll the device received
// (live or in a history sync); it carries the SHA-256 hashes of the chosen
// options' names. The names are given where the session saw the poll.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/wagraph/wagraph/internal/events/payload"
)

// maxPolls bounds the polls a session remembers the options of: the
// newest are kept, the memory of a session stays small.
const maxPolls = 256

// pollMemory holds the option names of the polls a session saw since the
// process started, by poll message id. Its zero value is ready.
type pollMemory struct {
	mu      sync.Mutex
	order   []string
	options map[string][]string
}

func (p *pollMemory) remember(id string, options []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.options == nil {
		p.options = map[string][]string{}
	}
	if _, ok := p.options[id]; !ok {
		p.order = append(p.order, id)
	}
	p.options[id] = options
	for len(p.order) > maxPolls {
		delete(p.options, p.order[0])
		p.order = p.order[1:]
	}
}

// names returns the option names of hashes in poll id, or nil when the poll
// or one of the hashes is unknown.
func (p *pollMemory) names(id string, hashes [][]byte) []string {
	p.mu.Lock()
	options, ok := p.options[id]
	p.mu.Unlock()
	if !ok {
		return nil
	}
	byHash := make(map[[sha256.Size]byte]string, len(options))
	for _, o := range options {
		byHash[sha256.Sum256([]byte(o))] = o
	}
	out := make([]string, 0, len(hashes))
	for _, h := range hashes {
		if len(h) != sha256.Size {
			return nil
		}
		name, ok := byHash[[sha256.Size]byte(h)]
		if !ok {
			return nil
		}
		out = append(out, name)
	}
	return out
}

func optionNames(p *waE2E.PollCreationMessage) []string {
	out := make([]string, 0, len(p.GetOptions()))
	for _, o := range p.GetOptions() {
		out = append(out, o.GetOptionName())
	}
	return out
}

// handlePollVote publishes messages.update of the poll with status "voted"
// and the vote. A vote this device cannot decrypt (a poll it never
// received: sent before it was linked and not in its history) is published
// without a selection, with the reason in error.
func (r *clientRun) handlePollVote(evt *events.Message) bool {
	info := &evt.Info
	key := evt.Message.GetPollUpdateMessage().GetPollCreationMessageKey()
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	voter := senderOf(ctx, r.cli, &info.MessageSource)
	v := &payload.PollVote{PollID: key.GetID(), Voter: voter.jid().String()}
	v.VoterPhone = voter.phoneText()
	v.VoterLID = voter.lidText()
	d := &payload.MessageStatus{
		ID: key.GetID(), Chat: chatOf(ctx, r.cli, &info.MessageSource).String(), Status: "voted",
		Timestamp: payload.At(info.Timestamp), MessageID: payload.Text(info.ID), PollVote: v,
	}
	vote, err := r.cli.DecryptPollVote(ctx, evt)
	if err != nil {
		r.s.log.Warn("a poll vote could not be decrypted", "poll", key.GetID(), "err", err)
		d.Error = "the vote could not be decrypted: this device does not have the poll"
	} else {
		hashes := vote.GetSelectedOptions()
		v.SelectedHashes = make([]string, 0, len(hashes))
		for _, h := range hashes {
			v.SelectedHashes = append(v.SelectedHashes, hex.EncodeToString(h))
		}
		v.SelectedOptions = r.s.polls.names(key.GetID(), hashes)
	}
	return r.m.publishEvents(r.s, r.cli, Event{Kind: KindMessagesUpdate, Data: d,
		Key: stanzaKey(KindMessagesUpdate, info.Chat.String(), info.Sender.String(), info.ID)}) == nil
}

package whatsapp

// Poll votes: a vote is encrypted with a key derived from the poll's
// message secret, which whatsmeow keeps for every poll the device received
// (live or in a history sync); it carries the SHA-256 hashes of the chosen
// options' names. The names are given where the session saw the poll.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"unicode/utf8"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/wagraph/wagraph/internal/events/payload"
)

// WhatsApp's bounds of a poll: its apps offer 2 to 12 options, a question
// of up to 255 characters and options of up to 100. A send outside them is
// refused naming the field (messaging); a received poll outside them is no
// poll (PollBeyondBounds).
const (
	MinPollOptions     = 2
	MaxPollOptions     = 12
	MaxPollQuestionLen = 255
	MaxPollOptionLen   = 100
)

// PollBeyondBounds says how a poll's question and options go beyond
// WhatsApp's bounds, or "" when they do not. Lengths are in characters
// (code points), as the send's rules count them.
func PollBeyondBounds(question string, options []string) string {
	if why := pollCountBeyond(len(options)); why != "" {
		return why
	}
	if n := utf8.RuneCountInString(question); n > MaxPollQuestionLen {
		return fmt.Sprintf("a poll's question has at most %d characters, this one %d", MaxPollQuestionLen, n)
	}
	for i, o := range options {
		if n := utf8.RuneCountInString(o); n > MaxPollOptionLen {
			return fmt.Sprintf("a poll's options have at most %d characters each, option %d has %d", MaxPollOptionLen, i+1, n)
		}
	}
	return ""
}

func pollCountBeyond(n int) string {
	if n < MinPollOptions || n > MaxPollOptions {
		return fmt.Sprintf("a poll has %d to %d options, this one %d", MinPollOptions, MaxPollOptions, n)
	}
	return ""
}

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

// boundedPoll is the option names of p, or why p is beyond WhatsApp's
// bounds (then no names): the count is judged before any name is read.
func boundedPoll(p *waE2E.PollCreationMessage) (options []string, beyond string) {
	if beyond = pollCountBeyond(len(p.GetOptions())); beyond != "" {
		return nil, beyond
	}
	options = optionNames(p)
	if beyond = PollBeyondBounds(p.GetName(), options); beyond != "" {
		return nil, beyond
	}
	return options, ""
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

package wafake

import (
	"crypto/rand"
	"fmt"
	"sync"
	"time"

	"go.mau.fi/whatsmeow/proto/waCommon"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"
)

// Polls: a poll message carries a random message secret; a vote is
// encrypted (AES-GCM) under a key derived from it, the poll's id and
// sender and the voter, and names the chosen options by the SHA-256 of
// their names — whatsmeow's msgsecret.go, on the phone's side.

// pollState keeps the secret of each poll the network's phones created.
// Its zero value is ready.
type pollState struct {
	mu    sync.Mutex
	polls map[string]pollRecord // by poll message id
}

type pollRecord struct {
	secret  []byte
	creator string // the phone of the creator
}

// SendPoll has the phone of account from send a poll (question and option
// names, one choice) to the linked devices of to. It returns the message
// id, which VotePoll votes in.
func (n *Network) SendPoll(from, to, question string, options []string) (string, error) {
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	opts := make([]*waE2E.PollCreationMessage_Option, len(options))
	for i, o := range options {
		opts[i] = &waE2E.PollCreationMessage_Option{OptionName: proto.String(o)}
	}
	id, err := n.SendMessage(from, to, &waE2E.Message{
		PollCreationMessage: &waE2E.PollCreationMessage{
			Name: proto.String(question), Options: opts, SelectableOptionsCount: proto.Uint32(1),
		},
		MessageContextInfo: &waE2E.MessageContextInfo{MessageSecret: secret},
	})
	if err != nil {
		return "", err
	}
	n.polls.mu.Lock()
	defer n.polls.mu.Unlock()
	if n.polls.polls == nil {
		n.polls.polls = map[string]pollRecord{}
	}
	n.polls.polls[id] = pollRecord{secret: secret, creator: from}
	n.changed()
	return id, nil
}

// VotePoll has the phone of the poll's creator vote in it for the named
// options (none takes the vote back), in the chat with to. It returns the
// vote's message id.
func (n *Network) VotePoll(pollID, to string, options []string) (string, error) {
	n.polls.mu.Lock()
	p, ok := n.polls.polls[pollID]
	n.polls.mu.Unlock()
	if !ok {
		return "", fmt.Errorf("wafake: no poll %s sent by a phone of the network", pollID)
	}
	// The creator votes in its own poll: whatsmeow takes the vote's sender
	// (the creator's number, as SendMessage addresses it) for both the
	// poll's sender and the voter.
	voter := types.NewJID(p.creator, types.DefaultUserServer)
	vote, err := encryptVote(p.secret, pollID, voter, voter, options)
	if err != nil {
		return "", err
	}
	return n.SendMessage(p.creator, to, &waE2E.Message{PollUpdateMessage: &waE2E.PollUpdateMessage{
		PollCreationMessageKey: &waCommon.MessageKey{
			RemoteJID: proto.String(types.NewJID(to, types.DefaultUserServer).String()), FromMe: proto.Bool(true), ID: proto.String(pollID),
		},
		Vote:              vote,
		SenderTimestampMS: proto.Int64(time.Now().UnixMilli()),
	}})
}

package messaging

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"github.com/wagraph/wagraph/ent"
	entmessage "github.com/wagraph/wagraph/ent/message"
	"github.com/wagraph/wagraph/ent/schema"
	"github.com/wagraph/wagraph/internal/events/payload"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/storage"
)

// Poll is the current tally of a stored poll.
type Poll struct {
	MessageID  string
	Question   string
	Selectable int // 0: any number of options
	Options    []PollOption
}

// PollOption is one option of a poll with who chose it.
type PollOption struct {
	Name   string
	Voters []PollVoter
}

// PollVoter is a person who chose an option: by phone JID when known.
type PollVoter struct {
	JID, Phone, LID string
}

// Poll returns the tally of stored poll messageID: every vote counted as
// it arrived, decrypted. A message that is no poll is NOT_FOUND.
func (s *Service) Poll(ctx context.Context, sessionID, messageID string) (*Poll, error) {
	m, err := s.Get(ctx, sessionID, messageID)
	if err != nil {
		return nil, err
	}
	if m.Poll == nil {
		return nil, notAPoll(messageID, m.Type)
	}
	p := &Poll{MessageID: m.MessageID, Question: m.Text, Selectable: m.Poll.Selectable}
	for _, name := range m.Poll.Options {
		o := PollOption{Name: name, Voters: []PollVoter{}}
		for _, v := range m.Poll.Votes {
			if slices.Contains(v.Options, name) {
				o.Voters = append(o.Voters, PollVoter{JID: v.Voter, Phone: v.Phone, LID: v.LID})
			}
		}
		p.Options = append(p.Options, o)
	}
	return p, nil
}

// vote counts a decrypted vote in the stored poll it names: each voter has
// one vote, a new one replacing theirs and an empty one taking it back.
// The option names come from the stored poll, so they are known after a
// restart too; they are written into the event (d) before it is stored.
// A vote WhatsApp's apps would not count (an unknown option, more than the
// poll allows, a poll of another chat) is left out, with the reason in the
// event's error.
func (s *Store) vote(ctx context.Context, sessionID string, d *payload.MessageStatus) error {
	v := d.PollVote
	if v == nil || v.SelectedHashes == nil {
		return nil // not decrypted: nothing to count
	}
	return ent.WithTx(ctx, s.db, func(tx *ent.Tx) error {
		m, err := tx.Message.Query().Where(entmessage.SessionID(sessionID), entmessage.MessageID(d.ID), storage.ForUpdate).Only(ctx)
		if ent.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("look up poll %s: %w", d.ID, err)
		}
		if m.Poll == nil || m.Chat != d.Chat {
			d.Error = "a vote naming a message of this chat that is no poll: not counted"
			return nil
		}
		names, reason := optionsOf(m.Poll, v.SelectedHashes)
		if reason != "" {
			d.Error = payload.Text(reason + ": not counted")
			return nil
		}
		v.SelectedOptions = names
		poll := *m.Poll
		poll.Votes = slices.DeleteFunc(slices.Clone(poll.Votes), func(old schema.PollVote) bool {
			return samePerson(old, v)
		})
		if len(names) > 0 {
			poll.Votes = append(poll.Votes, schema.PollVote{
				Voter: v.Voter, Phone: string(v.VoterPhone), LID: string(v.VoterLID), Options: names, At: time.Now().UTC(),
			})
		}
		if err := tx.Message.UpdateOne(m).SetPoll(&poll).Exec(ctx); err != nil {
			return fmt.Errorf("count a vote in poll %s: %w", d.ID, err)
		}
		return nil
	})
}

// optionsOf names the options whose hashes a vote carries, or says why
// the vote does not fit the poll.
func optionsOf(p *schema.Poll, hashes []string) ([]string, string) {
	byHash := make(map[string]string, len(p.Options))
	for _, o := range p.Options {
		h := sha256.Sum256([]byte(o))
		byHash[hex.EncodeToString(h[:])] = o
	}
	names := make([]string, 0, len(hashes))
	for _, h := range hashes {
		name, ok := byHash[h]
		if !ok {
			return nil, "a vote for an option the poll does not have"
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	if p.Selectable > 0 && len(names) > p.Selectable {
		return nil, fmt.Sprintf("a vote for %d options in a poll that allows %d", len(names), p.Selectable)
	}
	return names, ""
}

// samePerson says whether a stored vote is the voter's: the same person
// can come by phone or by LID.
func samePerson(old schema.PollVote, v *payload.PollVote) bool {
	return old.Voter == v.Voter || (old.Phone != "" && old.Phone == string(v.VoterPhone)) || (old.LID != "" && old.LID == string(v.VoterLID))
}

func notAPoll(messageID, typ string) error {
	return fault.New(fault.NotFound, "message %s is a %s, not a poll", messageID, typ)
}

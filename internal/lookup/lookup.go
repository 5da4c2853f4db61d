// Package lookup is who a number or LID is, asked of WhatsApp through a
// session (surface.md §2): whether numbers are on WhatsApp, a user's info
// and profile picture, the phone ↔ LID identities, and the account's block
// list. Its rules are written here once, with the message a client reads,
// and checked before anything is asked: the batch limits, which addresses
// each argument takes. The adapter (whatsapp) trusts what reaches it.
//
// Faults name the REST body's or path's field ("numbers[3]", "number");
// the GraphQL resolvers move them under their argument's path.
package lookup

import (
	"context"
	"fmt"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp"
)

// MaxBatch is the most numbers checkNumbers and ids identities take in one
// call: WhatsApp's own clients ask about contacts in batches of that order,
// and a larger usync query is answered slowly or refused.
const MaxBatch = 50

// Service checks the input, then runs the lookups where each session runs.
type Service struct{ wa whatsapp.Runner }

// NewService returns the service that runs its operations through wa.
func NewService(wa whatsapp.Runner) *Service { return &Service{wa: wa} }

// CheckNumbers asks whether each number is on WhatsApp; the answers are in
// the order given, each naming its number as given.
func (s *Service) CheckNumbers(ctx context.Context, sessionID string, numbers []string) ([]whatsapp.NumberCheck, error) {
	if err := checkBatch("numbers", len(numbers)); err != nil {
		return nil, err
	}
	digits := make([]string, len(numbers))
	for i, n := range numbers {
		d, err := phoneOf(fieldAt("numbers", i), n)
		if err != nil {
			return nil, err
		}
		digits[i] = d
	}
	out, err := whatsapp.OpCheckNumbers().Do(ctx, s.wa, sessionID, digits)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Number = numbers[i]
	}
	return out, nil
}

// UserInfo is what WhatsApp tells of the user number (a phone number, a
// user JID or a LID); nil when no such user is on WhatsApp.
func (s *Service) UserInfo(ctx context.Context, sessionID, number string) (*whatsapp.UserInfo, error) {
	jid, err := user("number", number)
	if err != nil {
		return nil, err
	}
	return whatsapp.OpUserInfo().Do(ctx, s.wa, sessionID, jid)
}

// ProfilePicture is the profile picture of chat (a user or a group): its
// id and WhatsApp's address of it; nil when there is none or it is hidden
// from the account.
func (s *Service) ProfilePicture(ctx context.Context, sessionID, chat string, preview bool) (*whatsapp.ProfilePicture, error) {
	jid, err := whatsapp.ParseRecipient("chat", chat)
	if err != nil {
		return nil, err
	}
	return whatsapp.OpProfilePicture().Do(ctx, s.wa, sessionID, whatsapp.PictureQuery{Chat: jid, Preview: preview})
}

// ProfilePictureJPEG is the picture of ProfilePicture itself, fetched from
// WhatsApp's servers: NOT_FOUND when there is none or it is hidden.
func (s *Service) ProfilePictureJPEG(ctx context.Context, sessionID, chat string, preview bool) ([]byte, error) {
	jid, err := whatsapp.ParseRecipient("chat", chat)
	if err != nil {
		return nil, err
	}
	jpeg, err := whatsapp.OpProfilePictureJPEG().Do(ctx, s.wa, sessionID, whatsapp.PictureQuery{Chat: jid, Preview: preview})
	if err != nil {
		return nil, err
	}
	if jpeg == nil {
		return nil, NoPicture(chat)
	}
	return jpeg, nil
}

// NoPicture is the answer for a chat without a picture the account may see.
func NoPicture(chat string) error {
	return fault.New(fault.NotFound, "%s has no profile picture, or its privacy hides it from this account", fault.Clip(chat, fault.QuoteLen))
}

// Identity is an identity asked for: the input as given, and the person's
// addresses.
type Identity struct {
	Input string
	whatsapp.Identity
}

// Identities maps each of ids (phone numbers, user JIDs or LIDs) to the
// person's phone and LID, in the order given.
func (s *Service) Identities(ctx context.Context, sessionID string, ids []string) ([]Identity, error) {
	if err := checkBatch("ids", len(ids)); err != nil {
		return nil, err
	}
	jids := make([]whatsapp.JID, len(ids))
	for i, id := range ids {
		jid, err := user(fieldAt("ids", i), id)
		if err != nil {
			return nil, err
		}
		jids[i] = jid
	}
	found, err := whatsapp.OpIdentities().Do(ctx, s.wa, sessionID, jids)
	if err != nil {
		return nil, err
	}
	if len(found) != len(ids) {
		return nil, fmt.Errorf("session %s: %d identities answered for %d asked", sessionID, len(found), len(ids))
	}
	out := make([]Identity, len(ids))
	for i, id := range found {
		out[i] = Identity{Input: ids[i], Identity: id}
	}
	return out, nil
}

// Blocklist is the account's block list, as WhatsApp has it.
func (s *Service) Blocklist(ctx context.Context, sessionID string) ([]whatsapp.Identity, error) {
	return whatsapp.OpBlocklist().Do(ctx, s.wa, sessionID, whatsapp.None{})
}

// SetBlocked blocks (or unblocks) the user number: a phone number, a user
// JID or a LID. blocklist.update follows.
func (s *Service) SetBlocked(ctx context.Context, sessionID, number string, block bool) error {
	jid, err := user("number", number)
	if err != nil {
		return err
	}
	_, err = whatsapp.OpSetBlocked().Do(ctx, s.wa, sessionID, whatsapp.BlockChange{JID: jid, Block: block})
	return err
}

// checkBatch holds a list argument to 1..MaxBatch entries.
func checkBatch(field string, n int) error {
	if n < 1 || n > MaxBatch {
		return fault.InvalidField(field, "%s must hold 1 to %d entries (got %d)", field, MaxBatch, n)
	}
	return nil
}

// user reads a person's address: a phone number, a user JID or a LID, not
// a group.
func user(field, s string) (whatsapp.JID, error) {
	jid, err := whatsapp.ParseRecipient(field, s)
	if err != nil {
		return whatsapp.JID{}, err
	}
	if jid.Server == whatsapp.GroupServer {
		return whatsapp.JID{}, fault.InvalidField(field, "%s must be a phone number, a user JID or a LID, not a group (got %q)", field, fault.Clip(s, fault.QuoteLen))
	}
	if jid.Device != 0 {
		return whatsapp.JID{}, fault.InvalidField(field, "%s must name a user, not one of its devices (got %q)", field, fault.Clip(s, fault.QuoteLen))
	}
	return jid, nil
}

// phoneOf reads a number to check: a phone number or a user JID, whose
// digits WhatsApp is asked about. A LID is refused: WhatsApp checks
// numbers, and a LID is an account already (identities finds its number).
func phoneOf(field, s string) (string, error) {
	jid, err := user(field, s)
	if err != nil {
		return "", err
	}
	if jid.Server != whatsapp.UserServer {
		return "", fault.InvalidField(field, "%s must be a phone number or a user JID; %q is a LID, an account on WhatsApp already (identities gives its phone)", field, fault.Clip(s, fault.QuoteLen))
	}
	return jid.User, nil
}

// fieldAt names element i of a list field.
func fieldAt(field string, i int) string { return fmt.Sprintf("%s[%d]", field, i) }

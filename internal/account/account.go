// Package account is what may be asked of a linked WhatsApp account: its
// profile (name, picture), its privacy settings and default disappearing
// timer, and its groups (subjects, descriptions, participants, invites).
// Each rule is written here once, with the message a client reads, before
// the operation runs; the adapter (whatsapp) trusts what reaches it.
//
// Faults name the REST body's field ("subject", "participants[2]"); the
// GraphQL resolvers move them under their argument's path.
package account

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp"
)

// WhatsApp runs the operations where each session runs and reads a
// session's live state (the manager, or a cluster's router).
type WhatsApp interface {
	whatsapp.Runner
	Status(ctx context.Context, sessionID string) (whatsapp.SessionState, error)
}

// Service applies the rules, then runs the operations.
type Service struct{ wa WhatsApp }

// NewService returns the service that runs its operations through wa.
func NewService(wa WhatsApp) *Service { return &Service{wa: wa} }

// maxProfileNameLen is the longest push name WhatsApp's apps accept.
const maxProfileNameLen = 25

// SetProfileName sets the account's name, the one contacts see.
func (s *Service) SetProfileName(ctx context.Context, sessionID, name string) error {
	if err := checkText("name", &name, maxProfileNameLen, true); err != nil {
		return err
	}
	_, err := whatsapp.OpSetProfileName().Do(ctx, s.wa, sessionID, strings.TrimSpace(name))
	return err
}

// A Setting is one privacy setting and the values it takes.
type Setting struct {
	name    string // WhatsApp's
	allowed []string
}

// ReadReceipts is whether the account sends read receipts.
func ReadReceipts() Setting { return Setting{"readreceipts", []string{"all", "none"}} }

// GroupsAdd is who may add the account to groups.
func GroupsAdd() Setting {
	return Setting{"groupadd", []string{"all", "contacts", "contact_blacklist", "none"}}
}

// Status is who sees the account's status updates.
func Status() Setting {
	return Setting{"status", []string{"all", "contacts", "contact_blacklist", "none"}}
}

// SetPrivacy sets one privacy setting to value and returns every setting
// as WhatsApp has them afterwards.
func (s *Service) SetPrivacy(ctx context.Context, sessionID string, setting Setting, value string) (whatsapp.Privacy, error) {
	if !slices.Contains(setting.allowed, value) {
		return whatsapp.Privacy{}, fault.InvalidField("privacy", "privacy must be one of %s; got %q",
			strings.Join(setting.allowed, ", "), fault.Clip(value, fault.QuoteLen))
	}
	return whatsapp.OpSetPrivacy().Do(ctx, s.wa, sessionID, whatsapp.PrivacyChange{Setting: setting.name, Value: value})
}

// Privacy reads the privacy settings, fresh from WhatsApp.
func (s *Service) Privacy(ctx context.Context, sessionID string) (whatsapp.Privacy, error) {
	return whatsapp.OpPrivacy().Do(ctx, s.wa, sessionID, whatsapp.None{})
}

// disappearingTimer is the timer of a mode of rest.md: the durations
// WhatsApp offers.
func disappearingTimer(mode string) (time.Duration, bool) {
	const day = 24 * time.Hour
	switch strings.ToUpper(strings.TrimSpace(mode)) {
	case "OFF":
		return 0, true
	case "ONE_DAY":
		return day, true
	case "ONE_WEEK":
		return 7 * day, true
	case "NINETY_DAYS", "THREE_MONTHS":
		return 90 * day, true
	}
	return 0, false
}

// SetDefaultDisappearingMode sets the timer of the account's new chats and
// returns the privacy settings afterwards.
func (s *Service) SetDefaultDisappearingMode(ctx context.Context, sessionID, mode string) (whatsapp.Privacy, error) {
	d, ok := disappearingTimer(mode)
	if !ok {
		return whatsapp.Privacy{}, fault.InvalidField("mode", "mode must be one of OFF, ONE_DAY, ONE_WEEK, NINETY_DAYS (THREE_MONTHS is an alias); got %q", fault.Clip(mode, fault.QuoteLen))
	}
	if _, err := whatsapp.OpSetDefaultDisappearingTimer().Do(ctx, s.wa, sessionID, d); err != nil {
		return whatsapp.Privacy{}, err
	}
	return s.Privacy(ctx, sessionID)
}

// PictureTarget reads the identifier of a display picture: the session's
// own number (or JID), or a group. It is checked before the picture is
// made, so a wrong identifier costs no image work.
func (s *Service) PictureTarget(ctx context.Context, sessionID, identifier string) (whatsapp.JID, error) {
	own, err := s.OwnAccount(ctx, sessionID)
	if err != nil {
		return whatsapp.JID{}, err
	}
	id := strings.TrimSpace(identifier)
	jid, perr := whatsapp.ParseRecipient("identifier", id)
	if perr == nil && jid.Server != "g.us" {
		if jid.User != own.User {
			return whatsapp.JID{}, fault.InvalidField("identifier", "identifier must be this session's own number (%s) or a group id; %s is neither", own.User, fault.Clip(identifier, fault.QuoteLen))
		}
		return own, nil
	}
	gj, gerr := whatsapp.ParseGroupJID("identifier", id)
	if gerr == nil && perr != nil && !strings.Contains(id, "@") && strings.HasPrefix(gj.User, "0") {
		// No group id begins with 0: "0155…" is a national phone number,
		// and the number's error says how to write it.
		return whatsapp.JID{}, perr
	}
	return gj, gerr
}

// SetPicture sets the picture of target (from PictureTarget): jpeg is the
// square JPEG WhatsApp takes.
func (s *Service) SetPicture(ctx context.Context, sessionID string, target whatsapp.JID, jpeg []byte) error {
	if len(jpeg) == 0 {
		return fault.InvalidField("source", "the picture is empty")
	}
	_, err := whatsapp.OpSetPicture().Do(ctx, s.wa, sessionID, whatsapp.Picture{Target: target, JPEG: jpeg})
	return err
}

// OwnAccount is the linked account's JID (phone@s.whatsapp.net) of a
// session that has one.
func (s *Service) OwnAccount(ctx context.Context, sessionID string) (whatsapp.JID, error) {
	st, err := s.wa.Status(ctx, sessionID)
	if err != nil {
		return whatsapp.JID{}, err
	}
	if st.Phone == "" {
		return whatsapp.JID{}, fault.New(fault.NotConnected, "session %s is not linked to an account (status: %s)", sessionID, st.Status)
	}
	return whatsapp.ParseRecipient("phone", st.Phone)
}

// fieldAt names element i of a list field.
func fieldAt(field string, i int) string { return fmt.Sprintf("%s[%d]", field, i) }

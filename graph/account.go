package graph

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp"
)

// maxProfileNameLen is WhatsApp's limit of a push name.
const maxProfileNameLen = 25

// disappearingModes are the modes of rest.md and their timers.
var disappearingModes = map[string]time.Duration{
	"OFF":          0,
	"ONE_DAY":      24 * time.Hour,
	"ONE_WEEK":     7 * 24 * time.Hour,
	"NINETY_DAYS":  90 * 24 * time.Hour,
	"THREE_MONTHS": 90 * 24 * time.Hour,
}

func toPrivacy(p whatsapp.Privacy) *model.PrivacySettings {
	return &model.PrivacySettings{
		LastSeen: p.LastSeen, Online: p.Online, ProfilePicture: p.ProfilePicture, Status: p.Status,
		ReadReceipts: p.ReadReceipts, GroupsAdd: p.GroupsAdd, CallAdd: p.CallAdd,
	}
}

// setPrivacy validates value against allowed (listed in the error) and sets
// the setting.
func (r *Resolver) setPrivacy(ctx context.Context, sessionID, setting, value string, allowed ...string) (*model.PrivacySettings, error) {
	if _, err := r.reachSessionID(ctx, sessionID); err != nil {
		return nil, err
	}
	if !slices.Contains(allowed, value) {
		return nil, fault.InvalidField("privacy", "privacy must be one of %s; got %q", strings.Join(allowed, ", "), fault.Clip(value, fault.QuoteLen))
	}
	p, err := whatsapp.OpSetPrivacy().Do(ctx, r.WhatsApp, sessionID, whatsapp.PrivacyChange{Setting: setting, Value: value})
	if err != nil {
		return nil, err
	}
	return toPrivacy(p), nil
}

// pictureTarget reads the identifier of updateDisplayPicture: the session's
// own number (or JID), or a group.
func (r *Resolver) pictureTarget(ctx context.Context, sessionID, identifier string) (whatsapp.JID, error) {
	_, own, err := r.connectedAccount(ctx, sessionID)
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

package graph

import (
	"context"

	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/lookup"
	"github.com/wagraph/wagraph/whatsapp"
)

// jidText is a JID as answers carry it: null when not known.
func jidText(j whatsapp.JID) *string {
	if j.IsEmpty() {
		return nil
	}
	return optional(j.String())
}

func toNumberCheck(c whatsapp.NumberCheck) *model.NumberCheck {
	return &model.NumberCheck{Number: c.Number, OnWhatsApp: c.OnWhatsApp, Jid: jidText(c.JID), Lid: jidText(c.LID), IsBusiness: c.IsBusiness}
}

func toUserInfo(u *whatsapp.UserInfo) *model.UserInfo {
	if u == nil {
		return nil
	}
	out := &model.UserInfo{
		Jid: jidText(u.JID), Phone: optional(u.JID.User), Lid: jidText(u.LID), About: optional(u.About),
		PictureID: optional(u.PictureID), Devices: make([]string, len(u.Devices)),
		BusinessName: optional(u.BusinessName), VerifiedName: optional(u.VerifiedName),
	}
	for i, d := range u.Devices {
		out.Devices[i] = d.String()
	}
	return out
}

// toIdentity is who input names, by every address known.
func toIdentity(input string, id whatsapp.Identity) *model.Identity {
	return &model.Identity{Input: input, Jid: id.JID.String(), Phone: optional(id.Phone), Lid: jidText(id.LID)}
}

func toIdentities(ids []lookup.Identity) []*model.Identity {
	out := make([]*model.Identity, len(ids))
	for i, id := range ids {
		out[i] = toIdentity(id.Input, id.Identity)
	}
	return out
}

// ProfilePictureJPEG is the profile picture of chat itself, fetched from
// WhatsApp's servers, for REST's image/jpeg answer (GraphQL has no field
// for bytes): NOT_FOUND when there is none or it is hidden.
func (r *Resolver) ProfilePictureJPEG(ctx context.Context, sessionID, chat string, preview bool) ([]byte, error) {
	if _, err := r.reachSessionID(ctx, sessionID); err != nil {
		return nil, err
	}
	return r.Lookup.ProfilePictureJPEG(ctx, sessionID, chat, preview)
}

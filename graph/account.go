package graph

import (
	"context"

	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/account"
	"github.com/wagraph/wagraph/whatsapp"
)

func toPrivacy(p whatsapp.Privacy) *model.PrivacySettings {
	return &model.PrivacySettings{
		LastSeen: p.LastSeen, Online: p.Online, ProfilePicture: p.ProfilePicture, Status: p.Status,
		ReadReceipts: p.ReadReceipts, GroupsAdd: p.GroupsAdd, CallAdd: p.CallAdd,
	}
}

func (r *Resolver) setPrivacy(ctx context.Context, sessionID string, setting account.Setting, value string) (*model.PrivacySettings, error) {
	if _, err := r.reachSessionID(ctx, sessionID); err != nil {
		return nil, err
	}
	p, err := r.Account.SetPrivacy(ctx, sessionID, setting, value)
	if err != nil {
		return nil, err
	}
	return toPrivacy(p), nil
}

package graph

import (
	"context"

	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/sessionsettings"
)

// settingsOf are the settings of a session the caller reached.
func (r *Resolver) settingsOf(ctx context.Context, sessionID string) (*model.SessionSettings, error) {
	set, err := r.Settings.Get(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	return toSettings(set), nil
}

// updateSettings applies in to the settings of the session id names, when
// the caller reaches it, and returns the session.
func (r *Resolver) updateSettings(ctx context.Context, sessionID string, in model.SessionSettingsInput) (*model.Session, error) {
	_, s, err := r.reachSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	_, err = r.Settings.Update(ctx, sessionID, sessionsettings.Input{
		SendRate: in.SendRate, SendJitter: in.SendJitter, SimulateTyping: in.SimulateTyping, AutoMarkRead: in.AutoMarkRead,
		AutoRejectCalls: in.AutoRejectCalls, CallRejectMessage: in.CallRejectMessage, Proxy: in.Proxy,
	})
	if err != nil {
		return nil, inArgument("input", err)
	}
	return r.sessionOf(ctx, s)
}

// toSettings is the API's view of settings: the proxy without its
// password.
func toSettings(set sessionsettings.Settings) *model.SessionSettings {
	m := &model.SessionSettings{
		SendJitter: sessionsettings.FormatJitter(set.SendJitter), SimulateTyping: set.SimulateTyping,
		AutoMarkRead: set.AutoMarkRead, AutoRejectCalls: set.AutoRejectCalls, Proxy: set.ShownProxy(),
	}
	if set.SendRate != nil {
		rate := set.SendRate.String()
		m.SendRate = &rate
	}
	if set.CallRejectMessage != "" {
		msg := set.CallRejectMessage
		m.CallRejectMessage = &msg
	}
	return m
}

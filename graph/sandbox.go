package graph

import (
	"context"
	"time"

	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/auth"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp"
	"github.com/wagraph/wagraph/whatsapp/sandbox"
)

// SandboxNetwork is the simulated network's control surface (sandbox.md):
// in-process with --sandbox, over loopback with --sandbox-network. The
// resolvers run its controls with sandbox.Do, which checks their input the
// same way for either.
type SandboxNetwork interface {
	sandbox.Network
}

// linkWait bounds how long a sandbox link waits for the session to log in.
const linkWait = 30 * time.Second

func errSandboxOff() error { return fault.New(fault.Invalid, "sandbox mode is off") }

// sandboxOn returns the network in sandbox mode, for any authenticated
// caller (the network's views are not a session's).
func (r *Resolver) sandboxOn(ctx context.Context) (SandboxNetwork, error) {
	if _, err := auth.Require(ctx); err != nil {
		return nil, err
	}
	if r.Sandbox == nil {
		return nil, errSandboxOff()
	}
	return r.Sandbox, nil
}

// sandbox returns the network for a control on a session the caller reaches.
func (r *Resolver) sandbox(ctx context.Context, sessionID string) (SandboxNetwork, error) {
	if _, err := r.reachSessionID(ctx, sessionID); err != nil {
		return nil, err
	}
	if r.Sandbox == nil {
		return nil, errSandboxOff()
	}
	return r.Sandbox, nil
}

// sandboxChat returns the network for a control on a session the caller
// reaches, and where a simulated contact's message goes: the session's
// account, or a group.
func (r *Resolver) sandboxChat(ctx context.Context, sessionID string, group *string) (SandboxNetwork, string, error) {
	sb, err := r.sandbox(ctx, sessionID)
	if err != nil {
		return nil, "", err
	}
	if group != nil {
		gj, err := whatsapp.ParseGroupJID("group", *group)
		if err != nil {
			return nil, "", err
		}
		return sb, gj.String(), nil
	}
	own, err := r.Account.OwnAccount(ctx, sessionID)
	if err != nil {
		return nil, "", err
	}
	return sb, own.String(), nil
}

// linkedDevice returns the JID of the session's linked device.
func (r *Resolver) linkedDevice(ctx context.Context, sessionID string) (string, error) {
	st, err := r.WhatsApp.Status(ctx, sessionID)
	if err != nil {
		return "", err
	}
	if st.JID == "" {
		return "", fault.New(fault.NotConnected, "session %s has no linked device (status: %s)", sessionID, st.Status)
	}
	return st.JID, nil
}

// sandboxContact runs the control req(to) of a simulated contact writing
// to the session: to is the session's account, or group when given.
func sandboxContact[Req sandbox.Request[Req, Res], Res any](ctx context.Context, r *Resolver, sessionID string, group *string, req func(to string) Req) (Res, error) {
	sb, to, err := r.sandboxChat(ctx, sessionID, group)
	if err != nil {
		var zero Res
		return zero, err
	}
	return sandbox.Do(ctx, sb, req(to))
}

// sandboxDevice runs the control req(device) on the session's linked
// device.
func sandboxDevice[Req sandbox.Request[Req, sandbox.Done]](ctx context.Context, r *Resolver, sessionID string, req func(device string) Req) (bool, error) {
	sb, err := r.sandbox(ctx, sessionID)
	if err != nil {
		return false, err
	}
	device, err := r.linkedDevice(ctx, sessionID)
	if err != nil {
		return false, err
	}
	return sandboxDone(sandbox.Do(ctx, sb, req(device)))
}

// sandboxView runs a control that reads the network's world, for any
// authenticated caller, and maps its answer to GraphQL.
func sandboxView[Req sandbox.Request[Req, Res], Res, Out any](ctx context.Context, r *Resolver, req Req, to func(Res) Out) (Out, error) {
	var zero Out
	sb, err := r.sandboxOn(ctx)
	if err != nil {
		return zero, err
	}
	res, err := sandbox.Do(ctx, sb, req)
	if err != nil {
		return zero, err
	}
	return to(res), nil
}

// sandboxDone is what a mutation whose control answers nothing returns:
// true once the control ran.
func sandboxDone(_ sandbox.Done, err error) (bool, error) { return err == nil, err }

// awaitQR returns the session's state once it shows a QR code; a session
// that is connecting (just asked to) gets a moment to show its first one.
func (r *Resolver) awaitQR(ctx context.Context, sessionID string) (whatsapp.SessionState, error) {
	wctx, cancel := context.WithTimeout(ctx, linkWait)
	defer cancel()
	var last whatsapp.SessionState
	err := r.watchState(wctx, sessionID, func(st whatsapp.SessionState) bool {
		last = st
		return st.Status == whatsapp.StatusConnecting || (st.Status == whatsapp.StatusPairing && st.QRCode == "")
	})
	if err != nil && wctx.Err() == nil {
		return last, err
	}
	return last, nil
}

// awaitLinked waits until a session whose phone just took its QR code or
// pairing code is CONNECTED, or, on an account that requires a passkey,
// shows the passkey step (still PAIRING: the rest is the passkey holder's).
func (r *Resolver) awaitLinked(ctx context.Context, sessionID string) (*model.Session, error) {
	_, s, err := r.reachSession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, linkWait)
	defer cancel()
	var last whatsapp.SessionState
	err = r.watchState(wctx, sessionID, func(st whatsapp.SessionState) bool {
		last = st
		return st.Status != whatsapp.StatusConnected && st.Passkey.Status == ""
	})
	if err != nil && wctx.Err() == nil {
		return nil, err
	}
	if last.Status != whatsapp.StatusConnected && last.Passkey.Status == "" {
		return nil, fault.New(fault.WhatsAppTimeout, "session %s did not connect within %s after linking (status: %s)", sessionID, linkWait, last.Status)
	}
	return toLiveSession(s, last), nil
}

func toSandboxMessages(msgs []sandbox.Message) []*model.SandboxMessage {
	out := make([]*model.SandboxMessage, len(msgs))
	for i, m := range msgs {
		out[i] = toSandboxMessage(m)
	}
	return out
}

func toSandboxMessage(m sandbox.Message) *model.SandboxMessage {
	out := &model.SandboxMessage{
		ID: m.ID, From: m.From, Chat: m.Chat, Type: m.Type,
		Text: optional(m.Text), Caption: optional(m.Caption), FileName: optional(m.FileName),
		Mimetype: optional(m.Mimetype), MediaSha256: optional(m.MediaSHA256),
		Latitude: m.Latitude, Longitude: m.Longitude, Name: optional(m.Name), Address: optional(m.Address),
		Vcard: optional(m.VCard), GifPlayback: m.GIFPlayback, VoiceNote: m.VoiceNote,
		Mentions: append([]string{}, m.Mentions...), QuotedID: optional(m.QuotedID), Revoked: m.Revoked,
		Timestamp: m.Timestamp.UTC(), Edited: m.Edited, ViewOnce: m.ViewOnce, Reactions: make([]*model.SandboxReaction, len(m.Reactions)),
	}
	for i, r := range m.Reactions {
		out.Reactions[i] = &model.SandboxReaction{Emoji: r.Emoji, From: r.From}
	}
	if m.MediaSize > 0 {
		n := int(m.MediaSize)
		out.MediaSize = &n
	}
	if m.Seconds > 0 {
		n := int(m.Seconds)
		out.Seconds = &n
	}
	for _, v := range m.Waveform {
		out.Waveform = append(out.Waveform, int(v))
	}
	out.Sticker, out.AnimatedSticker, out.Forwarded = m.Sticker, m.Animated, m.Forwarded
	if p := m.Poll; p != nil {
		out.Poll = &model.SandboxPoll{Question: p.Question, Options: append([]string{}, p.Options...), SelectableCount: p.SelectableCount}
	}
	if p := m.LinkPreview; p != nil {
		out.LinkPreview = &model.SandboxLinkPreview{URL: p.URL, Title: optional(p.Title), Description: optional(p.Description), HasThumbnail: p.HasThumbnail}
	}
	return out
}

// toSandboxGroup is nil when the network has no such group.
func toSandboxGroup(g *sandbox.GroupInfo) *model.SandboxGroup {
	if g == nil {
		return nil
	}
	out := &model.SandboxGroup{
		Jid: g.JID, Subject: g.Subject, Description: g.Description, Announce: g.Announce, Locked: g.Locked,
		InviteCode: g.InviteCode, PictureSha256: optional(g.PictureSHA256),
		Participants: make([]*model.SandboxParticipant, len(g.Participants)),
	}
	for i, p := range g.Participants {
		out.Participants[i] = &model.SandboxParticipant{Phone: p.Phone, Role: p.Role}
	}
	out.Owner, out.CreatedAt, out.ApprovalMode = g.Owner, g.Created, g.ApprovalMode
	out.JoinRequests, out.MemberAddMode, out.EphemeralSeconds = append([]string{}, g.JoinRequests...), g.MemberAddMode, g.EphemeralSeconds
	return out
}

// toSandboxAccount is nil when the phone is not on WhatsApp.
func toSandboxAccount(a *sandbox.AccountInfo) *model.SandboxAccount {
	if a == nil {
		return nil
	}
	p := a.Privacy
	out := &model.SandboxAccount{
		Phone: a.Phone, PushName: a.PushName, PictureSha256: optional(a.PictureSHA256),
		Privacy: &model.SandboxPrivacy{
			LastSeen: p["lastSeen"], Online: p["online"], ProfilePicture: p["profilePicture"], Status: p["status"],
			ReadReceipts: p["readReceipts"], GroupsAdd: p["groupsAdd"], CallAdd: p["callAdd"],
		},
		DisappearingSeconds: a.DisappearingSeconds,
		LinkedDevices:       append([]string{}, a.LinkedDevices...),
		About:               a.About, Presence: optional(a.Presence), LastCallRejected: a.LastCallRejected,
		Blocklist:    append([]string{}, a.Blocklist...),
		ReadReceipts: make([]*model.SandboxReadReceipt, len(a.ReadReceipts)),
		ChatStates:   make([]*model.SandboxChatState, len(a.ChatStates)),
	}
	for i, rr := range a.ReadReceipts {
		out.ReadReceipts[i] = &model.SandboxReadReceipt{From: rr.From, MessageID: rr.MessageID, At: rr.At}
	}
	for i, c := range a.ChatStates {
		out.ChatStates[i] = &model.SandboxChatState{From: c.From, State: c.State, At: c.At}
	}
	return out
}

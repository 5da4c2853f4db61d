package whatsapp

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.mau.fi/whatsmeow/types"
)

// An Op is one operation on a session, defined once: its name (what a call
// forwarded to another process carries), its request and result types, and
// how the manager of the process that runs the session runs it. The API
// calls it through a Runner (Do); the process that holds the session serves
// it from Operations. Adding one is its Manager method and an entry below.
type Op[Req, Res any] struct {
	name string
	run  func(m *Manager, ctx context.Context, sessionID string, req Req) (Res, error)
}

// None is the request or result of an operation that has none.
type None struct{}

// Name is what a forwarded call of the operation carries.
func (o Op[Req, Res]) Name() string { return o.name }

// Do runs the operation on session sessionID wherever r runs it.
func (o Op[Req, Res]) Do(ctx context.Context, r Runner, sessionID string, req Req) (Res, error) {
	var res Res
	err := r.Run(ctx, sessionID, Call{
		Op: o.name, Request: req, Result: &res,
		Local: func(ctx context.Context, m *Manager) (err error) {
			res, err = o.run(m, ctx, sessionID, req)
			return err
		},
	})
	return res, err
}

// Serve runs a call forwarded from another process on m: its request
// decoded from JSON, its result left for the caller to encode.
func (o Op[Req, Res]) Serve(ctx context.Context, m *Manager, sessionID string, request json.RawMessage) (any, error) {
	var req Req
	if err := json.Unmarshal(request, &req); err != nil {
		return nil, fmt.Errorf("decode the request of %s: %w", o.name, err)
	}
	return o.run(m, ctx, sessionID, req)
}

// Call is one operation on its way to where its session runs: Local runs
// it on the manager of this process (filling the result); a call forwarded
// to another process carries Op and Request, and decodes the answer into
// Result (a pointer).
type Call struct {
	Op      string
	Request any
	Result  any
	Local   func(ctx context.Context, m *Manager) error
}

// A Runner runs an operation where its session runs: the Manager here; a
// cluster's Router here or on the process that holds the session.
type Runner interface {
	Run(ctx context.Context, sessionID string, c Call) error
}

// Run runs c on this manager: with one process, every session runs here.
func (m *Manager) Run(ctx context.Context, _ string, c Call) error { return c.Local(ctx, m) }

// Operation is an Op of any types, as the process holding a session serves
// the calls forwarded to it.
type Operation interface {
	Name() string
	Serve(ctx context.Context, m *Manager, sessionID string, request json.RawMessage) (any, error)
}

// Operations is every operation a forwarded call may name.
func Operations() []Operation {
	return []Operation{
		OpStatus(), OpConnect(), OpPairPhone(), OpSubmitPasskeyAssertion(), OpConfirmPasskey(), OpDisconnect(), OpLogout(), OpDelete(),
		OpCreateGroup(), OpGroups(), OpGroup(), OpUpdateGroup(), OpGroupInviteLink(), OpChangeParticipants(),
		OpGroupInviteInfo(), OpJoinGroup(), OpLeaveGroup(), OpJoinRequests(),
		OpSetPicture(), OpSetProfileName(), OpPrivacy(), OpSetPrivacy(), OpSetDefaultDisappearingTimer(),
		OpSend(), OpRevoke(), OpDownload(), OpRequestMediaRetry(),
		OpMarkRead(), OpSendPresence(), OpSubscribePresence(), OpReact(), OpEditMessage(), OpRejectCall(),
		OpCheckNumbers(), OpUserInfo(), OpProfilePicture(), OpProfilePictureJPEG(), OpIdentities(), OpBlocklist(), OpSetBlocked(),
		OpRequestHistory(),
	}
}

// op makes an Op of a manager method of one request (a struct for several).
func op[Req, Res any](name string, run func(m *Manager, ctx context.Context, sessionID string, req Req) (Res, error)) Op[Req, Res] {
	return Op[Req, Res]{name: name, run: run}
}

// noResult adapts a manager method that answers only an error.
func noResult[Req any](fn func(m *Manager, ctx context.Context, sessionID string, req Req) error) func(*Manager, context.Context, string, Req) (None, error) {
	return func(m *Manager, ctx context.Context, id string, req Req) (None, error) {
		return None{}, fn(m, ctx, id, req)
	}
}

// The requests of the operations that take several arguments.
type (
	// NewGroup is a group to create.
	NewGroup struct {
		Name, Description string
		Participants      []types.JID
	}
	// GroupChange is a change of group JID.
	GroupChange struct {
		JID    types.JID
		Update GroupUpdate
	}
	// GroupMembers names members of group JID, and what to do with
	// them (ParticipantsAdd, …, RequestsApprove, RequestsReject).
	GroupMembers struct {
		JID          types.JID
		Participants []types.JID
		Action       string
	}
	// Picture is a profile picture of Target (the account, or a group).
	Picture struct {
		Target types.JID
		JPEG   []byte
	}
	// PrivacyChange sets one privacy setting.
	PrivacyChange struct{ Setting, Value string }
	// MessageRef names a message of a chat.
	MessageRef struct {
		Chat      types.JID
		MessageID string
	}
)

// The operations, in Operations' order.

// OpStatus reads the session's live state.
func OpStatus() Op[None, SessionState] {
	return op("status", func(m *Manager, ctx context.Context, id string, _ None) (SessionState, error) {
		return m.Status(ctx, id)
	})
}

// OpConnect starts the session: it logs in, or shows a QR code to link.
func OpConnect() Op[None, None] {
	return op("connect", noResult(func(m *Manager, ctx context.Context, id string, _ None) error { return m.Connect(ctx, id) }))
}

// OpPairPhone asks for a pairing code for a phone number.
func OpPairPhone() Op[string, string] { return op("pairPhone", (*Manager).PairPhone) }

// OpSubmitPasskeyAssertion hands WhatsApp the assertion of the account's
// passkey while pairing.
func OpSubmitPasskeyAssertion() Op[json.RawMessage, SessionState] {
	return op("submitPasskeyAssertion", (*Manager).SubmitPasskeyAssertion)
}

// OpConfirmPasskey confirms the passkey step's code.
func OpConfirmPasskey() Op[None, SessionState] {
	return op("confirmPasskey", func(m *Manager, ctx context.Context, id string, _ None) (SessionState, error) {
		return m.ConfirmPasskey(ctx, id)
	})
}

// OpDisconnect closes the session's connection, keeping its link.
func OpDisconnect() Op[None, None] {
	return op("disconnect", noResult(func(m *Manager, _ context.Context, id string, _ None) error { return m.Disconnect(id) }))
}

// OpLogout unlinks the session's device.
func OpLogout() Op[None, None] {
	return op("logout", noResult(func(m *Manager, ctx context.Context, id string, _ None) error { return m.Logout(ctx, id) }))
}

// OpDelete forgets a deleted session: unlinks its device, deletes its keys.
func OpDelete() Op[None, None] {
	return op("delete", noResult(func(m *Manager, ctx context.Context, id string, _ None) error { return m.Delete(ctx, id) }))
}

// OpCreateGroup creates a group.
func OpCreateGroup() Op[NewGroup, Group] {
	return op("createGroup", func(m *Manager, ctx context.Context, id string, g NewGroup) (Group, error) {
		return m.CreateGroup(ctx, id, g.Name, g.Description, g.Participants)
	})
}

// OpGroups lists the account's groups.
func OpGroups() Op[None, []Group] {
	return op("groups", func(m *Manager, ctx context.Context, id string, _ None) ([]Group, error) { return m.Groups(ctx, id) })
}

// OpUpdateGroup changes a group's subject, description or settings.
func OpUpdateGroup() Op[GroupChange, Group] {
	return op("updateGroup", func(m *Manager, ctx context.Context, id string, c GroupChange) (Group, error) {
		return m.UpdateGroup(ctx, id, c.JID, c.Update)
	})
}

// OpGroup reads a group fresh from WhatsApp.
func OpGroup() Op[types.JID, Group] { return op("group", (*Manager).Group) }

// OpGroupInviteLink reads a group's invite link, or resets it.
func OpGroupInviteLink() Op[InviteLinkRequest, string] {
	return op("groupInviteLink", (*Manager).InviteLink)
}

// OpChangeParticipants adds, removes, promotes or demotes group members, or
// answers their requests to join.
func OpChangeParticipants() Op[GroupMembers, []ParticipantOutcome] {
	return op("changeParticipants", func(m *Manager, ctx context.Context, id string, g GroupMembers) ([]ParticipantOutcome, error) {
		return m.ChangeParticipants(ctx, id, g.JID, g.Participants, g.Action)
	})
}

// OpGroupInviteInfo reads the group an invite code leads to.
func OpGroupInviteInfo() Op[string, Group] { return op("groupInviteInfo", (*Manager).GroupInviteInfo) }

// OpJoinGroup joins a group by invite code (or asks to, where admins
// approve).
func OpJoinGroup() Op[string, Group] { return op("joinGroup", (*Manager).JoinGroup) }

// OpLeaveGroup leaves a group.
func OpLeaveGroup() Op[types.JID, None] { return op("leaveGroup", noResult((*Manager).LeaveGroup)) }

// OpJoinRequests lists the requests to join a group.
func OpJoinRequests() Op[types.JID, []JoinRequest] {
	return op("joinRequests", (*Manager).JoinRequests)
}

// OpSetPicture sets the account's or a group's picture.
func OpSetPicture() Op[Picture, None] {
	return op("setPicture", noResult(func(m *Manager, ctx context.Context, id string, p Picture) error {
		return m.SetPicture(ctx, id, p.Target, p.JPEG)
	}))
}

// OpSetProfileName sets the account's name.
func OpSetProfileName() Op[string, None] {
	return op("setProfileName", noResult((*Manager).SetProfileName))
}

// OpPrivacy reads the privacy settings.
func OpPrivacy() Op[None, Privacy] {
	return op("privacy", func(m *Manager, ctx context.Context, id string, _ None) (Privacy, error) { return m.Privacy(ctx, id) })
}

// OpSetPrivacy changes one privacy setting.
func OpSetPrivacy() Op[PrivacyChange, Privacy] {
	return op("setPrivacy", func(m *Manager, ctx context.Context, id string, c PrivacyChange) (Privacy, error) {
		return m.SetPrivacy(ctx, id, c.Setting, c.Value)
	})
}

// OpSetDefaultDisappearingTimer sets the timer of new chats.
func OpSetDefaultDisappearingTimer() Op[time.Duration, None] {
	return op("setDefaultDisappearingTimer", noResult((*Manager).SetDefaultDisappearingTimer))
}

// OpSend sends a message.
func OpSend() Op[Outgoing, Sent] { return op("send", (*Manager).Send) }

// OpRevoke deletes a message for everyone.
func OpRevoke() Op[MessageRef, Sent] {
	return op("revoke", func(m *Manager, ctx context.Context, id string, r MessageRef) (Sent, error) {
		return m.Revoke(ctx, id, r.Chat, r.MessageID)
	})
}

// OpDownload downloads a message's media.
func OpDownload() Op[MediaRef, []byte] { return op("download", (*Manager).Download) }

// OpRequestMediaRetry asks the phone to upload a message's media again.
func OpRequestMediaRetry() Op[Message, None] {
	return op("requestMediaRetry", noResult((*Manager).RequestMediaRetry))
}

// OpMarkRead sends read receipts for messages of a chat.
func OpMarkRead() Op[Read, None] { return op("markRead", noResult((*Manager).MarkRead)) }

// OpSendPresence shows the account available, unavailable, or typing,
// recording or paused in a chat.
func OpSendPresence() Op[Presence, None] {
	return op("sendPresence", noResult((*Manager).SendPresence))
}

// OpSubscribePresence asks WhatsApp for a contact's availability.
func OpSubscribePresence() Op[types.JID, None] {
	return op("subscribePresence", noResult((*Manager).SubscribePresence))
}

// OpReact reacts to a message, or takes the reaction back.
func OpReact() Op[Reaction, Sent] { return op("react", (*Manager).React) }

// OpEditMessage edits a text or caption the account sent.
func OpEditMessage() Op[Edit, Sent] { return op("editMessage", (*Manager).EditMessage) }

// OpRejectCall declines an incoming call.
func OpRejectCall() Op[CallRef, None] { return op("rejectCall", noResult((*Manager).RejectCall)) }

// OpCheckNumbers asks WhatsApp whether numbers are on it.
func OpCheckNumbers() Op[[]string, []NumberCheck] { return op("checkNumbers", (*Manager).CheckNumbers) }

// OpUserInfo asks WhatsApp about a user; nil when not on WhatsApp.
func OpUserInfo() Op[types.JID, *UserInfo] { return op("userInfo", (*Manager).UserInfo) }

// OpProfilePicture asks WhatsApp for a profile picture's address.
func OpProfilePicture() Op[PictureQuery, *ProfilePicture] {
	return op("profilePicture", (*Manager).ProfilePicture)
}

// OpProfilePictureJPEG downloads a profile picture.
func OpProfilePictureJPEG() Op[PictureQuery, []byte] {
	return op("profilePictureJPEG", (*Manager).ProfilePictureJPEG)
}

// OpIdentities maps phones and LIDs to both.
func OpIdentities() Op[[]types.JID, []Identity] { return op("identities", (*Manager).Identities) }

// OpBlocklist reads the account's block list.
func OpBlocklist() Op[None, []Identity] {
	return op("blocklist", func(m *Manager, ctx context.Context, id string, _ None) ([]Identity, error) {
		return m.Blocklist(ctx, id)
	})
}

// OpSetBlocked blocks or unblocks a user.
func OpSetBlocked() Op[BlockChange, None] { return op("setBlocked", noResult((*Manager).SetBlocked)) }

package messaging

import "context"

// InviteTexts makes the text of a group's invitation: the message followed
// by the group's invite link, which it asks WhatsApp for
// (account.Service, where the rules of groups live).
type InviteTexts interface {
	InviteText(ctx context.Context, sessionID, jid, number, message string) (string, error)
}

// Invite asks for a group's invitation sent to Number: Message followed by
// the invite link of group JID.
type Invite struct {
	JID, Number, Message string
	// IdempotencyKey, when set, makes the invitation once however often
	// it is asked (sendkey.go).
	IdempotencyKey string
}

// SendInvite sends the invitation as a text. With a key whose invitation
// was made, it answers that one without asking WhatsApp for the link again.
func (s *Service) SendInvite(ctx context.Context, sessionID string, in Invite) (res Result, err error) {
	defer func() { s.observe(TypeText, false, err) }()
	asked := struct{ Op, JID, Number, Message string }{"sendGroupInvite", in.JID, in.Number, in.Message}
	return s.keyed(ctx, sessionID, in.IdempotencyKey, asked, func(ctx context.Context, id string) (Result, error) {
		text, err := s.invites.InviteText(ctx, sessionID, in.JID, in.Number, in.Message)
		if err != nil {
			return Result{}, err
		}
		return s.send(ctx, sessionID, Request{Type: TypeText, Number: in.Number, Text: text}, id)
	})
}

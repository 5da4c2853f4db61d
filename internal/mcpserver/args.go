package mcpserver

import (
	"context"
	"strings"

	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/fault"
)

// The tools' arguments (inputSchema: a field without omitempty is
// required; the jsonschema tag is its description) and answers
// (outputSchema: GraphQL's data for the field the tool calls).

type sessionIn struct {
	SessionID string `json:"sessionId" jsonschema:"the session's id, from list_sessions"`
}

type sessionSummary struct {
	ID     string  `json:"id"`
	Name   string  `json:"name"`
	Status string  `json:"status" jsonschema:"CONNECTED when the session can send; also DISCONNECTED, CONNECTING, PAIRING, LOGGED_OUT…"`
	Phone  *string `json:"phone,omitempty" jsonschema:"the account's phone number once linked"`
}

type sessionsOut struct {
	Sessions []sessionSummary `json:"sessions"`
}

type chatsIn struct {
	SessionID  string  `json:"sessionId" jsonschema:"the session's id, from list_sessions"`
	Limit      *int    `json:"limit,omitempty" jsonschema:"chats in the page, 1 to 100 (default 50)"`
	Cursor     *string `json:"cursor,omitempty" jsonschema:"the previous page's pageInfo.endCursor"`
	UnreadOnly *bool   `json:"unreadOnly,omitempty" jsonschema:"only chats with messages not read yet"`
}

type chatsOut struct {
	Chats *model.ChatConnection `json:"chats"`
}

type messagesIn struct {
	SessionID string  `json:"sessionId" jsonschema:"the session's id, from list_sessions"`
	Chat      string  `json:"chat" jsonschema:"the chat: a phone number, a user JID, a LID or a group JID"`
	Limit     *int    `json:"limit,omitempty" jsonschema:"messages in the page, 1 to 100 (default 50)"`
	Before    *string `json:"before,omitempty" jsonschema:"the previous page's pageInfo.endCursor: older messages"`
}

type messagesOut struct {
	Messages *model.MessageConnection `json:"messages"`
}

type contactsIn struct {
	SessionID string `json:"sessionId" jsonschema:"the session's id, from list_sessions"`
	Query     string `json:"query" jsonschema:"part of a name, push name or phone number"`
}

type contactsOut struct {
	Contacts *model.ContactConnection `json:"contacts"`
}

type numbersIn struct {
	SessionID string   `json:"sessionId" jsonschema:"the session's id, from list_sessions"`
	Numbers   []string `json:"numbers" jsonschema:"1 to 50 phone numbers in international format"`
}

type numbersOut struct {
	CheckNumbers []*model.NumberCheck `json:"checkNumbers"`
}

type groupsOut struct {
	Groups []*model.Group `json:"groups"`
}

type groupIn struct {
	SessionID string `json:"sessionId" jsonschema:"the session's id, from list_sessions"`
	JID       string `json:"jid" jsonschema:"the group's JID (…@g.us)"`
}

type groupOut struct {
	Group *model.Group `json:"group"`
}

type sendTextIn struct {
	SessionID      string  `json:"sessionId" jsonschema:"the session's id, from list_sessions"`
	To             string  `json:"to" jsonschema:"a phone number in international format, or a chat JID (user, LID or group)"`
	Text           string  `json:"text" jsonschema:"the text"`
	Quoted         *string `json:"quoted,omitempty" jsonschema:"the id of a stored message of the session to reply to"`
	IdempotencyKey *string `json:"idempotencyKey,omitempty" jsonschema:"sends once for this key within 24 h"`
}

type sendTextOut struct {
	SendText *model.SendResult `json:"sendText"`
}

type sendMediaIn struct {
	SessionID string  `json:"sessionId" jsonschema:"the session's id, from list_sessions"`
	To        string  `json:"to" jsonschema:"a phone number in international format, or a chat JID (user, LID or group)"`
	Kind      string  `json:"kind" jsonschema:"image, video, document or audio"`
	Source    string  `json:"source" jsonschema:"an http(s) URL or base64 data"`
	Caption   *string `json:"caption,omitempty" jsonschema:"for an image, a video or a document"`
	FileName  *string `json:"fileName,omitempty" jsonschema:"for an image, a video or a document"`
}

// sendMediaOut is GraphQL's data for the send of the kind: one field set.
type sendMediaOut struct {
	SendImage    *model.SendResult `json:"sendImage,omitempty"`
	SendVideo    *model.SendResult `json:"sendVideo,omitempty"`
	SendDocument *model.SendResult `json:"sendDocument,omitempty"`
	SendAudio    *model.SendResult `json:"sendAudio,omitempty"`
}

func (o sendMediaOut) result() *model.SendResult {
	for _, r := range []*model.SendResult{o.SendImage, o.SendVideo, o.SendDocument, o.SendAudio} {
		if r != nil {
			return r
		}
	}
	return nil
}

// mediaKinds are send_media's kinds, each the mutation it calls.
var mediaKinds = []string{"image", "video", "document", "audio"}

// sendMedia calls the send of in.Kind. Audio has neither caption nor file
// name in the API: given one, the call is refused rather than sent without.
func sendMedia(ctx context.Context, b binding, in sendMediaIn) (sendMediaOut, error) {
	var (
		out sendMediaOut
		err error
	)
	switch in.Kind {
	case "image":
		out.SendImage, err = b.m.SendImage(ctx, in.SessionID, model.SendImageInput{Number: in.To, Source: in.Source, Caption: in.Caption, FileName: in.FileName})
	case "video":
		out.SendVideo, err = b.m.SendVideo(ctx, in.SessionID, model.SendVideoInput{Number: in.To, Source: in.Source, Caption: in.Caption, FileName: in.FileName})
	case "document":
		out.SendDocument, err = b.m.SendDocument(ctx, in.SessionID, model.SendDocumentInput{Number: in.To, Source: in.Source, Caption: in.Caption, FileName: in.FileName})
	case "audio":
		switch {
		case in.Caption != nil:
			return out, fault.InvalidField("caption", "caption is not sent with audio: give it for an image, a video or a document")
		case in.FileName != nil:
			return out, fault.InvalidField("fileName", "fileName is not sent with audio: give it for an image, a video or a document")
		}
		out.SendAudio, err = b.m.SendAudio(ctx, in.SessionID, model.SendAudioInput{Number: in.To, Source: in.Source})
	default:
		return out, fault.InvalidField("kind", "kind %q is not one of %s", fault.Clip(in.Kind, fault.QuoteLen), strings.Join(mediaKinds, ", "))
	}
	return out, err
}

type reactionIn struct {
	SessionID string `json:"sessionId" jsonschema:"the session's id, from list_sessions"`
	MessageID string `json:"messageId" jsonschema:"the id of a stored message of the session"`
	Emoji     string `json:"emoji" jsonschema:"one emoji; empty removes the reaction"`
}

type reactionOut struct {
	SendReaction *model.SendResult `json:"sendReaction"`
}

type markReadIn struct {
	SessionID  string   `json:"sessionId" jsonschema:"the session's id, from list_sessions"`
	Chat       string   `json:"chat" jsonschema:"the chat: a phone number, a user JID, a LID or a group JID"`
	MessageIDs []string `json:"messageIds,omitempty" jsonschema:"the received messages to mark read; none: every stored unread one of the chat"`
}

type markReadOut struct {
	MarkRead bool `json:"markRead"`
}

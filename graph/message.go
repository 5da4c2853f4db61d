package graph

import (
	"context"
	"io"
	"net/url"
	"time"

	"github.com/wagraph/wagraph/ent"
	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/messaging"
)

// send is every send mutation whose fields are in input: reach the
// session, then the domain.
func (r *Resolver) send(ctx context.Context, sessionID string, req messaging.Request) (*model.SendResult, error) {
	return r.sendWith(ctx, sessionID, "input", req)
}

// sendWith is send whose fields are in the argument arg ("": the
// mutation's own arguments).
func (r *Resolver) sendWith(ctx context.Context, sessionID, arg string, req messaging.Request) (*model.SendResult, error) {
	if _, err := r.reachSessionID(ctx, sessionID); err != nil {
		return nil, err
	}
	key, err := keyOf(ctx, &req.IdempotencyKey)
	if err != nil {
		return nil, err
	}
	req.IdempotencyKey = key
	res, err := r.Messages.Send(ctx, sessionID, req)
	if err != nil {
		if arg == "" {
			return nil, err
		}
		return nil, inArgument(arg, err)
	}
	out, _ := toSendResult(res, nil)
	if p := res.Recipient; p != nil {
		out.Recipient = &model.Identity{Input: req.Number, Jid: p.JID.String(), Phone: optional(p.Phone)}
		if !p.LID.IsEmpty() {
			out.Recipient.Lid = optional(p.LID.String())
		}
	}
	return out, nil
}

// toSendResult is a send's outcome, or its error.
func toSendResult(res messaging.Result, err error) (*model.SendResult, error) {
	if err != nil {
		return nil, err
	}
	return &model.SendResult{MessageID: res.MessageID, Timestamp: res.Timestamp, ScheduledAt: res.ScheduledAt}, nil
}

func toMessage(m *ent.Message) *model.Message {
	out := &model.Message{
		ID: m.MessageID, Chat: m.Chat, Sender: m.Sender, FromMe: m.FromMe, Type: m.Type,
		Text: optional(m.Text), Caption: optional(m.Caption), Status: string(m.Status), Timestamp: m.Timestamp,
		ViewOnce: m.ViewOnce, Edited: m.EditedAt != nil,
	}
	if len(m.Media) > 0 {
		u := MediaPath(m.SessionID, m.MessageID)
		out.MediaURL = &u
	}
	out.Reactions = make([]*model.Reaction, len(m.Reactions))
	for i, r := range m.Reactions {
		out.Reactions[i] = &model.Reaction{Emoji: r.Emoji, Sender: r.Sender, FromMe: r.FromMe}
	}
	return out
}

// MediaPath is where the media of a message is served: the REST route
// GET /api/v1/session/{sessionId}/message/{messageId}/media, as a path of
// this service (it knows no public base URL). Events and Message.mediaUrl
// point there, never at WhatsApp's servers.
func MediaPath(sessionID, messageID string) string {
	return "/api/v1/session/" + url.PathEscape(sessionID) + "/message/" + url.PathEscape(messageID) + "/media"
}

// Media is a message's decrypted media as the REST media route serves it:
// Body reads its Size bytes from the kept file or a temporary one, never
// whole in memory, seekable for Range requests; close it once they are
// written.
type Media struct {
	Body     io.ReadSeekCloser
	Size     int64
	Mimetype string
	FileName string // documents
	// SHA256 names the kept file (the ETag), ModTime when it was kept;
	// "" for media downloaded on demand.
	SHA256  string
	ModTime time.Time
}

// MessageMedia is a message's decrypted media with its content type and
// file name (documents), for the REST media route: GraphQL has no field
// for bytes, so this is the resolver both APIs share the rules of (the
// session reached first, then the message store: the kept file, else a
// download on demand).
func (r *Resolver) MessageMedia(ctx context.Context, sessionID, messageID string) (Media, error) {
	if _, err := r.reachSessionID(ctx, sessionID); err != nil {
		return Media{}, err
	}
	md, err := r.Messages.Media(ctx, sessionID, messageID)
	if err != nil {
		return Media{}, err
	}
	return Media{Body: md.Body, Size: md.Size, Mimetype: md.Mimetype, FileName: md.FileName, SHA256: md.SHA256, ModTime: md.ModTime}, nil
}

func isTrue(b *bool) bool { return b != nil && *b }

func valueOf(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

type idempotencyHeader struct{}

// keyOf is the idempotency key of a send: its argument (or input field)
// idempotencyKey, or the REST Idempotency-Key header carried in ctx; both
// given must agree.
func keyOf(ctx context.Context, arg *string) (string, error) {
	key := valueOf(arg)
	if h, _ := ctx.Value(idempotencyHeader{}).(string); h != "" {
		if key != "" && key != h {
			return "", fault.InvalidField("idempotencyKey", "the Idempotency-Key header and the body's idempotencyKey differ: give one of them")
		}
		key = h
	}
	return key, nil
}

// WithIdempotencyKey carries a REST request's Idempotency-Key header to the
// send it makes: the same as the input's idempotencyKey.
func WithIdempotencyKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, idempotencyHeader{}, key)
}

// toPoll is a poll's tally as the schema shows it.
func toPoll(p *messaging.Poll) *model.Poll {
	out := &model.Poll{MessageID: p.MessageID, Question: p.Question, SelectableCount: p.Selectable, Options: make([]*model.PollOption, len(p.Options))}
	for i, o := range p.Options {
		po := &model.PollOption{Name: o.Name, Votes: len(o.Voters), Voters: make([]*model.Identity, len(o.Voters))}
		for j, v := range o.Voters {
			po.Voters[j] = &model.Identity{Input: v.JID, Jid: v.JID, Phone: optional(v.Phone), Lid: optional(v.LID)}
		}
		out.Options[i] = po
	}
	return out
}

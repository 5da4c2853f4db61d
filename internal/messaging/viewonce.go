package messaging

import (
	"context"
	"fmt"
	"time"

	"github.com/wagraph/wagraph/ent"
	entmessage "github.com/wagraph/wagraph/ent/message"
	"github.com/wagraph/wagraph/internal/fault"
)

// A view-once message (an image, video or voice note its recipient may
// open once) stays one here: it is never forwarded (forward), and its media
// is served once. Viewed means the first successful download through the
// media route (Media): the view is taken as the download starts, so two
// requests at once cannot both have it, and given back when the download
// fails, so a failure costs no view.

// giveBackTimeout bounds giving a view back: it runs when the request's
// own context may be what ended the download.
const giveBackTimeout = 5 * time.Second

// takeView marks m viewed now, unless it was viewed already: then its
// media is NOT_FOUND, naming the rule. giveBack unmarks it.
func (s *Service) takeView(ctx context.Context, m *ent.Message) (giveBack func(), err error) {
	n, err := s.db.Message.Update().
		Where(entmessage.ID(m.ID), entmessage.ViewedAtIsNil()).
		SetViewedAt(s.now().UTC()).Save(ctx)
	if err != nil {
		return nil, fmt.Errorf("mark view-once message %s viewed: %w", m.MessageID, err)
	}
	if n == 0 {
		return nil, viewedOnce(m.MessageID)
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), giveBackTimeout)
		defer cancel()
		if err := s.db.Message.UpdateOneID(m.ID).ClearViewedAt().Exec(ctx); err != nil {
			s.log.WarnContext(ctx, "a view-once message's failed download still counts as its view", "session_id", m.SessionID, "message_id", m.MessageID, "err", err)
		}
	}, nil
}

func viewedOnce(messageID string) error {
	return fault.New(fault.NotFound, "message %s is view-once and was viewed: its media is served once (the first successful download)", messageID)
}

// notForwarded refuses forwarding a view-once message.
func notForwarded(messageID string) error {
	return fault.InvalidField("messageId", "messageId %s names a view-once message: WhatsApp never forwards view-once messages", messageID)
}

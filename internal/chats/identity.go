package chats

import (
	"context"
	"strings"

	"github.com/wagraph/wagraph/ent"
	entchat "github.com/wagraph/wagraph/ent/chat"
	entcontact "github.com/wagraph/wagraph/ent/contact"
	entidentity "github.com/wagraph/wagraph/ent/identity"
	"github.com/wagraph/wagraph/internal/events/payload"
	"github.com/wagraph/wagraph/whatsapp"
)

const (
	userServer = "@s.whatsapp.net"
	lidServer  = "@lid"
	groupSrv   = "@g.us"
)

// Person is what the store knows of a user's addresses: Phone (digits)
// and LID (…@lid), either empty when never learned.
type Person struct{ Phone, LID string }

// pair is a phone <-> LID pair an event told.
type pair struct{ phone, lid string }

// pairsOf lists the phone <-> LID pairs d tells: a message's sender, a
// reaction's, a contact, a user chat, a shared number, group members and
// receipts, the account's own creds.
func pairsOf(d payload.Data) []pair {
	var out []pair
	add := func(phone, lid payload.Text) {
		if p, l := digits(string(phone)), lidOf(string(lid)); p != "" && l != "" {
			out = append(out, pair{p, l})
		}
	}
	switch d := d.(type) {
	case *payload.Message:
		add(d.SenderPhone, d.SenderLID)
	case *payload.HistorySet:
		for i := range d.Messages {
			add(d.Messages[i].SenderPhone, d.Messages[i].SenderLID)
		}
	case *payload.Reaction:
		add(d.SenderPhone, d.SenderLID)
	case *payload.Receipt:
		add(d.ParticipantPhone, d.ParticipantLID)
	case *payload.Contact:
		add(d.Phone, d.LID)
	case *payload.ContactUpdate:
		add(d.Phone, d.LID)
	case *payload.Chat:
		if strings.HasSuffix(d.ID, userServer) {
			add(payload.Text(userOf(d.ID)), d.LID)
		}
	case *payload.PhoneNumberShare:
		add(d.Phone, payload.Text(d.LID))
	case *payload.Creds:
		add(d.Phone, d.LID)
	case *payload.GroupParticipants:
		for _, m := range d.Participants {
			add(m.Phone, m.LID)
		}
	case *payload.Group:
		for _, m := range d.Participants {
			add(m.Phone, m.LID)
		}
	}
	return out
}

// learnFrom stores the pairs d tells.
func (s *Store) learnFrom(ctx context.Context, sessionID string, d payload.Data) error {
	for _, p := range pairsOf(d) {
		if err := s.learn(ctx, sessionID, p.phone, p.lid); err != nil {
			return err
		}
	}
	return nil
}

// learn stores that phone and lid are one person's, and moves the chat
// and the contact the session knew by the LID alone to the phone JID
// (merged with those already there): a person is one chat and one contact
// however WhatsApp addressed them.
func (s *Store) learn(ctx context.Context, sessionID, phone, lid string) error {
	key := sessionID + "\x00" + phone
	if s.learned.has(key, lid) {
		return nil
	}
	err := s.withTx(ctx, "learn "+phone+" <-> "+lid, func(tx *ent.Tx) error {
		same, err := tx.Identity.Query().Where(entidentity.SessionID(sessionID), entidentity.Phone(phone), entidentity.Lid(lid)).Exist(ctx)
		if err != nil || same {
			return err
		}
		// A phone has one LID and a LID one phone: a pair that changed
		// replaces what either side was paired with.
		if _, err := tx.Identity.Delete().Where(entidentity.SessionID(sessionID),
			entidentity.Or(entidentity.Phone(phone), entidentity.Lid(lid))).Exec(ctx); err != nil {
			return err
		}
		if err := tx.Identity.Create().SetSessionID(sessionID).SetPhone(phone).SetLid(lid).Exec(ctx); err != nil {
			return err
		}
		if err := mergeChat(ctx, tx, sessionID, phone, lid); err != nil {
			return err
		}
		return mergeContact(ctx, tx, sessionID, phone, lid)
	})
	if err != nil {
		return err
	}
	s.remember(s.learned, key, lid)
	return nil
}

// mergeChat moves the chat known by lid to the phone's JID.
func mergeChat(ctx context.Context, tx *ent.Tx, sessionID, phone, lid string) error {
	byLID, err := tx.Chat.Query().Where(entchat.SessionID(sessionID), entchat.Jid(lid)).Only(ctx)
	if ent.IsNotFound(err) {
		_, err = tx.Chat.Update().Where(entchat.SessionID(sessionID), entchat.Jid(phone+userServer)).SetLid(lid).Save(ctx)
		return err
	}
	if err != nil {
		return err
	}
	byPhone, err := tx.Chat.Query().Where(entchat.SessionID(sessionID), entchat.Jid(phone+userServer)).Only(ctx)
	if ent.IsNotFound(err) {
		return tx.Chat.UpdateOne(byLID).SetJid(phone + userServer).SetLid(lid).Exec(ctx)
	}
	if err != nil {
		return err
	}
	u := tx.Chat.UpdateOne(byPhone).SetLid(lid).
		SetUnreadCount(byPhone.UnreadCount + byLID.UnreadCount).
		SetCountedRow(max(byPhone.CountedRow, byLID.CountedRow))
	if byPhone.Name == "" {
		u.SetName(byLID.Name)
	}
	if later(byLID.ActiveAt, byLID.ActiveRow, byPhone.ActiveAt, byPhone.ActiveRow) {
		u.SetActiveAt(byLID.ActiveAt).SetActiveRow(byLID.ActiveRow).
			SetLastMessageID(byLID.LastMessageID).SetNillableLastMessageAt(byLID.LastMessageAt)
	}
	if err := tx.Chat.DeleteOne(byLID).Exec(ctx); err != nil {
		return err
	}
	return u.Exec(ctx)
}

// mergeContact moves the contact known by lid to the phone's JID.
func mergeContact(ctx context.Context, tx *ent.Tx, sessionID, phone, lid string) error {
	byLID, err := tx.Contact.Query().Where(entcontact.SessionID(sessionID), entcontact.Jid(lid)).Only(ctx)
	if ent.IsNotFound(err) {
		c, err := tx.Contact.Query().Where(entcontact.SessionID(sessionID), entcontact.Jid(phone+userServer)).Only(ctx)
		if ent.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		f := factsOf(c)
		f.lid = lid
		return saveContact(ctx, tx, c, f)
	}
	if err != nil {
		return err
	}
	byPhone, err := tx.Contact.Query().Where(entcontact.SessionID(sessionID), entcontact.Jid(phone+userServer)).Only(ctx)
	if err != nil && !ent.IsNotFound(err) {
		return err
	}
	f := factsOf(byLID)
	f.jid, f.phone, f.lid = phone+userServer, phone, lid
	if byPhone != nil {
		f = factsOf(byPhone).fill(f)
		f.lid = lid
		if err := tx.Contact.DeleteOne(byLID).Exec(ctx); err != nil {
			return err
		}
		return saveContact(ctx, tx, byPhone, f)
	}
	return saveContact(ctx, tx, byLID, f)
}

// People completes jids (users by phone JID or LID; groups are skipped)
// with what the session learned: each one's phone and LID.
func (s *Store) People(ctx context.Context, sessionID string, jids []string) (map[string]Person, error) {
	out := make(map[string]Person, len(jids))
	var phones, lids []string
	for _, j := range jids {
		switch {
		case strings.HasSuffix(j, userServer):
			p := userOf(j)
			out[j] = Person{Phone: p}
			phones = append(phones, p)
		case strings.HasSuffix(j, lidServer):
			l := lidOf(j)
			out[j] = Person{LID: l}
			lids = append(lids, l)
		}
	}
	if len(phones)+len(lids) == 0 {
		return out, nil
	}
	ids, err := s.db.Identity.Query().Where(entidentity.SessionID(sessionID),
		entidentity.Or(entidentity.PhoneIn(phones...), entidentity.LidIn(lids...))).All(ctx)
	if err != nil {
		return nil, err
	}
	byPhone, byLID := map[string]string{}, map[string]string{}
	for _, id := range ids {
		byPhone[id.Phone], byLID[id.Lid] = id.Lid, id.Phone
	}
	for j, p := range out {
		if p.Phone != "" && p.LID == "" {
			p.LID = byPhone[p.Phone]
		}
		if p.LID != "" && p.Phone == "" {
			p.Phone = byLID[p.LID]
		}
		out[j] = p
	}
	return out, nil
}

// addresses are the JIDs a chat argument may be stored under: a group's
// own, or a user's phone JID and LID as far as the session knows them
// (the phone JID first).
func (s *Store) addresses(ctx context.Context, sessionID string, jid whatsapp.JID) ([]string, error) {
	j := jid.ToNonAD().String()
	if !strings.HasSuffix(j, userServer) && !strings.HasSuffix(j, lidServer) {
		return []string{j}, nil
	}
	people, err := s.People(ctx, sessionID, []string{j})
	if err != nil {
		return nil, err
	}
	p := people[j]
	var out []string
	if p.Phone != "" {
		out = append(out, p.Phone+userServer)
	}
	if p.LID != "" {
		out = append(out, p.LID)
	}
	return out, nil
}

// digits is s when it is a phone number's digits (a leading + dropped),
// else "".
func digits(s string) string {
	s = strings.TrimPrefix(s, "+")
	if s == "" || strings.ContainsFunc(s, func(r rune) bool { return r < '0' || r > '9' }) {
		return ""
	}
	return s
}

// lidOf is a LID JID without its device ("123:4@lid" is "123@lid"), or ""
// when s is none.
func lidOf(s string) string {
	if !strings.HasSuffix(s, lidServer) {
		return ""
	}
	user := userOf(s)
	if user == "" {
		return ""
	}
	return user + lidServer
}

// userOf is the user of a JID without agent or device.
func userOf(jid string) string {
	user, _, _ := strings.Cut(jid, "@")
	user, _, _ = strings.Cut(user, ":")
	user, _, _ = strings.Cut(user, ".")
	return user
}

func isGroup(jid string) bool { return strings.HasSuffix(jid, groupSrv) }

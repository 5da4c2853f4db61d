package chats

import (
	"context"
	"strings"

	"github.com/wagraph/wagraph/ent"
	entcontact "github.com/wagraph/wagraph/ent/contact"
	"github.com/wagraph/wagraph/internal/events/payload"
)

// contactFacts is what is known of a contact; an empty field is unknown.
type contactFacts struct {
	jid, phone, lid              string
	name, pushName, businessName string
}

func factsOf(c *ent.Contact) contactFacts {
	return contactFacts{jid: c.Jid, phone: c.Phone, lid: c.Lid, name: c.Name, pushName: c.PushName, businessName: c.BusinessName}
}

// fill is f with what newer tells over it.
func (f contactFacts) fill(newer contactFacts) contactFacts {
	for _, p := range []struct {
		dst *string
		src string
	}{
		{&f.phone, newer.phone}, {&f.lid, newer.lid}, {&f.name, newer.name},
		{&f.pushName, newer.pushName}, {&f.businessName, newer.businessName},
	} {
		if p.src != "" {
			*p.dst = p.src
		}
	}
	return f
}

// sortName is what the list orders the contact by: its first name known,
// folded to lower case.
func (f contactFacts) sortName() string {
	for _, n := range []string{f.name, f.pushName, f.businessName, f.phone, f.lid} {
		if n != "" {
			return strings.ToLower(n)
		}
	}
	return strings.ToLower(f.jid)
}

// search is the text contacts(search:) matches in: every name and the
// phone, folded to lower case, one per line (a term never spans two).
func (f contactFacts) search() string {
	return strings.ToLower(strings.Join([]string{f.name, f.pushName, f.businessName, f.phone}, "\n"))
}

// saveContact writes f over c.
func saveContact(ctx context.Context, tx *ent.Tx, c *ent.Contact, f contactFacts) error {
	return tx.Contact.UpdateOne(c).SetJid(f.jid).SetPhone(f.phone).SetLid(f.lid).SetName(f.name).
		SetPushName(f.pushName).SetBusinessName(f.businessName).SetSortName(f.sortName()).SetSearch(f.search()).Exec(ctx)
}

// upsertContact keeps what an event tells of a person: by phone JID when
// the phone is known (the identities learned first: a LID's phone is
// looked up), else by LID.
func (s *Store) upsertContact(ctx context.Context, sessionID string, f contactFacts) error {
	if f.phone == "" && strings.HasSuffix(f.jid, userServer) {
		f.phone = userOf(f.jid)
	}
	if f.lid == "" && strings.HasSuffix(f.jid, lidServer) {
		f.lid = lidOf(f.jid)
	}
	if f.phone == "" && f.lid != "" {
		people, err := s.People(ctx, sessionID, []string{f.lid})
		if err != nil {
			return err
		}
		f.phone = people[f.lid].Phone
	}
	switch {
	case f.phone != "":
		f.jid = f.phone + userServer
	case f.lid != "":
		f.jid = f.lid
	default:
		return nil // not a user
	}
	return s.withTx(ctx, "keep contact "+f.jid, func(tx *ent.Tx) error {
		c, err := tx.Contact.Query().Where(entcontact.SessionID(sessionID), entcontact.Jid(f.jid)).Only(ctx)
		if ent.IsNotFound(err) {
			return tx.Contact.Create().SetSessionID(sessionID).SetJid(f.jid).SetPhone(f.phone).SetLid(f.lid).
				SetName(f.name).SetPushName(f.pushName).SetBusinessName(f.businessName).
				SetSortName(f.sortName()).SetSearch(f.search()).Exec(ctx)
		}
		if err != nil {
			return err
		}
		return saveContact(ctx, tx, c, factsOf(c).fill(f))
	})
}

// sender keeps the sender of a received message as a contact, with the
// push name the message carried.
func (s *Store) sender(ctx context.Context, sessionID string, d *payload.Message) error {
	key := sessionID + "\x00" + d.Sender
	sig := string(d.PushName) + "\x00" + string(d.SenderPhone) + "\x00" + string(d.SenderLID)
	if s.seen.has(key, sig) {
		return nil
	}
	err := s.upsertContact(ctx, sessionID, contactFacts{jid: d.Sender, phone: string(d.SenderPhone),
		lid: lidOf(string(d.SenderLID)), pushName: string(d.PushName)})
	if err != nil {
		return err
	}
	s.remember(s.seen, key, sig)
	return nil
}

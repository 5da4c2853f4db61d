package whatsapp

// Lookups (surface.md §2): who a number or LID is — on WhatsApp or not,
// its user info, its profile picture, its phone and LID — and the
// account's block list. Each asks WhatsApp through the session's client;
// identities answer from whatsmeow's LID store first (the device store's
// phone ↔ LID mappings, which whatsmeow fills from every message, user
// query and history sync) and ask only for what it does not know.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/wagraph/wagraph/internal/events/payload"
	"github.com/wagraph/wagraph/internal/fault"
)

// NumberCheck is WhatsApp's answer about one phone number.
type NumberCheck struct {
	Number     string // the digits asked about
	OnWhatsApp bool
	// JID is the account's phone JID, WhatsApp's canonical form of the
	// number (it can differ, as for Brazilian mobile numbers); LID its
	// LID. Both empty when the number is not on WhatsApp.
	JID, LID   types.JID
	IsBusiness bool
	// VerifiedName is the name of a business's verified name certificate.
	VerifiedName string
}

// UserInfo is what WhatsApp tells of a user.
type UserInfo struct {
	JID, LID  types.JID // phone JID (empty when not known) and LID
	About     string
	PictureID string // "" when none, or hidden from this account
	Devices   []types.JID
	// BusinessName is the business's name as the session's contact store
	// has it (whatsmeow keeps there the verified name of every user info
	// answer and message); VerifiedName the name of the business's
	// verified name certificate in WhatsApp's answer to the number check
	// (none for a LID whose number is not known: only numbers are checked).
	BusinessName, VerifiedName string
}

// PictureQuery names a profile picture: of a user or a group, the
// thumbnail when Preview.
type PictureQuery struct {
	Chat    types.JID
	Preview bool
}

// ProfilePicture is WhatsApp's answer about a profile picture: its id and
// the address of its JPEG on WhatsApp's servers.
type ProfilePicture struct {
	ID, URL string
}

// BlockChange blocks or unblocks a user.
type BlockChange struct {
	JID   types.JID
	Block bool
}

// The bounds of a picture download: WhatsApp's profile pictures are JPEGs
// of at most 640×640 pixels, far below the size bound; the deadline is
// that of one HTTP exchange with its media servers.
const (
	MaxPictureBytes = 4 << 20
	pictureTimeout  = 30 * time.Second
)

// CheckNumbers asks WhatsApp, in one query, whether each number (digits,
// country code first) is on it; the answers are in the order asked.
func (m *Manager) CheckNumbers(ctx context.Context, sessionID string, numbers []string) ([]NumberCheck, error) {
	cli, err := m.client(sessionID)
	if err != nil {
		return nil, err
	}
	found, err := checkNumbers(ctx, cli, numbers)
	if err != nil {
		return nil, classify(sessionID, "check the numbers", err)
	}
	out := make([]NumberCheck, len(numbers))
	for i, n := range numbers {
		out[i] = found[n]
		out[i].Number = n
	}
	return out, nil
}

// checkNumbers runs IsOnWhatsApp for the distinct numbers and returns its
// answers by number; a number WhatsApp did not answer about is absent.
// whatsmeow stores the phone ↔ LID mappings the answer carries.
func checkNumbers(ctx context.Context, cli *whatsmeow.Client, numbers []string) (map[string]NumberCheck, error) {
	seen := make(map[string]bool, len(numbers))
	var ask []string
	for _, n := range numbers {
		if !seen[n] {
			seen[n] = true
			ask = append(ask, "+"+n)
		}
	}
	res, err := cli.IsOnWhatsApp(ctx, ask)
	if err != nil {
		return nil, err
	}
	out := make(map[string]NumberCheck, len(res))
	for _, r := range res {
		number := r.Query
		if len(number) > 0 && number[0] == '+' {
			number = number[1:]
		}
		if !seen[number] {
			continue
		}
		c := NumberCheck{Number: number, OnWhatsApp: r.IsIn}
		if r.IsIn {
			// whatsmeow asks in LID addressing mode: the answer names the
			// user by LID, with its number as PhoneNumber.
			for _, j := range []types.JID{r.PhoneNumber, r.JID} {
				switch {
				case j.Server == types.DefaultUserServer && c.JID.IsEmpty():
					c.JID = j.ToNonAD()
				case j.Server == types.HiddenUserServer && c.LID.IsEmpty():
					c.LID = j.ToNonAD()
				}
			}
			if c.JID.IsEmpty() {
				c.JID = types.NewJID(number, types.DefaultUserServer)
			}
			if r.VerifiedName != nil {
				c.IsBusiness, c.VerifiedName = true, r.VerifiedName.Details.GetVerifiedName()
			}
		}
		out[number] = c
	}
	return out, nil
}

// UserInfo asks WhatsApp about the user who (a phone JID or a LID): nil
// when no such user is on WhatsApp. A number is checked first (its answer
// carries the verified name); a LID is asked for as it is, by the number
// the LID store maps it to when it has one.
func (m *Manager) UserInfo(ctx context.Context, sessionID string, who types.JID) (*UserInfo, error) {
	cli, err := m.client(sessionID)
	if err != nil {
		return nil, err
	}
	who = who.ToNonAD()
	p := personOf(ctx, cli, who)
	out := &UserInfo{JID: p.pn, LID: p.lid}
	if !p.pn.IsEmpty() {
		found, err := checkNumbers(ctx, cli, []string{p.pn.User})
		if err != nil {
			return nil, classify(sessionID, "check the number", err)
		}
		c := found[p.pn.User]
		if !c.OnWhatsApp {
			return nil, nil
		}
		out.JID, out.VerifiedName = c.JID, c.VerifiedName
		if !c.LID.IsEmpty() {
			out.LID = c.LID
		}
	}
	ask := out.JID
	if ask.IsEmpty() {
		ask = out.LID
	}
	infos, err := cli.GetUserInfo(ctx, []types.JID{ask})
	if err != nil {
		return nil, classify(sessionID, "read the user's info", err)
	}
	info, ok := infos[ask]
	if !ok || len(info.Devices) == 0 {
		// Every account has a phone, device 0: a user WhatsApp lists
		// without devices is none.
		return nil, nil
	}
	out.About, out.PictureID, out.Devices = info.Status, info.PictureID, info.Devices
	if out.LID.IsEmpty() {
		out.LID = info.LID.ToNonAD()
	}
	if out.JID.IsEmpty() {
		out.JID = personOf(ctx, cli, out.LID).pn
	}
	if c, err := cli.Store.Contacts.GetContact(ctx, ask); err == nil {
		out.BusinessName = c.BusinessName
	}
	return out, nil
}

// ProfilePicture asks WhatsApp for the profile picture of a user or group:
// nil when there is none or its privacy hides it from this account.
func (m *Manager) ProfilePicture(ctx context.Context, sessionID string, q PictureQuery) (*ProfilePicture, error) {
	cli, err := m.client(sessionID)
	if err != nil {
		return nil, err
	}
	return profilePicture(ctx, sessionID, cli, q)
}

func profilePicture(ctx context.Context, sessionID string, cli *whatsmeow.Client, q PictureQuery) (*ProfilePicture, error) {
	info, err := cli.GetProfilePictureInfo(ctx, q.Chat.ToNonAD(), &whatsmeow.GetProfilePictureParams{Preview: q.Preview})
	switch {
	case errors.Is(err, whatsmeow.ErrProfilePictureNotSet), errors.Is(err, whatsmeow.ErrProfilePictureUnauthorized):
		return nil, nil
	case err != nil:
		return nil, classify(sessionID, "read the profile picture", err)
	case info == nil || info.URL == "":
		return nil, nil
	}
	return &ProfilePicture{ID: info.ID, URL: info.URL}, nil
}

// ProfilePictureJPEG downloads the profile picture of q from WhatsApp's
// servers through the session's media client (its proxy, if it has one):
// nil when there is none or it is hidden. At most MaxPictureBytes, within
// pictureTimeout.
func (m *Manager) ProfilePictureJPEG(ctx context.Context, sessionID string, q PictureQuery) ([]byte, error) {
	s, cli, err := m.sessionClient(sessionID)
	if err != nil {
		return nil, err
	}
	pic, err := profilePicture(ctx, sessionID, cli, q)
	if err != nil || pic == nil {
		return nil, err
	}
	s.mu.Lock()
	client := s.media
	s.mu.Unlock()
	if client == nil {
		return nil, fault.New(fault.NotConnected, "session %s is not connected", sessionID)
	}
	ctx, cancel := context.WithTimeout(ctx, pictureTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, pic.URL, nil)
	if err != nil {
		return nil, fault.Wrap(err, fault.WhatsAppError, "session %s: WhatsApp gave the picture an address that cannot be fetched", sessionID)
	}
	res, err := client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fault.Wrap(err, fault.WhatsAppTimeout, "session %s: WhatsApp's media server did not send the picture within %s", sessionID, pictureTimeout)
		}
		return nil, fault.Wrap(err, fault.WhatsAppError, "session %s: the picture could not be fetched from WhatsApp's media server", sessionID)
	}
	defer res.Body.Close()
	switch {
	case res.StatusCode == http.StatusNotFound || res.StatusCode == http.StatusGone:
		return nil, nil // replaced between the two requests
	case res.StatusCode != http.StatusOK:
		return nil, fault.New(fault.WhatsAppError, "session %s: WhatsApp's media server answered %d for the picture", sessionID, res.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(res.Body, MaxPictureBytes+1))
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return nil, fault.Wrap(err, fault.WhatsAppTimeout, "session %s: WhatsApp's media server did not send the picture within %s", sessionID, pictureTimeout)
	case err != nil:
		return nil, fault.Wrap(err, fault.WhatsAppError, "session %s: reading the picture from WhatsApp's media server failed", sessionID)
	case len(data) > MaxPictureBytes:
		return nil, fault.New(fault.WhatsAppError, "session %s: WhatsApp's media server sent a picture larger than %d bytes", sessionID, MaxPictureBytes)
	}
	return data, nil
}

// Identities maps each of ids (phone JIDs or LIDs) to both addresses: from
// the LID store first; the numbers it does not know are checked with
// WhatsApp in one query, whose answer names their LIDs (and is stored).
// A LID the store does not know keeps its phone empty: WhatsApp does not
// reveal the number behind a LID (hiding it is what LIDs are for); the
// mapping is learned when the person writes, shares the number or is
// looked up by number.
func (m *Manager) Identities(ctx context.Context, sessionID string, ids []types.JID) ([]Identity, error) {
	cli, err := m.client(sessionID)
	if err != nil {
		return nil, err
	}
	people := make([]person, len(ids))
	var ask []string
	for i, id := range ids {
		people[i] = personOf(ctx, cli, id.ToNonAD())
		if p := people[i]; p.lid.IsEmpty() && !p.pn.IsEmpty() {
			ask = append(ask, p.pn.User)
		}
	}
	var found map[string]NumberCheck
	if len(ask) > 0 {
		if found, err = checkNumbers(ctx, cli, ask); err != nil {
			return nil, classify(sessionID, "look the numbers up", err)
		}
	}
	out := make([]Identity, len(ids))
	for i, p := range people {
		if c, ok := found[p.pn.User]; ok && p.lid.IsEmpty() && c.OnWhatsApp {
			p.pn, p.lid = c.JID, c.LID
		}
		out[i] = identityOf(p)
	}
	return out, nil
}

// Blocklist reads the account's block list from WhatsApp, each blocked user
// with both addresses when known.
func (m *Manager) Blocklist(ctx context.Context, sessionID string) ([]Identity, error) {
	cli, err := m.client(sessionID)
	if err != nil {
		return nil, err
	}
	list, err := cli.GetBlocklist(ctx)
	if err != nil {
		return nil, classify(sessionID, "read the block list", err)
	}
	out := make([]Identity, 0, len(list.JIDs))
	for _, j := range list.JIDs {
		out = append(out, identityOf(personOf(ctx, cli, j)))
	}
	return out, nil
}

// identityOf is p as an Identity: addressed by phone JID when known.
func identityOf(p person) Identity {
	return Identity{JID: p.jid(), Phone: p.pn.User, LID: p.lid}
}

// SetBlocked blocks or unblocks a user (a phone JID, checked to be on
// WhatsApp first, or a LID). WhatsApp tells the account's other devices;
// this one learns only from the answer, so the session publishes the
// blocklist.update itself once WhatsApp accepted the change.
func (m *Manager) SetBlocked(ctx context.Context, sessionID string, c BlockChange) error {
	s, cli, err := m.sessionClient(sessionID)
	if err != nil {
		return err
	}
	target := c.JID.ToNonAD()
	if target.Server == types.DefaultUserServer {
		if target, err = m.recipient(ctx, s, cli, target); err != nil {
			return err
		}
	}
	action, verb := events.BlocklistChangeActionBlock, "block"
	if !c.Block {
		action, verb = events.BlocklistChangeActionUnblock, "unblock"
	}
	if _, err := cli.UpdateBlocklist(ctx, target, action); err != nil {
		return classify(sessionID, verb+" "+target.String(), err)
	}
	p := personData(personOf(ctx, cli, target))
	ev := Event{Kind: KindBlocklistUpdate, Data: &payload.BlocklistChange{JID: p.JID, Phone: p.Phone, LID: p.LID, Action: string(action)}}
	if err := m.publishEvents(s, cli, ev); err != nil {
		s.log.Warn(fmt.Sprintf("the user was %sed but the blocklist.update event was not stored", verb), "err", err)
	}
	return nil
}

package whatsapp

// The account of a session: profile picture and name, privacy settings and
// the default disappearing timer.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/appstate"
	waBinary "go.mau.fi/whatsmeow/binary"
	"go.mau.fi/whatsmeow/types"

	"github.com/wagraph/wagraph/internal/events/payload"
	"github.com/wagraph/wagraph/internal/fault"
)

// Privacy is the account's privacy settings, in whatsmeow's values: all,
// contacts, contact_blacklist, none, match_last_seen (Online), known
// (CallAdd).
type Privacy struct {
	LastSeen, Online, ProfilePicture, Status, ReadReceipts, GroupsAdd, CallAdd string
}

// SetPicture sets the profile picture of the session's own account (target
// is its user JID) or of a group (target is the group's JID). jpeg must be
// the square JPEG WhatsApp takes; converting to it is the caller's job.
func (m *Manager) SetPicture(ctx context.Context, sessionID string, target types.JID, jpeg []byte) error {
	cli, err := m.client(sessionID)
	if err != nil {
		return err
	}
	var to types.JID // empty: WhatsApp sets the picture of the account itself
	if target.Server == types.GroupServer {
		to = target
	}
	_, err = cli.SetGroupPhoto(ctx, to, jpeg)
	switch {
	case errors.Is(err, whatsmeow.ErrInvalidImageFormat):
		return fault.New(fault.Unsupported, "WhatsApp refused the picture: it takes JPEG images only")
	case err != nil && to.IsEmpty():
		return classify(sessionID, "set the profile picture", err)
	case err != nil:
		return groupFault(sessionID, to, "set the group picture", err)
	}
	return nil
}

// SetProfileName sets the account's push name, the name contacts see. It
// is a setting of the account's app state: every linked device and the
// phone learn it from the patch uploaded here. The session's PushName
// follows at once.
func (m *Manager) SetProfileName(ctx context.Context, sessionID, name string) error {
	s, _, err := m.sessionClient(sessionID)
	if err != nil {
		return err
	}
	release, err := s.lockAppState(ctx)
	if err != nil {
		return err
	}
	defer release()
	cli, err := s.connectedClient() // the client of now: it may have changed while queued
	if err != nil {
		return err
	}
	// The patch carries the time the session records with the name, later
	// than that of any earlier write (WhatsApp's timestamps are in
	// milliseconds): the events of earlier writes, which whatsmeow dispatches
	// on goroutines of their own, and may come after this write, are then
	// recognisably older and cannot put back a name written before it.
	s.mu.Lock()
	at := time.UnixMilli(max(time.Now().UnixMilli(), s.st.pushNameAt.UnixMilli()+1))
	s.mu.Unlock()
	patch := appstate.BuildSettingPushName(name)
	patch.Timestamp = at
	if err := writeAppState(ctx, s, cli, patch); err != nil {
		return classify(sessionID, "set the profile name", err) // the transport logs the cause

	}
	_, err = m.change(s, cli, func(s *session) bool {
		s.st.pushNameAt = at
		if name == s.st.pushName {
			return false
		}
		s.st.pushName = name
		return true
	}, Event{Kind: KindCredsUpdate, Data: &payload.Creds{PushName: payload.Text(name)}})
	if err != nil {
		s.log.Warn("the new push name was set but not stored", "err", err)
	}
	return nil
}

// sessionClient is client with the session: the entry point of operations that
// change the session's state too.
func (m *Manager) sessionClient(sessionID string) (*session, *whatsmeow.Client, error) {
	m.mu.Lock()
	s := m.sessions[sessionID]
	m.mu.Unlock()
	if s == nil {
		_, err := m.client(sessionID)
		return nil, nil, err
	}
	cli, err := s.connectedClient()
	return s, cli, err
}

// Privacy returns the account's privacy settings, fresh from WhatsApp (the
// phone may have changed them).
func (m *Manager) Privacy(ctx context.Context, sessionID string) (Privacy, error) {
	cli, err := m.client(sessionID)
	if err != nil {
		return Privacy{}, err
	}
	ps, err := fetchPrivacy(ctx, cli)
	if err != nil {
		return Privacy{}, classify(sessionID, "read the privacy settings", err)
	}
	return privacyOf(ps), nil
}

// SetPrivacy changes one privacy setting ("readreceipts", "groupadd",
// "status", "last", "online", "profile", "calladd") to value and returns all
// settings afterwards, as WhatsApp has them. The caller validates value
// against the setting; WhatsApp refuses a value a setting does not take
// (422).
func (m *Manager) SetPrivacy(ctx context.Context, sessionID, setting, value string) (Privacy, error) {
	cli, err := m.client(sessionID)
	if err != nil {
		return Privacy{}, err
	}
	_, err = cli.DangerousInternals().SendIQ(ctx, whatsmeow.DangerousInfoQuery{
		Namespace: "privacy", Type: "set", To: types.ServerJID,
		Content: []waBinary.Node{{Tag: "privacy", Content: []waBinary.Node{{
			Tag: "category", Attrs: waBinary.Attrs{"name": setting, "value": value},
		}}}},
	})
	if err != nil {
		return Privacy{}, classify(sessionID, "change the privacy setting "+setting, err)
	}
	ps, err := fetchPrivacy(ctx, cli)
	if err != nil {
		return Privacy{}, classify(sessionID, "read the privacy settings", err)
	}
	return privacyOf(ps), nil
}

// fetchPrivacy asks WhatsApp for the privacy settings. It sends the IQ of
// TryFetchPrivacySettings itself because whatsmeow hands out the pointer it
// caches, and its handler of the phone's privacy notifications writes
// through that pointer: reading it (or SetPrivacySetting copying it) while
// the phone changes a setting is a data race inside whatsmeow.
func fetchPrivacy(ctx context.Context, cli *whatsmeow.Client) (types.PrivacySettings, error) {
	resp, err := cli.DangerousInternals().SendIQ(ctx, whatsmeow.DangerousInfoQuery{
		Namespace: "privacy", Type: "get", To: types.ServerJID,
		Content: []waBinary.Node{{Tag: "privacy"}},
	})
	if err != nil {
		return types.PrivacySettings{}, err
	}
	node, ok := resp.GetOptionalChildByTag("privacy")
	if !ok {
		return types.PrivacySettings{}, &whatsmeow.ElementMissingError{Tag: "privacy", In: "response to privacy settings query"}
	}
	var ps types.PrivacySettings
	cli.DangerousInternals().ParsePrivacySettings(&node, &ps)
	return ps, nil
}

func privacyOf(ps types.PrivacySettings) Privacy {
	return Privacy{
		LastSeen: string(ps.LastSeen), Online: string(ps.Online), ProfilePicture: string(ps.Profile),
		Status: string(ps.Status), ReadReceipts: string(ps.ReadReceipts), GroupsAdd: string(ps.GroupAdd),
		CallAdd: string(ps.CallAdd),
	}
}

// SetDefaultDisappearingTimer sets the timer of the account's new chats: 0
// (off), 24 hours, 7 days or 90 days, the durations WhatsApp offers.
func (m *Manager) SetDefaultDisappearingTimer(ctx context.Context, sessionID string, d time.Duration) error {
	cli, err := m.client(sessionID)
	if err != nil {
		return err
	}
	if err := cli.SetDefaultDisappearingTimer(ctx, d); err != nil {
		return classify(sessionID, "set the default disappearing timer", err)
	}
	return nil
}

// App state writes. whatsmeow builds a patch on the collection's version and
// LTHash in the device store, uploads it and then advances the stored state
// from the server's answer; two writes at once build on the same base, and
// whatsmeow's handling of the server's conflict answer then races its own
// follow-up fetch over the stored MACs, leaving a stored version and hash
// that no longer match the server's: every later write fails. So the writes
// of a session take turns, and a state found broken anyway (by a write of an
// earlier process, or another device's write racing a fetch) is synced again
// in full from the server.

// lockAppState waits for the session's turn to write app state, as long as
// ctx lasts, and returns the function that ends the turn.
func (s *session) lockAppState(ctx context.Context) (release func(), err error) {
	select {
	case s.appState <- struct{}{}:
		return func() { <-s.appState }, nil
	case <-ctx.Done():
		return nil, fault.Wrap(ctx.Err(), fault.WhatsAppTimeout,
			"session %s: the request ended while waiting for the session's earlier account changes", s.id)
	}
}

// writeAppState sends patch; when the session's stored app state turns out
// not to match the server's, it syncs the collection again in full (which
// replaces the stored version, hash and MACs with the server's) and sends
// the patch once more. The caller holds the session's app state turn.
func writeAppState(ctx context.Context, s *session, cli *whatsmeow.Client, patch appstate.PatchInfo) error {
	err := cli.SendAppState(ctx, patch)
	if err == nil || !brokenAppState(err) {
		return err
	}
	s.log.Warn("the stored app state does not match WhatsApp's: syncing it again in full and retrying",
		"collection", patch.Type, "err", err)
	if ferr := cli.FetchAppState(ctx, patch.Type, true, false); ferr != nil {
		return fmt.Errorf("sync app state %s again after %w: %w", patch.Type, err, ferr)
	}
	if err := cli.SendAppState(ctx, patch); err != nil {
		return fmt.Errorf("send app state %s after syncing it again: %w", patch.Type, err)
	}
	s.log.Info("the app state was synced again and the write went through", "collection", patch.Type)
	return nil
}

// brokenAppState reports whether err of SendAppState says the stored state
// does not match the server's: a hash or MAC that does not verify, or a
// conflict the server still reports after whatsmeow applied what it sent
// and retried. whatsmeow reports the conflict only as text (ErrAppStateUpdate
// followed by the server's <error code="409" …/>).
func brokenAppState(err error) bool {
	return errors.Is(err, appstate.ErrMismatchingLTHash) ||
		errors.Is(err, appstate.ErrMismatchingPatchMAC) ||
		errors.Is(err, appstate.ErrMissingPreviousSetValueOperation) ||
		(errors.Is(err, whatsmeow.ErrAppStateUpdate) && strings.Contains(err.Error(), `code="409"`))
}

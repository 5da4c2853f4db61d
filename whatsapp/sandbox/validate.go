package sandbox

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"go.mau.fi/whatsmeow/types"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// Input checks, which the controls' checks are made of. Do runs them
// whichever the network, so a Remote refuses bad input with the same fault
// as a Local before anything crosses the wire (and the control API, which
// runs a Local, checks again).

// The simulated world's limits, WhatsApp's own.
const (
	maxImageBytes = 16 << 20
	maxTextRunes  = 65536
)

// checkPhone accepts a phone number of the contract: 7 to 15 digits.
func checkPhone(field, phone string) error {
	if len(phone) < 7 || len(phone) > 15 || strings.ContainsFunc(phone, func(r rune) bool { return r < '0' || r > '9' }) {
		return fault.InvalidField(field, "%s must be a phone number of 7 to 15 digits in international format without '+' (got %q)", field, fault.Clip(phone, fault.QuoteLen))
	}
	return nil
}

// checkAccount accepts a phone number that is a WhatsApp account of the
// simulated world.
func checkAccount(field, phone string) error {
	if err := checkPhone(field, phone); err != nil {
		return err
	}
	if wafake.ValidPhone(phone) != nil {
		return fault.InvalidField(field, "%s %s is not on WhatsApp (in the sandbox, numbers ending in 0000 never are)", field, phone)
	}
	return nil
}

// checkUser accepts a user JID ("491701234567@s.whatsapp.net") of an
// account; simulated phones only write 1:1 chats.
func checkUser(field, s string) error {
	jid, err := types.ParseJID(s)
	if err == nil && jid.Server == types.GroupServer {
		return fault.InvalidField(field, "%s %q is a group: simulated phones only write 1:1 chats so far; use a user JID such as 491701234567@s.whatsapp.net", field, fault.Clip(s, fault.QuoteLen))
	}
	if err != nil || !strings.Contains(s, "@") || jid.Server != types.DefaultUserServer || jid.Device != 0 {
		return fault.InvalidField(field, "%s must be a user JID such as 491701234567@s.whatsapp.net (got %q)", field, fault.Clip(s, fault.QuoteLen))
	}
	return checkAccount(field, jid.User)
}

// checkDevice accepts the JID of a linked device, by phone number or LID
// ("491701234567:3@s.whatsapp.net", "200000000000001:3@lid").
func checkDevice(field, s string) error {
	jid, err := types.ParseJID(s)
	if err != nil || (jid.Server != types.DefaultUserServer && jid.Server != types.HiddenUserServer) || jid.Device == 0 {
		return fault.InvalidField(field, "%s must be the JID of a linked device such as 491701234567:3@s.whatsapp.net (got %q)", field, fault.Clip(s, fault.QuoteLen))
	}
	return nil
}

// checkGroup accepts a group JID.
func checkGroup(field, s string) error {
	jid, err := types.ParseJID(s)
	if err != nil || jid.Server != types.GroupServer || jid.User == "" {
		return fault.InvalidField(field, "%s must be a group JID such as 120363025246125888@g.us (got %q)", field, fault.Clip(s, fault.QuoteLen))
	}
	return nil
}

// checkQR accepts what a pairing client shows as its QR code: a link
// https://wa.me/settings/linked_devices#ref,noise key,identity key,secret,
// client type (wafake.ParseQR).
func checkQR(code string) error {
	if _, err := wafake.ParseQR(code); err != nil {
		return fault.InvalidField("qrCode", "qrCode must be the code of a session's current QR code: %sref,noise key,identity key,secret,client type", wafake.QRLinkPrefix)
	}
	return nil
}

// checkPairingCode accepts the 8 characters a session got from pairPhone,
// with or without the dash.
func checkPairingCode(code string) error {
	c := strings.NewReplacer("-", "", " ", "").Replace(code)
	if len(c) != 8 || strings.ContainsFunc(c, func(r rune) bool {
		return (r < '0' || r > '9') && (r < 'A' || r > 'Z') && (r < 'a' || r > 'z')
	}) {
		return fault.InvalidField("code", "code must be the 8-character pairing code the session shows, such as ABCD-EFGH (got %q)", fault.Clip(code, fault.QuoteLen))
	}
	return nil
}

func checkMessageID(id string) error {
	if strings.TrimSpace(id) == "" {
		return fault.InvalidField("messageId", "messageId must not be empty")
	}
	return nil
}

// maxSentAtSkew bounds how far a simulated phone's stamp of its own
// message may be from now: far enough to try a late edit, or an early one.
const maxSentAtSkew = 24 * time.Hour

// checkSentAt accepts a phone's own time of a message: none (now), or one
// within maxSentAtSkew of now.
func checkSentAt(at time.Time) error {
	if at.IsZero() {
		return nil
	}
	if d := time.Until(at); d > maxSentAtSkew || d < -maxSentAtSkew {
		return fault.InvalidField("sentAt", "sentAt must be within %s of now (got %s)", maxSentAtSkew, at.UTC().Format(time.RFC3339))
	}
	return nil
}

func checkText(text string) error {
	if text == "" {
		return fault.InvalidField("text", "text must not be empty")
	}
	if n := utf8.RuneCountInString(text); n > maxTextRunes {
		return fault.New(fault.TooLarge, "text has %d characters; WhatsApp takes texts up to %d", n, maxTextRunes)
	}
	return nil
}

func checkImage(data []byte, mimetype string) error {
	if len(data) == 0 {
		return fault.InvalidField("image", "image must not be empty")
	}
	if len(data) > maxImageBytes {
		return fault.New(fault.TooLarge, "image is %.1f MiB; WhatsApp takes images up to 16 MiB", float64(len(data))/(1<<20))
	}
	if !strings.HasPrefix(mimetype, "image/") {
		return fault.InvalidField("mimetype", "mimetype must be an image type such as image/jpeg (got %q)", fault.Clip(mimetype, fault.QuoteLen))
	}
	return nil
}

func checkEmoji(emoji string) error {
	if strings.TrimSpace(emoji) == "" {
		return fault.InvalidField("emoji", "emoji must not be empty")
	}
	return nil
}

func checkReceiptType(typ string) error {
	switch typ {
	case "delivered", "read", "played":
		return nil
	}
	return fault.InvalidField("type", "type must be delivered, read or played (got %q)", fault.Clip(typ, fault.QuoteLen))
}

func checkPresenceState(state string) error {
	switch state {
	case "available", "unavailable", "composing", "paused":
		return nil
	}
	return fault.InvalidField("state", "state must be available, unavailable, composing or paused (got %q)", fault.Clip(state, fault.QuoteLen))
}

// refusal classifies an error of the simulated network. wafake reports the
// refusals a caller can cause as plain errors, so they are told apart by
// their wording here, in one place; a test of this package meets each. The
// rest is internal: its text is logged, never shown.
func refusal(err error, subject string) error {
	if err == nil {
		return nil
	}
	var ve *wafake.ValueError
	msg := err.Error()
	has := func(s string) bool { return strings.Contains(msg, s) }
	switch {
	case errors.As(err, &ve):
		return fault.New(fault.Invalid, "the simulated network does not accept %q as %s", fault.Clip(ve.Value, fault.QuoteLen), ve.What)
	case errors.Is(err, wafake.ErrNoSubscriber):
		return fault.New(fault.Conflict, "no linked device of %s subscribed to this presence; WhatsApp sends availability only to subscribers", subject)
	case has("no client is showing QR reference"):
		return fault.New(fault.Conflict, "no session shows this QR code: it was replaced by a newer one, or the session is not pairing")
	case has("does not match the keys of the client"):
		return fault.InvalidField("qrCode", "the QR code does not match the keys of the session showing it")
	case has("no client is waiting for a pairing code"):
		return fault.New(fault.Conflict, "no session is waiting for a pairing code of %s: call pairPhone first", subject)
	case has("pairing code entered on") && has("is wrong"):
		return fault.InvalidField("code", "the pairing code is wrong; the session still waits for the right one")
	case has("a pairing code is already being entered"):
		return fault.New(fault.Conflict, "a pairing code is already being entered for this session")
	case has("the pairing client went away"), has("did not confirm the pairing"), has("did not finish pairing by code"):
		return fault.New(fault.Conflict, "the session did not complete the linking: it disconnected or did not answer")
	case has("has no linked device"), has("has no such linked device"):
		return noDevice(subject)
	case has("no linked device of") && has("is online"):
		return fault.New(fault.NotConnected, "no linked device of %s is online", subject)
	case has("has blocked"):
		return fault.New(fault.WhatsAppRefused, "%s has blocked the sender", subject)
	case has("is not a linked device"):
		return fault.New(fault.NotFound, "%s is not a linked device of the simulated network", subject)
	case has("is not online"):
		return fault.New(fault.NotConnected, "%s is not connected to the simulated network", subject)
	}
	return fmt.Errorf("sandbox: simulated network: %w", err)
}

func noDevice(phone string) error {
	return fault.New(fault.Conflict, "%s has no linked device to receive it", phone)
}

// checkID accepts a non-empty message id named field.
func checkID(field, id string) error {
	if strings.TrimSpace(id) == "" {
		return fault.InvalidField(field, "%s must not be empty", field)
	}
	return nil
}

// checkVoteOptions bounds a vote's options: at most a poll's 12, each a
// poll option's 100 characters.
func checkVoteOptions(options []string) error {
	if len(options) > maxVoteOptions {
		return fault.InvalidField("options", "options must name at most %d options (got %d)", maxVoteOptions, len(options))
	}
	for i, o := range options {
		if o == "" || utf8.RuneCountInString(o) > 100 {
			return fault.InvalidField(fmt.Sprintf("options[%d]", i), "options[%d] must be 1 to 100 characters", i)
		}
	}
	return nil
}

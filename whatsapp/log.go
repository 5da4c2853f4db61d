package whatsapp

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	waBinary "go.mau.fi/whatsmeow/binary"
	waLog "go.mau.fi/whatsmeow/util/log"
)

// waLogger hands whatsmeow's printf-style log to slog. The slog logger of a
// session already carries its session_id, so every whatsmeow record about a
// session names it; module says which part of whatsmeow spoke ("whatsmeow",
// "whatsmeow/Socket", "sqlstore", …).
//
// Records that carry pairing secrets are withheld (see withheld): at debug
// level whatsmeow prints every node it sends and receives and every QR code
// it emits, and whoever reads a QR code's ref and secret can link the
// session to their own phone first.
type waLogger struct {
	log    *slog.Logger
	module string
}

var _ waLog.Logger = waLogger{}

// newWALogger returns a whatsmeow logger writing to log under module.
func newWALogger(log *slog.Logger, module string) waLog.Logger {
	return waLogger{log: log, module: module}
}

func (w waLogger) Errorf(msg string, args ...any) { w.logf(slog.LevelError, msg, args) }
func (w waLogger) Warnf(msg string, args ...any)  { w.logf(slog.LevelWarn, msg, args) }
func (w waLogger) Infof(msg string, args ...any)  { w.logf(slog.LevelInfo, msg, args) }

// Debugf: whatsmeow logs every node it sends and receives at debug level, so
// the message is only formatted when the level is enabled.
func (w waLogger) Debugf(msg string, args ...any) { w.logf(slog.LevelDebug, msg, args) }

func (w waLogger) Sub(module string) waLog.Logger {
	return waLogger{log: w.log, module: w.module + "/" + module}
}

func (w waLogger) logf(level slog.Level, msg string, args []any) {
	ctx := context.Background()
	if !w.log.Enabled(ctx, level) {
		return
	}
	if level == slog.LevelError && passkeyHandoff(msg, args) {
		w.log.Log(ctx, slog.LevelInfo, "the phone took the pairing code and hands over to the account's passkey (primary_hello without a wrapped key)", "module", w.module)
		return
	}
	if what := withheld(msg, args); what != "" {
		w.log.Log(ctx, level, what+" (withheld from the log: it carries pairing secrets)", "module", w.module)
		return
	}
	w.log.Log(ctx, level, fmt.Sprintf(msg, args...), "module", w.module)
}

// pairingTag reports whether nodes of tag carry pairing secrets: the QR
// refs (pair-device, ref), the signed device identity and its keys
// (pair-success, pair-device-sign, device-identity), the phone-code
// pairing (link_code_*) and the passkey step's challenge, assertion,
// nonces and encrypted keys (passkey.go).
func pairingTag(tag string) bool {
	switch tag {
	case "pair-device", "ref", "pair-success", "pair-device-sign", "device-identity",
		"passkey_request_options", "passkey_prologue", "primary_ephemeral_identity", "companion_nonce",
		"encrypted_pairing_request":
		return true
	}
	return strings.HasPrefix(tag, "link_code")
}

// withheld says what a whatsmeow record is when it must not be logged
// whole ("" when it may): a QR code being emitted (qrchan.go), a frame
// that failed to decode, printed raw (client.go), or a node holding any
// pairing tag, printed by the Send and Recv loggers (client.go).
func withheld(msg string, args []any) string {
	switch {
	case strings.HasPrefix(msg, "Emitting QR code"):
		return "Emitting QR code"
	case strings.HasPrefix(msg, "Errored frame hex"):
		return "Errored frame"
	}
	for _, a := range args {
		var n *waBinary.Node
		switch v := a.(type) {
		case *waBinary.Node:
			n = v
		case waBinary.Node:
			n = &v
		}
		if n == nil {
			continue
		}
		if tag := pairingIn(n); tag != "" {
			return fmt.Sprintf("%s node holding %s", n.Tag, tag)
		}
	}
	return ""
}

// pairingIn returns the first pairing tag of n or a node under it, "" when
// there is none.
func pairingIn(n *waBinary.Node) string {
	if pairingTag(n.Tag) {
		return n.Tag
	}
	for _, c := range n.GetChildren() {
		if tag := pairingIn(&c); tag != "" {
			return tag
		}
	}
	return ""
}

// passkeyHandoff reports whether a record is whatsmeow (at our pin) failing
// on the primary_hello WhatsApp sends by phone code to an account that
// requires a passkey: it has no wrapped ephemeral key, and the passkey
// notification that follows links the device (passkey.go). Not an error.
func passkeyHandoff(msg string, args []any) bool {
	if !strings.HasPrefix(msg, "Failed to handle code pair notification") || len(args) != 1 {
		return false
	}
	err, ok := args[0].(error)
	return ok && strings.Contains(err.Error(), "link_code_pairing_wrapped_primary_ephemeral_pub")
}

package whatsapp

import (
	"context"
	"fmt"
	"log/slog"

	waLog "go.mau.fi/whatsmeow/util/log"
)

// waLogger hands whatsmeow's printf-style log to slog. The slog logger of a
// session already carries its session_id, so every whatsmeow record about a
// session names it; module says which part of whatsmeow spoke ("whatsmeow",
// "whatsmeow/Socket", "sqlstore", …).
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
	w.log.Log(ctx, level, fmt.Sprintf(msg, args...), "module", w.module)
}

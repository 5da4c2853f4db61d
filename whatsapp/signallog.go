package whatsapp

import "go.mau.fi/libsignal/logger"

// libsignal (the Signal protocol under whatsmeow) logs through a logger of
// its package that it sets itself, unlocked, at its first log line: two
// sessions decrypting their first messages at once raced on it, and it
// printed to stdout. It is set here once, before anything runs, to one
// that drops the lines: libsignal's failures reach whatsmeow as errors,
// which are logged with their session, and its debug lines may name key
// material.
func init() {
	var quiet logger.Loggable = signalLog{}
	logger.Setup(&quiet)
}

type signalLog struct{}

func (signalLog) Debug(caller, message string)   {}
func (signalLog) Info(caller, message string)    {}
func (signalLog) Warning(caller, message string) {}
func (signalLog) Error(caller, message string)   {}
func (signalLog) Configure(settings string)      {}

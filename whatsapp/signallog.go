package whatsapp

import "go.mau.fi/libsignal/logger"

// libsignal logs through a package variable that it sets, unlocked, on its
// first use when nobody has: sessions starting in parallel in a fresh
// process race on it. Setting it once, before anything can use libsignal,
// closes the race; its messages repeat what whatsmeow reports, so they are
// dropped.
func init() {
	var l logger.Loggable = quietSignal{}
	logger.Setup(&l)
}

type quietSignal struct{}

func (quietSignal) Debug(string, string)   {}
func (quietSignal) Info(string, string)    {}
func (quietSignal) Warning(string, string) {}
func (quietSignal) Error(string, string)   {}
func (quietSignal) Configure(string)       {}

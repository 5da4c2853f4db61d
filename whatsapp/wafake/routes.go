package wafake

import (
	"net/http"

	waBinary "go.mau.fi/whatsmeow/binary"
)

// The network's surface in one place: the HTTP paths it serves, the IQ
// namespaces it answers and the stanzas it takes from clients. Each area
// (pairing, messages, media, groups, …) lives in its own file and is wired
// here.

// iqError is an IQ answered with <error code text>.
type iqError struct {
	code int
	text string
}

// iqFunc answers one IQ: the children of the result, or an error.
type iqFunc func(c *conn, node *waBinary.Node) ([]waBinary.Node, *iqError)

func (n *Network) routes(mux *http.ServeMux) {
	mux.HandleFunc("/ws/chat", n.serveChat)
}

// iqHandler returns the handler of an IQ namespace; nil answers an empty
// result.
func (n *Network) iqHandler(xmlns string) iqFunc {
	switch xmlns {
	case "encrypt":
		return n.handleEncrypt
	case "usync":
		return n.handleUsync
	}
	return nil
}

// stanzaHandler returns the handler of a stanza a client sends.
func (n *Network) stanzaHandler(tag string) func(*conn, *waBinary.Node) {
	switch tag {
	case "iq":
		return n.handleIQ
	case "message":
		return n.handleMessage
	case "ack":
		return n.handleAck
	case "receipt":
		return n.handleReceipt
	}
	return nil
}

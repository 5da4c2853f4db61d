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
	mux.HandleFunc("GET /{$}", n.serveWebPage) // web.whatsapp.com: the current version
	mux.HandleFunc("/ws/chat", n.serveChat)
	mux.HandleFunc("POST /mms/", n.serveMediaUpload)
	mux.HandleFunc("DELETE /mms/", n.serveMediaDelete)
	mux.HandleFunc("GET /v/", n.serveMedia)
	mux.HandleFunc("GET /pp/", n.serveProfilePicture)
	mux.HandleFunc("GET /ppg/", n.serveGroupPicture)
}

// iqHandler returns the handler of an IQ namespace; nil answers an empty
// result.
func (n *Network) iqHandler(xmlns string) iqFunc {
	switch xmlns {
	case "encrypt":
		return n.handleEncrypt
	case "usync":
		return n.handleUsync
	case "md":
		return n.handleMD
	case "w:sync:app:state":
		return n.handleAppStateSync
	case "w:m":
		return n.handleMediaConn
	case "privacy":
		return n.handlePrivacy
	case "disappearing_mode":
		return n.handleDisappearingMode
	case "status":
		return n.handleStatus
	case "w:mex":
		return n.handleMex
	case "blocklist":
		return n.handleBlocklist
	case "w:profile:picture":
		return n.handleProfilePicture
	case "w:g2":
		return n.handleGroupIQ
	}
	return nil
}

// beforeLogin reports whether a namespace serves clients that have not
// logged in: pairing (md) and user queries. Every other routed namespace
// answers them 401, so its handler can rely on c.dev.
func beforeLogin(xmlns string) bool { return xmlns == "md" || xmlns == "usync" }

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
	case "presence":
		return n.handlePresence
	case "chatstate":
		return n.handleChatState
	case "call":
		return n.handleCall
	}
	return nil
}

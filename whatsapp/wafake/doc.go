// Package wafake is a simulated WhatsApp network: a server on loopback that
// the real, unmodified whatsmeow client connects to — Noise handshake, binary
// nodes, Signal encryption, pairing, media, groups, app state — and whose
// simulated phones decrypt what they receive, so a test asserts what a real
// recipient would see. It backs the project's tests and the sandbox mode.
//
// In a test, in ten lines:
//
//	net, _ := wafake.New(wafake.Options{})           // 127.0.0.1, trusts the fake root
//	defer net.Close()                                // waits for every goroutine
//	cli := whatsmeow.NewClient(device, waLog.Noop)   // device from a sqlstore container
//	net.Point(cli)                                   // redirect websocket and HTTP
//	qr, _ := cli.GetQRChannel(ctx); cli.Connect()
//	net.ScanQR((<-qr).Code, "491701234567")          // the phone links the device
//	// … wait for events.Connected, then:
//	cli.SendMessage(ctx, types.NewJID("4915112345678", types.DefaultUserServer), msg)
//	net.Inbox("4915112345678")                       // what that phone decrypted
//	net.SendText("4915112345678", "491701234567", "hi") // a contact writes back
//
// With Options.StateDir the network keeps its world — accounts and their
// phones' Signal state, linked devices, groups, inboxes, app state, media —
// in that directory (statefile.go, persist.go), so the devices linked to it
// log in again after a restart. A device it has no record of (its state
// was deleted, or it kept none) is refused with ResetFailureReason, which
// the session manager reports as a reset of the simulated network.
//
// As at WhatsApp, a stanza for a device stays queued until the device
// acknowledges it (an ack, or a delivery receipt for a message) and comes
// again at its next login; a retry receipt does not take it off the queue,
// and makes the phone that sent the message encrypt it again for that
// device — a new Signal session from the receipt's keys when it carries
// them — and send it with the retry count (retryresend.go), at most four
// times.
//
// An account may require a passkey to link a device (RequirePasskey), as
// WhatsApp asks some accounts since mid-2026: once its phone took the QR
// code or the pairing code, the client gets WebAuthn request options and
// must answer with an assertion the network verifies (a real ECDSA P-256
// signature, webauthn.go), then the two sides agree on a confirmation code
// before the network links it (passkey.go). PasskeyAssertion is the
// account's authenticator answering a challenge.
//
// A phone gives a device it links what a real one does (surface.md §5): with
// the app state key, its profile name (critical_block) and the state its
// app state holds (chats archived, pinned, muted, its address book), then a
// history sync of each chat with its most recent message only. It keeps
// every message of its direct chats (phonehistory.go; AddHistory gives it
// older ones, from before any device linked) and answers a device's history
// request (BuildHistorySyncRequest) with the messages before the device's
// oldest, an empty sync when it holds none. What the phone's owner does to
// chats later (ArchiveChat, PinChat, MuteChat, MarkChatRead, EditContact…)
// reaches the devices as app state patches.
//
// The world follows sandbox.md: every number of 7 to 15 digits is an account
// with a phone, except those ending in 0000. The network only ever listens on
// loopback, and nothing but an explicit call (New, TrustRoot, Point) turns a
// client towards it.
package wafake

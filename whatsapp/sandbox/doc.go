// Package sandbox is the control surface of the simulated WhatsApp network
// (sandbox.md): what the sandbox GraphQL fields and the project's Go tests
// ask of the simulated world — a phone scanning a QR code or entering a
// pairing code, what a phone decrypted, a contact writing (a text, an
// image, a burst of texts for load and crash tests), reacting,
// confirming, typing, the network's view of groups and accounts, a dropped
// connection, a device removed by its phone.
//
// Each control is defined once, as a Control value that its request type
// builds (LinkDevice, SendText, Inbox, …): its name, its checks and what it
// does to a network. Do runs a control on a Network, one of two kinds,
// with the same validation, results and errors (fault codes and messages):
//
//   - Local owns an in-process wafake.Network (tests; `wagraph serve
//     --sandbox`, through OpenLocal, whose network keeps its world in
//     <data-dir>/sandbox).
//   - Remote talks to a network running as its own process (`wagraph
//     sandbox-network`, RunNetwork) over that process's control API, which
//     Handler serves from the same table of controls: JSON over HTTP, one
//     POST per control, and two GETs that read: the network's address and
//     root, and each linked device's connection counts (control.go,
//     connections.go).
//
// The control API has no authentication: it is a development tool that
// listens on loopback only (Listen refuses anything else), and Handler
// refuses requests whose Host is not a loopback name and POSTs that are not
// JSON, so that a web page in a browser on the same machine cannot drive it
// (DNS rebinding, simple cross-site form posts).
//
// Results are plain types, never whatsmeow's: the resolvers above this
// package map them to GraphQL without importing whatsmeow.
package sandbox

// Package wafake is a simulated WhatsApp network: a server on loopback that
// the real, unmodified whatsmeow client connects to (Noise handshake, binary
// nodes, pairing, …), used by the project's tests and by the sandbox mode.
//
// Using it in a test:
//
//	net, err := wafake.New(wafake.Options{})   // listens on 127.0.0.1, trusts the fake root
//	defer net.Close()
//	cli := whatsmeow.NewClient(device, log)    // device from a sqlstore container
//	net.Point(cli)                             // redirect the client's HTTP and websocket
//	qr, _ := cli.GetQRChannel(ctx)
//	cli.Connect()                              // the network offers QR codes on <-qr
//
// Only loopback is ever listened on, and nothing but an explicit call turns a
// client towards the network.
package wafake

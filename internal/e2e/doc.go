// Package e2e holds the end-to-end tests of the whole server: each starts
// wagraph in-process in sandbox mode (the real whatsmeow client against the
// simulated network), calls it through REST and GraphQL as a client would,
// and asserts what the simulated recipient decrypted or what the network
// now holds. It has no code besides its tests.
package e2e

// Package e2e holds the end-to-end tests of the whole server: each starts
// wagraph in-process in sandbox mode (the real whatsmeow client against the
// simulated network), calls it through REST and GraphQL as a client would,
// and asserts what the simulated recipient decrypted or what the network
// now holds. It has no code besides its tests.
//
// The tests run in parallel, each on a server and database of its own: the
// database is a copy of one migrated once per test binary
// (internal/dbtest), so no two servers migrate at once (ent's migration
// writes to shared table descriptions). The few that measure latency under
// load or starve a subscriber on purpose (TestIsolation,
// TestEventsStalledSubscriber, TestSandboxSendBurst) do not call
// t.Parallel: go test runs them alone, before the parallel ones resume.
package e2e

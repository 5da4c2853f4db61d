// Package crashtest holds the tests that run wagraph's own binary as
// several processes. The cluster test (cluster_test.go, PostgreSQL only)
// starts a network and three servers on one database, links 30 sessions,
// SIGKILLs the process holding most of them while contacts keep writing,
// and checks the failover: every session CONNECTED again on the others
// within 30 s, no device ever connected twice at once (the network counts
// each device's connections), nothing lost for a webhook receiver or a
// subscriber on a surviving process.
//
// The crash test of the event pipeline: wagraph's
// own binary runs as two child processes, the simulated network
// (`wagraph sandbox-network`) and the server (`wagraph serve
// --sandbox-network`); the network sends a burst of texts to a linked
// session, the server is killed with SIGKILL in the middle and started
// again on the same data directory, and the test checks that nothing was
// lost: every text stored and delivered to a webhook at least once, a
// duplicate delivery carrying the same webhook-id, the event log without a
// gap. It has no code besides its tests; they need a Unix system (process
// groups, signals) and the go command, which builds the binary.
package crashtest

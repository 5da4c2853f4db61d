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
// gap.
//
// The storage experiments of issue 22 (storagefail_test.go) run the same
// two processes and fail the server's storage for 20 s when half of a
// 2,000-text burst is in: TestPostgresStoppedMidBurst (PostgreSQL pass
// only) stops a PostgreSQL server of the test's own (pgserver_test.go:
// initdb and pg_ctl, never the shared one) and starts it again, /readyz
// 503 meanwhile; TestDiskFullMidBurst (SQLite pass only) gives the server
// a 64 MiB tmpfs of its own as data directory (unshare: a user and mount
// namespace), fills it to the last page and empties it again, /readyz 503
// naming the full disk meanwhile; TestFreezeMidBurst (both backends)
// freezes the server with SIGSTOP for longer than the manager's store
// timeout, then SIGCONT. Each checks every text stored exactly once and
// delivered to the webhook at least once within 30 s of the storage
// coming back, the session CONNECTED, the event log whole and, for the
// first two, wagraph_store_failures_total moved on /metrics; it logs the
// texts stored at the fault, the time to all stored and all delivered, and
// the duplicates delivered. Their server is wagraph built without the race
// detector (storagefail_test.go says why); the crash test's and the cluster
// test's servers run under it.
//
// The event stream on NATS JetStream (nats_test.go, TestNATSStreamOutage,
// both backends: one server on SQLite, two on PostgreSQL): 10 linked
// sessions take 2,000 inbound texts at once, a real NATS server (a child
// process, internal/natstest) is stopped for 20 s when a third of them is
// in and started again; every event of the log is then in the stream once
// (by Nats-Msg-Id), in seq order per session, with the webhook's body, and
// the webhooks' latency and the storing pace while the broker was away are
// logged beside those before, and held to them.
//
// The package has no code besides its tests; they need a Unix system
// (process groups, signals) and the go command, which builds the binary.
package crashtest

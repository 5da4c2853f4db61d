// Package bench is the load program of issue 11 (cmd/wagraph-bench): it
// starts a built wagraph and a reference server as their own processes,
// drives them over loopback with a closed-loop load of keep-alive
// connections, and reports each figure as a ratio against the reference
// measured in the same run, over several interleaved rounds.
package bench

package bench

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestSpreadEvenly(t *testing.T) {
	nodes := []string{"bench-1", "bench-2"}
	ids := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprint("s", i)
		}
		return out
	}
	held := func(by ...string) map[string]string {
		m := map[string]string{}
		for i, o := range by {
			m[fmt.Sprint("s", i)] = o
		}
		return m
	}
	for _, tc := range []struct {
		name   string
		ids    []string
		owners map[string]string
		nodes  []string
		want   bool
	}{
		{"one session on either node", ids(1), held("bench-2"), nodes, true},
		{"even split", ids(4), held("bench-1", "bench-2", "bench-2", "bench-1"), nodes, true},
		{"odd split within one", ids(5), held("bench-1", "bench-2", "bench-2", "bench-1", "bench-1"), nodes, true},
		{"all on one", ids(4), held("bench-1", "bench-1", "bench-1", "bench-1"), nodes, false},
		{"three to one", ids(4), held("bench-1", "bench-1", "bench-1", "bench-2"), nodes, false},
		{"a session without a holder", ids(2), held("bench-1"), nodes, false},
		{"a holder outside the nodes", ids(2), held("bench-1", "bench-9"), nodes, false},
		{"three nodes, seven sessions", ids(7), held("a", "b", "c", "a", "b", "c", "a"), []string{"a", "b", "c"}, true},
		{"three nodes, one idle", ids(4), held("a", "b", "a", "b"), []string{"a", "b", "c"}, false},
		{"one node holds everything", ids(3), held("a", "a", "a"), []string{"a"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, counts := spreadEvenly(tc.ids, tc.owners, tc.nodes)
			if got != tc.want {
				t.Errorf("spreadEvenly = %v (counts %v); want %v", got, counts, tc.want)
			}
		})
	}
}

// TestServerOf: with n servers each worker takes them in turn, and so does
// each worker's session, whatever the session count (the cases of goal 2).
func TestServerOf(t *testing.T) {
	for _, tc := range []struct{ servers, sessions, workers int }{
		{1, 1, 16}, {2, 1, 16}, {2, 50, 16}, {3, 50, 16}, {2, 2, 4},
	} {
		t.Run(fmt.Sprintf("%d servers %d sessions %d workers", tc.servers, tc.sessions, tc.workers), func(t *testing.T) {
			// per session, how many sends go to each server over many
			// rounds of every worker
			per := map[int][]int{}
			const sendsEach = 600
			for w := range tc.workers {
				for i := range sendsEach {
					s := senderOf(w, i, tc.workers, tc.sessions)
					v := serverOf(w, i, tc.servers)
					if v < 0 || v >= tc.servers {
						t.Fatalf("serverOf(%d, %d, %d) = %d", w, i, tc.servers, v)
					}
					if per[s] == nil {
						per[s] = make([]int, tc.servers)
					}
					per[s][v]++
				}
			}
			for s, counts := range per {
				total := 0
				for _, c := range counts {
					total += c
				}
				for v, c := range counts {
					share := float64(c) / float64(total)
					if want := 1 / float64(tc.servers); share < want*0.8 || share > want*1.2 {
						t.Errorf("session %d: server %d gets %.2f of its sends (%v); want about %.2f", s, v, share, counts, want)
					}
				}
			}
		})
	}
}

// TestSubscriberPlace: subscribers go to the servers in turn, and each
// server's subscribers are sampled alike (every sampleEvery-th of them).
func TestSubscriberPlace(t *testing.T) {
	for _, tc := range []struct{ n, servers, every int }{
		{1000, 1, 10}, {1000, 2, 10}, {1000, 3, 10}, {20, 2, 10}, {10, 4, 1},
	} {
		t.Run(fmt.Sprintf("%d on %d every %d", tc.n, tc.servers, tc.every), func(t *testing.T) {
			subs := make([]int, tc.servers)
			sampled := make([]int, tc.servers)
			for i := range tc.n {
				s, sample := subscriberPlace(i, tc.servers, tc.every)
				subs[s]++
				if sample {
					sampled[s]++
				}
			}
			for s := range tc.servers {
				if lo := tc.n / tc.servers; subs[s] < lo || subs[s] > lo+1 {
					t.Errorf("server %d has %d subscribers %v; want %d or %d", s, subs[s], subs, lo, lo+1)
				}
				want := (subs[s] + tc.every - 1) / tc.every
				if sampled[s] != want {
					t.Errorf("server %d: %d of its %d subscribers sampled; want %d", s, sampled[s], subs[s], want)
				}
			}
		})
	}
}

func TestDebugAddrOf(t *testing.T) {
	for _, tc := range []struct {
		addr string
		i    int
		want string // "" is an error
	}{
		{"127.0.0.1:6060", 0, "127.0.0.1:6060"},
		{"127.0.0.1:6060", 1, "127.0.0.1:6061"},
		{"[::1]:6060", 2, "[::1]:6062"},
		{"127.0.0.1:0", 1, ""},
		{"127.0.0.1:65535", 1, ""},
		{"localhost", 1, ""},
	} {
		got, err := debugAddrOf(tc.addr, tc.i)
		if tc.want == "" {
			if err == nil {
				t.Errorf("debugAddrOf(%q, %d) = %q; want an error", tc.addr, tc.i, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("debugAddrOf(%q, %d) = %q, %v; want %q", tc.addr, tc.i, got, err, tc.want)
		}
	}
}

func TestDatabaseName(t *testing.T) {
	for _, tc := range []struct{ label, prefix string }{
		{"sends", "wagraph_bench_sends_"},
		{"memory_empty_2", "wagraph_bench_memory_empty_2_"},
		{"Fan-Out; DROP TABLE x", "wagraph_bench_fanoutdroptablex_"},
		{strings.Repeat("a", 80), "wagraph_bench_" + strings.Repeat("a", 30) + "_"},
	} {
		got, err := databaseName(tc.label)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(got, tc.prefix) || len(got) != len(tc.prefix)+8 || len(got) > 63 {
			t.Errorf("databaseName(%q) = %q; want %q and 8 hex digits, at most 63 bytes", tc.label, got, tc.prefix)
		}
		for _, r := range got {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
				t.Errorf("databaseName(%q) = %q: %q is not a plain identifier's", tc.label, got, r)
			}
		}
	}
}

func TestBackendLine(t *testing.T) {
	for _, tc := range []struct {
		postgres bool
		goal     string
		servers  int
		want     string
	}{
		{false, "sends", 1, "SQLite"},
		{true, "sends", 1, "PostgreSQL (a database created for this goal), one wagraph process"},
		{true, "sends", 2, "2 wagraph processes"},
		{true, "fanout", 3, "3 wagraph processes"},
		{true, "memory", 2, "one wagraph process"},
		{true, "overhead", 2, "one wagraph process"},
	} {
		if got := backendLine(tc.postgres, tc.goal, tc.servers); !strings.Contains(got, tc.want) {
			t.Errorf("backendLine(%v, %q, %d) = %q; want it to say %q", tc.postgres, tc.goal, tc.servers, got, tc.want)
		}
	}
}

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		name, stat string
		want       procStat
		wantErr    bool
	}{
		{name: "postgres backend", stat: "812 (postgres) S 790 790 790 0 -1 4194560 1000 0 0 0 250 50 7 3 20 0 1 0 100 0 0",
			want: procStat{ppid: 790, cpu: 3 * time.Second, childCPU: 100 * time.Millisecond}},
		{name: "name with spaces and parentheses", stat: "7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 7 3 1 1 20 0 1 0 1 0 0",
			want: procStat{ppid: 1, cpu: 100 * time.Millisecond, childCPU: 20 * time.Millisecond}},
		{name: "no name", stat: "7 a R 1", wantErr: true},
		{name: "too short for the children's CPU", stat: "7 (a) R 1 7 7 0 -1 0 0 0 0 0 7 3 0", wantErr: true},
		{name: "ppid not a number", stat: "7 (a) R x 7 7 0 -1 0 0 0 0 0 7 3 0 0 20", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStat(tc.stat)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

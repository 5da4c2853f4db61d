package bench

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"
)

// servers are the wagraph processes of a goal: one, or with -servers N on
// PostgreSQL, N processes on the goal's database forming a cluster (each
// session run by one of them, any of them answering any request).
type servers []*wagraphServer

// nodeID is the --node-id of the goal's i-th server.
func nodeID(i int) string { return "bench-" + strconv.Itoa(i+1) }

// startServers starts n servers one after the other (the first creates the
// schema; the others find it) with the network flags.
func startServers(e *env, n int, network ...string) (servers, error) {
	if n > 1 && e.dbURL == "" {
		return nil, fmt.Errorf("%d servers need PostgreSQL (-postgres): on SQLite each process has a database of its own", n)
	}
	var ss servers
	for i := range n {
		s, err := startWagraphNode(e, i, network...)
		if err != nil {
			ss.stop()
			return nil, fmt.Errorf("server %d of %d: %w", i+1, n, err)
		}
		ss = append(ss, s)
	}
	return ss, nil
}

func (ss servers) stop() {
	for _, s := range ss {
		s.stop()
	}
}

// cpus are the CPU times of each server, in order.
func (ss servers) cpus() ([]time.Duration, error) {
	out := make([]time.Duration, len(ss))
	for i, s := range ss {
		c, err := s.cpu()
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

// cpu is the CPU time of all the servers together.
func (ss servers) cpu() (time.Duration, error) {
	cs, err := ss.cpus()
	var sum time.Duration
	for _, c := range cs {
		sum += c
	}
	return sum, err
}

// rss is the resident memory of all the servers together, in bytes.
func (ss servers) rss() (int64, error) {
	var sum int64
	for _, s := range ss {
		m, err := processMemory(s.cmd.Process.Pid)
		if err != nil {
			return 0, err
		}
		sum += m.RSS
	}
	return sum, nil
}

// waitSpread waits until every session of ids is CONNECTED and, with more
// than one server, held by the servers in even shares (each its share ±1:
// the cluster rebalances every third of the lease TTL, 5 s by default), so
// that a measurement starts with the load where it stays; it returns each
// session's holder (its --node-id; "" on a single server without one).
func (ss servers) waitSpread(ctx context.Context, ids []string, limit time.Duration) (map[string]string, error) {
	nodes := make([]string, len(ss))
	for i := range ss {
		nodes[i] = nodeID(i)
	}
	var owners map[string]string
	err := ss[0].waitFor(fmt.Sprintf("%d sessions CONNECTED and spread over %d processes", len(ids), len(ss)), limit, func() (bool, error) {
		var out struct {
			Sessions []struct {
				ID, Status string
				Owner      *string
			}
		}
		if err := ss[0].graphql(ctx, `{ sessions { id status owner } }`, nil, &out); err != nil {
			return false, err
		}
		status := map[string]string{}
		owners = map[string]string{}
		for _, s := range out.Sessions {
			status[s.ID] = s.Status
			if s.Owner != nil {
				owners[s.ID] = *s.Owner
			}
		}
		for _, id := range ids {
			if status[id] != "CONNECTED" {
				return false, fmt.Errorf("session %s is %q", id, status[id])
			}
		}
		if len(ss) == 1 {
			return true, nil
		}
		if ok, counts := spreadEvenly(ids, owners, nodes); !ok {
			return false, fmt.Errorf("held %v", counts)
		}
		return true, nil
	})
	return owners, err
}

// spreadEvenly reports whether the sessions ids are each held by one of
// nodes, every node holding len(ids)/len(nodes) rounded down or up, and
// how many each holds (a holder outside nodes, or none, under "").
func spreadEvenly(ids []string, owners map[string]string, nodes []string) (bool, map[string]int) {
	counts := map[string]int{}
	for _, n := range nodes {
		counts[n] = 0
	}
	for _, id := range ids {
		o := owners[id]
		if _, known := counts[o]; !known {
			o = ""
		}
		counts[o]++
	}
	if counts[""] > 0 {
		return false, counts
	}
	lo := len(ids) / len(nodes)
	hi := lo
	if len(ids)%len(nodes) != 0 {
		hi++
	}
	for _, n := range nodes {
		if counts[n] < lo || counts[n] > hi {
			return false, counts
		}
	}
	delete(counts, "")
	return true, counts
}

// serverOf is the server the i-th request of worker w goes to: the
// servers in turn, so that with n servers a session's requests reach its
// holder one time in n and are forwarded the others.
func serverOf(w, i, n int) int { return (w + i) % n }

// debugAddrOf is the --debug-addr of the i-th server: the given address
// with its port moved up by i, so that every process can be profiled.
func debugAddrOf(addr string, i int) (string, error) {
	if i == 0 {
		return addr, nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("-debug-addr %q: %w", addr, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p == 0 || p+i > 65535 {
		return "", fmt.Errorf("-debug-addr %q: want a fixed port below %d for %d servers", addr, 65535-i, i+1)
	}
	return net.JoinHostPort(host, strconv.Itoa(p+i)), nil
}

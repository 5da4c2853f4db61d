package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// On SQLite the database's work is done inside wagraph's process and
// counted in its CPU; on PostgreSQL it is done by the server's processes
// (a backend per connection), so a fair comparison counts those too.

// postmaster finds the PostgreSQL server's main process, when it runs on
// this machine: the parent of the backend serving the given connection.
func (d *databases) postmaster(ctx context.Context) (int, error) {
	var backend int
	if err := d.admin.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		return 0, fmt.Errorf("the server's backend pid: %w", err)
	}
	st, err := readStat(backend)
	if err != nil {
		return 0, fmt.Errorf("PostgreSQL's processes are not on this machine: %w", err)
	}
	comm, err := os.ReadFile("/proc/" + strconv.Itoa(st.ppid) + "/comm")
	if err != nil || !strings.HasPrefix(strings.TrimSpace(string(comm)), "postgres") {
		return 0, fmt.Errorf("backend %d's parent %d is not PostgreSQL's postmaster (%q, %v)", backend, st.ppid, comm, err)
	}
	return st.ppid, nil
}

// postgresCPU is the CPU time PostgreSQL's processes have used so far: the
// postmaster's own and that of its children it has waited for (backends
// that ended), plus every live child's.
func postgresCPU(postmaster int) (time.Duration, error) {
	pm, err := readStat(postmaster)
	if err != nil {
		return 0, err
	}
	total := pm.cpu + pm.childCPU
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == postmaster {
			continue
		}
		st, err := readStat(pid)
		if err != nil || st.ppid != postmaster {
			continue // gone meanwhile, or not the server's
		}
		total += st.cpu + st.childCPU
	}
	return total, nil
}

// procStat is what the load program reads of /proc/<pid>/stat.
type procStat struct {
	ppid     int
	cpu      time.Duration // utime + stime
	childCPU time.Duration // cutime + cstime: children waited for
}

func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseStat(string(b))
}

// parseStat reads ppid (field 4), utime, stime, cutime and cstime (fields
// 14-17), counting from the last ')' as parseStatCPU does.
func parseStat(stat string) (procStat, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return procStat{}, errors.New("stat: no command name")
	}
	f := strings.Fields(stat[i+1:])
	// f[0] is field 3: ppid is f[1], utime..cstime f[11]..f[14].
	if len(f) < 15 {
		return procStat{}, fmt.Errorf("stat: %d fields after the name", len(f))
	}
	var n [5]int64
	for k, s := range []string{f[1], f[11], f[12], f[13], f[14]} {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return procStat{}, fmt.Errorf("stat: %q: %w", s, err)
		}
		n[k] = v
	}
	tick := time.Second / clockTicks
	return procStat{ppid: int(n[0]), cpu: time.Duration(n[1]+n[2]) * tick, childCPU: time.Duration(n[3]+n[4]) * tick}, nil
}

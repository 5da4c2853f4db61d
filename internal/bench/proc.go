package bench

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat.
// It is 100 on every Linux architecture Go supports (the kernel fixes it
// for user space whatever its internal HZ), and reading it with sysconf
// would need cgo.
const clockTicks = 100

// child is one process the load program started, in its own process group
// so that ending it ends anything it started.
type child struct {
	name string
	cmd  *exec.Cmd
	log  string // its stdout and stderr
	done chan struct{}
	err  error // how it ended, once done is closed
}

// startChild runs bin with args, its output to logPath.
func startChild(name, bin, logPath string, args ...string) (*child, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%s log: %w", name, err)
	}
	defer f.Close() // the child has its own descriptor
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = childEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s (%s): %w", name, bin, err)
	}
	c := &child{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// childEnv is this environment without wagraph's settings: a child is
// configured by its flags alone.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "WAGRAPH_") {
			env = append(env, kv)
		}
	}
	return env
}

// stop asks the process group to end (SIGTERM), then kills it after 10 s.
func (c *child) stop() {
	select {
	case <-c.done:
		return
	default:
	}
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		<-c.done
	}
}

// waitFor polls cond every 20 ms until it holds, the child ends or limit
// passes.
func (c *child) waitFor(what string, limit time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(limit)
	for {
		ok, err := cond()
		if ok {
			return nil
		}
		select {
		case <-c.done:
			return fmt.Errorf("%s: %s ended (%v) before that; its log: %s", what, c.name, c.err, c.log)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not within %s (last: %v); %s's log: %s", what, limit, err, c.name, c.log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// logged waits for a JSON log line whose msg is msg and returns its addr.
func (c *child) logged(msg string, limit time.Duration) (string, error) {
	var addr string
	err := c.waitFor(c.name+" "+msg, limit, func() (bool, error) {
		f, err := os.Open(c.log)
		if err != nil {
			return false, err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			var rec struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Msg == msg && rec.Addr != "" {
				addr = rec.Addr
				return true, nil
			}
		}
		return false, sc.Err()
	})
	return addr, err
}

// cpu is the CPU time the child's process has used so far (user and
// system, all its threads).
func (c *child) cpu() (time.Duration, error) {
	return processCPU(c.cmd.Process.Pid)
}

func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("cpu of %d: %w", pid, err)
	}
	return parseStatCPU(string(b))
}

// parseStatCPU reads utime and stime (fields 14 and 15) of a
// /proc/<pid>/stat line. The command name (field 2) is in parentheses and
// may hold spaces and parentheses itself: the fields are counted from the
// last ')'.
func parseStatCPU(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("stat: no command name")
	}
	f := strings.Fields(stat[i+1:])
	// f[0] is field 3 (state): utime is f[11], stime f[12].
	if len(f) < 13 {
		return 0, fmt.Errorf("stat: %d fields after the name", len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("stat: %q: %w", s, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// loadAverage is the first three fields of /proc/loadavg, or "?": printed
// beside figures taken on a machine others may share.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

//go:build unix

package crashtest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/dbtest"
)

// The storage experiments of issue 22 (must show 1 and 2), each with the
// network and the server as two processes: the storage fails in the middle
// of a burst of texts for 20 s and comes back. Then every text of the burst
// is stored exactly once and delivered to the webhook at least once, both
// within 30 s of the storage coming back, and the session is CONNECTED.
//
// The server here is wagraph built without the race detector
// (startPlain): the 30 s goal is a figure of the product as it runs, and
// the thousand texts replayed after the storage's return are decrypted and
// stored at the detector's pace otherwise: on PostgreSQL all stored 14.1 s
// after its return on a quiet machine (7.8 s plain), and 37.4 s beside the
// rest of make test in a CI run, past the goal. The code these
// experiments drive is under the detector elsewhere: the store failures,
// the stanzas left unacknowledged and the reconnection in whatsapp's
// storefail_test.go, in process; a server process through a SIGKILL and
// a restart in crash_test.go.
const (
	faultFor = 20 * time.Second // how long the storage stays failed
	// faultAt is how far the burst has come when the storage fails: half
	// way, so a thousand texts arrive while it is failed and after (the
	// replay after the recovery is what the 30 s goal measures; the crash
	// test kills at a fifth).
	faultAt      = burst / 2
	recoveryGoal = 30 * time.Second // issue 22: all stored and delivered within 30 s of the storage coming back
	// recoveryWait is how long a test waits past the storage's return
	// before it gives up: longer than the goal, so a late recovery is
	// measured rather than cut off.
	recoveryWait = recoveryGoal + 30*time.Second
	// tmpfsSize is the server's filesystem in TestDiskFullMidBurst: room
	// for the database, little enough to fill in a moment.
	tmpfsSize = "64m"

	storeFailures = "wagraph_store_failures_total"
	undecryptable = "wagraph_undecryptable_messages_total"
)

// TestPostgresStoppedMidBurst: PostgreSQL, the server's database, is
// stopped (pg_ctl stop -m fast) when half of a 2,000-text burst is in,
// stays down 20 s (/readyz 503 all along) and is started again. The server
// runs on a PostgreSQL server of the test's own: the one the other tests
// share stays up.
func TestPostgresStoppedMidBurst(t *testing.T) {
	if !dbtest.Postgres(t) {
		t.Skip("PostgreSQL stopped mid-burst: the PostgreSQL pass of make test runs this test")
	}
	pg := startPostgres(t)
	loc := dbtest.Location{DataDir: t.TempDir(), URL: pg.URL}
	r := newRig(t, func(cs *children, control string) *child {
		return cs.startPlain("server", serveArgs(loc.DataDir, control, loc.URL)...)
	}, fromStore(t, loc))

	r.experiment(t, "PostgreSQL stopped", true, func() time.Time {
		pg.stop(t)
		answers := r.srv.pollReadyz(faultFor, nil)
		pg.start(t)
		back := time.Now()
		for _, a := range answers {
			if a.code != http.StatusServiceUnavailable {
				t.Errorf("/readyz %.1f s into the outage: %d %s (%v), want 503 while PostgreSQL is down", a.at.Seconds(), a.code, a.body, a.err)
			}
		}
		t.Logf("/readyz while PostgreSQL was down: %s", summarize(answers))
		return back
	})
}

// TestDiskFullMidBurst: the server's data directory is a tmpfs of 64 MiB
// of its own (a user and mount namespace: unshare), filled to the last
// page when half of a 2,000-text burst is in, kept full 20 s (/readyz
// 503 naming the full disk all along) and emptied again.
func TestDiskFullMidBurst(t *testing.T) {
	if dbtest.Postgres(t) {
		t.Skip("a full disk under SQLite: the SQLite pass of make test runs this test")
	}
	if out, err := exec.Command("unshare", "--user", "--map-root-user", "--mount", "true").CombinedOutput(); err != nil {
		t.Skipf("no user and mount namespace for a filesystem of the server's own (unshare: %v %s)", err, out)
	}
	dataDir := t.TempDir()
	// The server sees the tmpfs mounted on dataDir, the test does not.
	// The stored texts are read through the server's API: SQLite, given
	// the file through the server's root (/proc/<pid>/root), resolves
	// that link to the test's own root, where the file is not.
	r := newRig(t, func(cs *children, control string) *child {
		args := append([]string{"--user", "--map-root-user", "--mount",
			"sh", "-c", `mount -t tmpfs -o size=` + tmpfsSize + ` tmpfs "$0" && exec "$@"`, dataDir, cs.plainBin()},
			serveArgs(dataDir, control, "")...)
		return cs.startCommand("server", "unshare", args...)
	}, fromLog)

	r.experiment(t, "disk full", true, func() time.Time {
		// The test fills the tmpfs through the server's root: the
		// wrapper execs wagraph, so the child's pid is the server's.
		filler := filepath.Join(fmt.Sprintf("/proc/%d/root%s", r.srv.cmd.Process.Pid, dataDir), "filler")
		filled, err := fill(filler)
		if err != nil {
			t.Fatalf("fill the server's filesystem: %v", err)
		}
		// The server may free a page now and then (a journal, a WAL
		// reset): each poll fills it again.
		answers := r.srv.pollReadyz(faultFor, func() {
			n, err := fill(filler)
			filled += n
			if err != nil {
				t.Errorf("keep the server's filesystem full: %v", err)
			}
		})
		if err := os.Remove(filler); err != nil {
			t.Fatalf("empty the server's filesystem: %v", err)
		}
		back := time.Now()
		t.Logf("filled the server's filesystem with %d MiB; /readyz while it was full: %s", filled>>20, summarize(answers))
		// A probe that ran just before the disk filled may still be
		// answered for a moment: the first 2 s are spared.
		for _, a := range answers {
			if a.at < 2*time.Second {
				continue
			}
			if a.code != http.StatusServiceUnavailable || !strings.Contains(a.body, "full") {
				t.Errorf("/readyz %.1f s into the full disk: %d %s (%v), want 503 naming the full disk", a.at.Seconds(), a.code, a.body, a.err)
			}
		}
		return back
	})
}

// TestFreezeMidBurst: the server is frozen (SIGSTOP) when half of a
// 2,000-text burst is in, for 20 s, longer than the manager's store
// timeout (15 s, whatsapp/manager.go): everything it had in flight is past
// its deadline when it goes on (SIGCONT). Both backends.
func TestFreezeMidBurst(t *testing.T) {
	loc := dbtest.NewLocation(t)
	r := newRig(t, func(cs *children, control string) *child {
		return cs.startPlain("server", serveArgs(loc.DataDir, control, loc.URL)...)
	}, fromStore(t, loc))

	r.experiment(t, "SIGSTOP", false, func() time.Time {
		pid := r.srv.cmd.Process.Pid // its process group's too
		if err := syscall.Kill(-pid, syscall.SIGSTOP); err != nil {
			t.Fatalf("SIGSTOP the server: %v", err)
		}
		time.Sleep(faultFor)
		if err := syscall.Kill(-pid, syscall.SIGCONT); err != nil {
			t.Fatalf("SIGCONT the server: %v", err)
		}
		return time.Now()
	})
}

// rig is one experiment's processes: the network, the server with a
// linked session and its webhook, the webhook receiver, and the server's
// store read beside it.
type rig struct {
	srv       *server
	rv        *receiver
	sessionID string
	stored    func() (map[string]int, error) // the session's stored texts of the burst, counted
}

// newRig starts the network, then the server with serve (given the
// network's control address), links a session and has reader tell how
// its stored texts are counted.
func newRig(t *testing.T, serve func(cs *children, control string) *child, reader func(*server, string) func() (map[string]int, error)) *rig {
	t.Helper()
	cs := newChildren(t)
	control := cs.startNetwork()

	rv := newReceiver(prefix)
	hook := httptest.NewServer(rv)
	t.Cleanup(hook.Close)

	c := serve(cs, control)
	srv := startServer(t, c)
	srv.ready(t)
	sessionID := linkSession(t, srv, "storage", hook.URL+"/hook")
	return &rig{srv: srv, rv: rv, sessionID: sessionID, stored: reader(srv, sessionID)}
}

// fromStore counts the stored texts in the server's message store at loc,
// read beside the server.
func fromStore(t *testing.T, loc dbtest.Location) func(*server, string) func() (map[string]int, error) {
	return func(_ *server, sessionID string) func() (map[string]int, error) {
		db := openStore(t, loc)
		return func() (map[string]int, error) { return storedTexts(db, sessionID) }
	}
}

// fromLog counts the stored texts in the session's event log, read
// through the server's API (events query): each text's
// inbound-message.upsert, stored after its message.
func fromLog(s *server, sessionID string) func() (map[string]int, error) {
	return func() (map[string]int, error) {
		events, err := readLog(s, sessionID)
		counts := map[string]int{}
		for _, e := range events {
			if m, ok := inbound(e); ok {
				counts[m.Text]++
			}
		}
		return counts, err
	}
}

// experiment sends the burst, calls fault once half of it is in (fault
// returns when the storage is back, with that moment), then checks the
// outcome: every text stored once and delivered, within recoveryGoal of
// the storage's return; the session CONNECTED; the event log whole; the
// store failures counted when failures is set. It logs what it measured.
func (r *rig) experiment(t *testing.T, what string, failures bool, fault func() time.Time) {
	t.Helper()
	before := r.srv.counters(t)
	answered := startBurst(r.srv, r.sessionID)
	atFault := midBurst(t, r.srv, answered, r.rv, r.stored, faultAt)
	if len(atFault) >= burst {
		t.Fatalf("the server had stored all %d texts before the fault: none in the middle (a burst too small for this machine?)", burst)
	}
	start := time.Now()
	t.Logf("%s with %d texts stored, %d delivered", what, len(atFault), r.rv.seen())
	back := fault()
	atBack, err := r.stored()
	t.Logf("storage back %.1f s after the fault began: %d texts stored (%v), %d delivered", back.Sub(start).Seconds(), len(atBack), err, r.rv.seen())

	// Every text stored, once, and delivered.
	counts, storedIn, deliveredIn := r.waitRecovered(t, back)
	if storedIn > 0 {
		t.Logf("all %d texts stored %.1f s after the storage came back (goal: within %s)", burst, storedIn.Seconds(), recoveryGoal)
		if storedIn > recoveryGoal {
			t.Errorf("all texts stored %.1f s after the storage came back, want within %s", storedIn.Seconds(), recoveryGoal)
		}
	} else {
		t.Errorf("%d of the %d texts stored %s after the storage came back, want all within %s; missing: %s",
			len(counts), burst, recoveryWait, recoveryGoal, missing(counts))
	}
	var twice []string
	for text, n := range counts {
		if n != 1 {
			twice = append(twice, fmt.Sprintf("%s×%d", text, n))
		}
	}
	if len(twice) > 0 {
		slices.Sort(twice)
		t.Errorf("%d texts stored more than once, want once each: %v", len(twice), twice[:min(10, len(twice))])
	}
	if deliveredIn > 0 {
		t.Logf("all %d texts delivered %.1f s after the storage came back (goal: within %s)", burst, deliveredIn.Seconds(), recoveryGoal)
		if deliveredIn > recoveryGoal {
			t.Errorf("all texts delivered %.1f s after the storage came back, want within %s", deliveredIn.Seconds(), recoveryGoal)
		}
	} else {
		t.Errorf("%d of the %d texts delivered %s after the storage came back, want all within %s", r.rv.seen(), burst, recoveryWait, recoveryGoal)
	}

	select {
	case a := <-answered:
		if a.err != nil || a.queued != burst {
			t.Errorf("sandboxSendBurst queued %d of %d: %v", a.queued, burst, a.err)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("sandboxSendBurst had not answered %.0f s after the storage came back", time.Since(back).Seconds())
	}
	r.srv.status(t, r.sessionID, "CONNECTED", recoveryGoal)

	events, err := eventLog(t, r.srv, r.sessionID)
	if err != nil {
		t.Errorf("event log: %v", err)
	} else {
		checkLog(t, events, r.sessionID)
	}
	checkDeliveries(t, r.srv, r.rv, events) // logs the duplicates

	after := r.srv.counters(t)
	t.Logf("/metrics: %s %v → %v, %s %v → %v", storeFailures, before[storeFailures], after[storeFailures],
		undecryptable, before[undecryptable], after[undecryptable])
	for _, name := range []string{storeFailures, undecryptable} {
		if _, ok := after[name]; !ok {
			t.Errorf("/metrics has no %s", name)
		}
	}
	if failures && after[storeFailures] <= before[storeFailures] {
		t.Errorf("%s did not move (%v → %v): the failed stores were not counted", storeFailures, before[storeFailures], after[storeFailures])
	}
}

// waitRecovered waits (recoveryWait past back at most) until every text
// of the burst is stored and delivered; it returns the last counts of the
// stored texts and how long after back the last text was stored and
// delivered (0: not within the wait). A failed read of the store is tried
// again: the store may still be coming back.
func (r *rig) waitRecovered(t *testing.T, back time.Time) (counts map[string]int, stored, delivered time.Duration) {
	t.Helper()
	for {
		if stored == 0 {
			if c, err := r.stored(); err == nil {
				counts = c
				if len(c) == burst {
					stored = time.Since(back)
				}
			}
		}
		if delivered == 0 && r.rv.seen() == burst {
			delivered = time.Since(back)
		}
		if (stored > 0 && delivered > 0) || time.Since(back) > recoveryWait {
			return counts, stored, delivered
		}
		if done, how := r.srv.exited(); done {
			t.Fatalf("%s ended (%v) while the texts were awaited; %d stored, %d delivered", r.srv.name, how, len(counts), r.rv.seen())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// missing names the texts of the burst not in counts: how many, and the
// first ten.
func missing(counts map[string]int) string {
	var out []string
	for i := 1; i <= burst; i++ {
		if text := fmt.Sprintf("%s%d", prefix, i); counts[text] == 0 {
			out = append(out, text)
		}
	}
	return fmt.Sprintf("%d, e.g. %v", len(out), out[:min(10, len(out))])
}

// fill writes to path until the filesystem is full (ENOSPC): in MiB,
// then in pages, so not one page is left. It returns how much it wrote.
func fill(path string) (int64, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	var total int64
	for _, size := range []int{len(buf), 4 << 10} {
		for {
			n, err := f.Write(buf[:size])
			total += int64(n)
			if errors.Is(err, syscall.ENOSPC) {
				break
			}
			if err != nil {
				return total, err
			}
		}
	}
	return total, nil
}

// readyzAnswer is one answer of /readyz during a fault.
type readyzAnswer struct {
	at   time.Duration // since the polling began
	code int
	body string
	err  error
}

// pollReadyz asks /readyz every 250 ms for d (calling each first, when
// set) and returns the answers. A request gets 5 s: one that hangs is an
// answer too.
func (s *server) pollReadyz(d time.Duration, each func()) []readyzAnswer {
	client := &http.Client{Timeout: 5 * time.Second}
	var out []readyzAnswer
	for start := time.Now(); time.Since(start) < d; time.Sleep(250 * time.Millisecond) {
		if each != nil {
			each()
		}
		a := readyzAnswer{at: time.Since(start)}
		res, err := client.Get(s.base + "/readyz")
		if err == nil {
			b, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
			res.Body.Close()
			a.code, a.body = res.StatusCode, strings.TrimSpace(string(b))
		}
		a.err = err
		out = append(out, a)
	}
	return out
}

// summarize counts the answers by status and body.
func summarize(answers []readyzAnswer) string {
	counts := map[string]int{}
	var order []string
	for _, a := range answers {
		k := fmt.Sprintf("%d %s", a.code, a.body)
		if a.err != nil {
			k = a.err.Error()
		}
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
	}
	parts := make([]string, len(order))
	for i, k := range order {
		parts[i] = fmt.Sprintf("%d× %s", counts[k], k)
	}
	return strings.Join(parts, "; ")
}

// counters reads the store failure and undecryptable message counters
// off /metrics (an admin's token reads it); one missing is absent from
// the map, for the caller to judge.
func (s *server) counters(t *testing.T) map[string]float64 {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.base+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	res, err := s.http.Do(req)
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
		t.Fatalf("GET /metrics: %d %s", res.StatusCode, b)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if ok && (name == storeFailures || name == undecryptable) {
			v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
			if err != nil {
				t.Fatalf("/metrics: %s: %v", sc.Text(), err)
			}
			out[name] = v
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	return out
}

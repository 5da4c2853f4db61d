package main

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/dbtest"
)

// TestTwoProcessesStartOnAnEmptyDatabase (issue 31, must show 3): two
// `wagraph serve` started at once on an empty PostgreSQL database (copied
// from template0, not from the tests' migrated template) are both ready
// (/readyz 200), ten tries of ten, each on a new empty database. Before
// the setup lock (internal/storage WithSetupLock), one of the two died
// migrating: a table the other had just created.
func TestTwoProcessesStartOnAnEmptyDatabase(t *testing.T) {
	if !dbtest.Postgres(t) {
		t.Skip("several processes share a database on PostgreSQL only; the PostgreSQL pass runs this")
	}
	bin := wagraphBinary(t)
	client := &http.Client{Timeout: 10 * time.Second}
	const tries = 10
	ready := 0
	for try := 1; try <= tries; try++ {
		url := dbtest.CopyDatabase(t, "template0")
		// Both launched before either is waited for: at once.
		var procs [2]*proc
		for i := range procs {
			procs[i] = launchProc(t, bin, t.TempDir(), "serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(),
				"--database-url", url, "--node-id", fmt.Sprintf("node-%d", i+1), "--sandbox",
				"--admin-token", "wgu_clusterStartAdminToken0123456789abcd")
		}
		both := true
		for i, p := range procs {
			if err := p.waitListening(); err != nil {
				both = false
				t.Errorf("try %d: process %d of 2: %v", try, i+1, err)
				continue
			}
			if code := waitStatus(t, client, "http://"+p.addr+"/readyz", http.StatusOK); code != http.StatusOK {
				both = false
				t.Errorf("try %d: process %d of 2: /readyz %d, want 200:\n%s", try, i+1, code, p.stderr.String())
			}
		}
		if both {
			ready++
		}
		for _, p := range procs {
			if p.addr != "" {
				p.stop(t)
			}
		}
	}
	if ready != tries {
		t.Errorf("both ready in %d of %d tries, want every one", ready, tries)
	}
}

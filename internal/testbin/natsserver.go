package testbin

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

// NATSEnv names a nats-server binary built beforehand (make test builds
// bin/nats-server from go.mod's tool directive).
const NATSEnv = "WAGRAPH_TEST_NATS_SERVER"

// natsServer is the nats-server this test binary built, by its first call.
var natsServer struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// NATSServer returns the path of a nats-server with JetStream (go.mod's
// pinned github.com/nats-io/nats-server/v2), for the tests of the event
// stream on NATS, which run it as a child process: $WAGRAPH_TEST_NATS_SERVER
// when set, else one built once per test binary, without the race
// detector (it is the tests' broker, not their subject; its build is large,
// and a test binary linking it would be too). Remove deletes it.
func NATSServer() (string, error) {
	natsServer.once.Do(func() {
		if built := os.Getenv(NATSEnv); built != "" {
			if _, err := os.Stat(built); err != nil {
				natsServer.err = fmt.Errorf("%s=%s: %w", NATSEnv, built, err)
			}
			natsServer.path = built
			return
		}
		dir, err := os.MkdirTemp("", "wagraph-nats-")
		if err != nil {
			natsServer.err = err
			return
		}
		natsServer.dir = dir
		path := filepath.Join(dir, "nats-server")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		// `go test` puts its own go command first on PATH; go.mod's
		// tool directive pins the version.
		if out, err := exec.CommandContext(ctx, "go", "build", "-o", path, "github.com/nats-io/nats-server/v2").CombinedOutput(); err != nil {
			natsServer.err = fmt.Errorf("go build nats-server: %w\n%s", err, out)
			return
		}
		natsServer.path = path
	})
	return natsServer.path, natsServer.err
}

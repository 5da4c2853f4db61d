// Package testbin gives the tests that run wagraph as a process of its own
// (the command's tests, the crash and cluster tests) the wagraph binary:
// the one named by $WAGRAPH_TEST_BINARY when set (make test builds it once
// for every package and both backends' passes), or else one built once per
// test binary, with the race detector when the test has it. Linking
// wagraph is a large part of those tests' cost; each built it again.
//
// NATSServer gives the tests of the event stream a nats-server the same
// way ($WAGRAPH_TEST_NATS_SERVER, or built once from go.mod's tool
// directive), without the race detector.
//
// It is a leaf, like internal/testclient, so that any package's tests can
// use it.
package testbin

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Env names a wagraph binary built beforehand; it must have been built
// with -race exactly when the tests are.
const Env = "WAGRAPH_TEST_BINARY"

// PlainEnv names a wagraph binary built beforehand without the race
// detector (Plain's).
const PlainEnv = "WAGRAPH_TEST_PLAIN_BINARY"

// built is one copy of wagraph this test binary made, by its first call.
type built struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// binary is Wagraph's copy, plain Plain's (under -race; without it Plain
// gives Wagraph's). Remove deletes them.
var binary, plain built

// Wagraph returns the path of a wagraph binary in a directory every user
// may read and run from (a test runs it as another user), making it first
// if this is the test binary's first call.
func Wagraph() (string, error) {
	binary.once.Do(func() { binary.dir, binary.path, binary.err = prepare(Env, race) })
	return binary.path, binary.err
}

// Plain returns a wagraph binary built without the race detector, for
// what a test sets up but does not test: linking 200 sessions before the
// restart a test measures. The detector makes whatsmeow's key generation
// (812 prekeys a device) many times slower; what runs in a fixture is the
// subject of other tests, which run under it.
func Plain() (string, error) {
	if !race {
		return Wagraph()
	}
	plain.once.Do(func() { plain.dir, plain.path, plain.err = prepare(PlainEnv, false) })
	return plain.path, plain.err
}

// Remove deletes the binaries' directories (from a TestMain, after the
// tests).
func Remove() {
	for _, b := range []*built{&binary, &plain} {
		if b.dir != "" {
			os.RemoveAll(b.dir)
		}
	}
	if natsServer.dir != "" {
		os.RemoveAll(natsServer.dir)
	}
}

func prepare(env string, race bool) (dir, path string, err error) {
	dir, err = os.MkdirTemp("", "wagraph-bin-")
	if err != nil {
		return "", "", err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return dir, "", err
	}
	path = filepath.Join(dir, "wagraph")
	if built := os.Getenv(env); built != "" {
		b, err := os.ReadFile(built)
		if err != nil {
			return dir, "", fmt.Errorf("%s=%s: %w", env, built, err)
		}
		return dir, path, os.WriteFile(path, b, 0o755)
	}
	args := []string{"build", "-o", path}
	if race {
		args = append(args, "-race")
	}
	args = append(args, "github.com/wagraph/wagraph/cmd/wagraph")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// `go test` puts its own go command first on PATH.
	if out, err := exec.CommandContext(ctx, "go", args...).CombinedOutput(); err != nil {
		return dir, "", fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return dir, path, nil
}

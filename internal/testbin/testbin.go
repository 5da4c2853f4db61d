// Package testbin gives the tests that run wagraph as a process of its own
// (the command's tests, the crash and cluster tests) the wagraph binary:
// the one named by $WAGRAPH_TEST_BINARY when set (make test builds it once
// for every package and both backends' passes), or else one built once per
// test binary, with the race detector when the test has it. Linking
// wagraph is a large part of those tests' cost; each built it again.
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

// binary is this test binary's copy of wagraph, made by the first Wagraph;
// Remove deletes it.
var binary struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// Wagraph returns the path of a wagraph binary in a directory every user
// may read and run from (a test runs it as another user), making it first
// if this is the test binary's first call.
func Wagraph() (string, error) {
	binary.once.Do(func() { binary.dir, binary.path, binary.err = prepare() })
	return binary.path, binary.err
}

// Remove deletes the binary's directory (from a TestMain, after the tests).
func Remove() {
	if binary.dir != "" {
		os.RemoveAll(binary.dir)
	}
}

func prepare() (dir, path string, err error) {
	dir, err = os.MkdirTemp("", "wagraph-bin-")
	if err != nil {
		return "", "", err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return dir, "", err
	}
	path = filepath.Join(dir, "wagraph")
	if built := os.Getenv(Env); built != "" {
		b, err := os.ReadFile(built)
		if err != nil {
			return dir, "", fmt.Errorf("%s=%s: %w", Env, built, err)
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

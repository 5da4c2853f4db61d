package s3test_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestNotInTheBinary: the fake S3 server is for tests only; wagraph's
// binary carries neither it nor this package.
func TestNotInTheBinary(t *testing.T) {
	goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goCmd); err != nil {
		if goCmd, err = exec.LookPath("go"); err != nil {
			t.Fatalf("no go command to list the packages with: %v", err)
		}
	}
	out, err := exec.Command(goCmd, "list", "-deps", "github.com/wagraph/wagraph/cmd/wagraph").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/johannesboyne/gofakes3") || strings.HasSuffix(dep, "/mediastore/s3test") {
			t.Errorf("cmd/wagraph depends on %s", dep)
		}
	}
	if !strings.Contains(string(out), "github.com/minio/minio-go/v7\n") {
		t.Errorf("cmd/wagraph does not depend on minio-go: the list is not the binary's")
	}
}

package s3test_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNotInTheBinary: the fake S3 server is for tests only; wagraph's
// binary carries neither it nor this package.
func TestNotInTheBinary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/wagraph/wagraph/cmd/wagraph").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/johannesboyne/gofakes3") || strings.HasSuffix(dep, "/mediastore/s3test") {
			t.Errorf("cmd/wagraph depends on %s", dep)
		}
	}
}

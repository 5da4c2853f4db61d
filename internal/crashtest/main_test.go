//go:build unix

package crashtest

import (
	"os"
	"testing"

	"github.com/wagraph/wagraph/internal/testbin"
)

// TestMain removes the wagraph binary the children ran (internal/testbin).
func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Remove()
	os.Exit(code)
}

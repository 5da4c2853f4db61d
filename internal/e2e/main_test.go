package e2e

import (
	"os"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
)

// TestMain removes the linked fixture (apptest.StartLinked) after the tests.
func TestMain(m *testing.M) { os.Exit(apptest.Main(m)) }

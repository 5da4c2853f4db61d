package webui_test

import (
	"os"
	"testing"

	"github.com/wagraph/wagraph/internal/apptest"
)

// TestMain removes the linked-session fixture the inbox test copies
// (apptest.StartLinked) once the tests have run.
func TestMain(m *testing.M) { os.Exit(apptest.Main(m)) }

package apptest

import (
	"math/rand/v2"
	"testing"

	"github.com/wagraph/wagraph/internal/app"
)

// StartSandboxEventBuffer is StartSandbox with room for only n live events
// per subscriber, so a test reaches a stalled subscriber's cut-off soon.
func StartSandboxEventBuffer(t testing.TB, n int) *Server {
	t.Helper()
	return start(t, SandboxConfig(t), app.Options{
		Now:         steppingClock(),
		Rand:        rand.NewChaCha8([32]byte{'w', 'a', 'g', 'r', 'a', 'p', 'h'}),
		EventBuffer: n,
	})
}

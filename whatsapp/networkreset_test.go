package whatsapp

import (
	"testing"

	"go.mau.fi/whatsmeow/types/events"

	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// TestNetworkResetFailure: the manager reads as a reset exactly the failure
// the simulated network sends for a device it has no record of, and no
// other failure (the end-to-end path is internal/e2e's
// TestSandboxResetSaysLinkAgain).
func TestNetworkResetFailure(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		evt  events.ConnectFailure
		want bool
	}{
		{"the network's reset", events.ConnectFailure{Reason: wafake.ResetFailureReason, Message: wafake.ResetFailureMessage}, true},
		{"the same code from WhatsApp", events.ConnectFailure{Reason: events.ConnectFailureNotFound}, false},
		{"another code with the message", events.ConnectFailure{Reason: events.ConnectFailureGeneric, Message: wafake.ResetFailureMessage}, false},
	} {
		if got := isNetworkReset(&tt.evt); got != tt.want {
			t.Errorf("%s: reset %v, want %v", tt.name, got, tt.want)
		}
	}
}

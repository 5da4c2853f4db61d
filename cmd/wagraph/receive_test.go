package main

import (
	"context"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/logtest"
)

// TestReceiveSecret: `wagraph receive` refuses a secret that is not a
// webhook secret (whsec_ and base64 key bytes) before it listens, naming
// where it came from (the flag, or the environment variable) and never
// quoting it: with it every delivery would be refused. A real secret is
// taken (the run goes on to --addr, here one that cannot be listened on).
func TestReceiveSecret(t *testing.T) {
	const good = "whsec_q5h63MKlbndYWXkaKBmOmRHHAfci5iLm6p7+50Rb6yE="
	badAddr := []string{"--addr", "127.0.0.1:99999"}
	// A receiver that took the secret and started would stop at once
	// (exit 0) rather than serve for the rest of the test.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tt := range []struct {
		name   string
		args   []string
		env    map[string]string
		code   int
		want   string // the start of stderr
		reveal string // must not be printed
	}{
		{"not whsec_ by flag", []string{"receive", "--addr", "127.0.0.1:0", "--secret", "nope"}, nil, 2, "wagraph receive: --secret: ", "nope"},
		{"not base64 by flag", []string{"receive", "--addr", "127.0.0.1:0", "--secret", "whsec_n%pe!"}, nil, 2, "wagraph receive: --secret: ", "n%pe!"},
		{"whsec_ alone by flag", []string{"receive", "--addr", "127.0.0.1:0", "--secret", "whsec_"}, nil, 2, "wagraph receive: --secret: ", ""},
		{"not whsec_ by env", []string{"receive", "--addr", "127.0.0.1:0"}, map[string]string{"WAGRAPH_WEBHOOK_SECRET": "nope"}, 2, "wagraph receive: WAGRAPH_WEBHOOK_SECRET: ", "nope"},
		{"a bad env under a good flag", append([]string{"receive", "--secret", good}, badAddr...), map[string]string{"WAGRAPH_WEBHOOK_SECRET": "nope"}, 1, "wagraph receive: --addr 127.0.0.1:99999", ""},
		{"a good secret by env", append([]string{"receive"}, badAddr...), map[string]string{"WAGRAPH_WEBHOOK_SECRET": good}, 1, "wagraph receive: --addr 127.0.0.1:99999", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr logtest.Buffer
			code := run(ctx, tt.args, envOf(tt.env), &stdout, &stderr)
			out := stderr.String()
			if code != tt.code || !strings.HasPrefix(out, tt.want) || strings.Count(out, "\n") != 1 {
				t.Errorf("run(%q) = %d, stderr %q; want %d and one line starting %q", tt.args, code, out, tt.code, tt.want)
			}
			if tt.code == 2 && !strings.Contains(out, "whsec_") {
				t.Errorf("stderr %q does not say what a secret looks like (whsec_…)", out)
			}
			if tt.reveal != "" && strings.Contains(out, tt.reveal) {
				t.Errorf("stderr %q quotes the secret given", out)
			}
			if stdout.String() != "" {
				t.Errorf("stdout %q, want nothing", stdout.String())
			}
		})
	}
}

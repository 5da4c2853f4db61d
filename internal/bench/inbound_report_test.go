package bench

import (
	"strings"
	"testing"
	"time"
)

func TestInboundCasesOf(t *testing.T) {
	tests := []struct {
		in   string
		want []inboundCase
		err  bool
	}{
		{SecretsOff, []inboundCase{{}}, false},
		{SecretsOn, []inboundCase{{Secrets: true}}, false},
		{SecretsBoth, []inboundCase{{}, {Secrets: true}}, false},
		{"", []inboundCase{{}, {Secrets: true}}, false},
		{"yes", nil, true},
	}
	for _, tc := range tests {
		got, err := inboundCasesOf(tc.in)
		if (err != nil) != tc.err || len(got) != len(tc.want) {
			t.Errorf("inboundCasesOf(%q) = %v, %v; want %v (error %v)", tc.in, got, err, tc.want, tc.err)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("inboundCasesOf(%q)[%d] = %v, want %v", tc.in, i, got[i], tc.want[i])
			}
		}
		if tc.err && !strings.Contains(err.Error(), "-inbound-secrets") {
			t.Errorf("inboundCasesOf(%q): %v does not name the flag", tc.in, err)
		}
	}
}

// window of n texts delivered in a 1 s window, none lost.
func deliveredWindow(n int) inboundWindow {
	return inboundWindow{inboundTally: inboundTally{Sent: n, Unique: n, InWindow: n, Window: time.Second, P99: 100 * time.Millisecond}}
}

// TestInboundReportRawRatio: the ratio to raw whatsmeow is taken round by
// round (each round's wagraph window against the same round's raw one),
// its median decides issue 35's goal 2 apart from goal 3's rate, and
// each case has its own verdict.
func TestInboundReportRawRatio(t *testing.T) {
	plain, secret := inboundCase{}, inboundCase{Secrets: true}
	round := func(wPlain, rPlain, wSecret, rSecret int) inboundRound {
		return inboundRound{
			plain:  {sideWagraph: deliveredWindow(wPlain), sideRaw: deliveredWindow(rPlain)},
			secret: {sideWagraph: deliveredWindow(wSecret), sideRaw: deliveredWindow(rSecret)},
		}
	}
	tests := []struct {
		name      string
		rounds    []inboundRound
		wantLines []string
	}{
		{
			// Ratios 0.7, 0.5, 0.65 (plain): median 65%; with secrets
			// 0.5, 0.55, 0.4: median 50%. A median of the two sides'
			// rates apart (2100/3000 = 70%) would say met.
			name: "per round",
			rounds: []inboundRound{
				round(2100, 3000, 1500, 3000),
				round(1500, 3000, 1650, 3000),
				round(2600, 4000, 1200, 3000),
			},
			wantLines: []string{
				"| wagraph delivered / raw received (same round, %) | 65 | 50 | 70 |",
				"| wagraph delivered / raw received (issue 35, goal 2) | ≥ 60% | 65% | met |",
				"| wagraph delivered / raw received (issue 35, goal 2) | ≥ 60% | 50% | NOT met |",
				"Wagraph against raw whatsmeow (issue 35, goal 2): NOT met.",
				"Goal 3: NOT met.",
			},
		},
		{
			name:   "both met",
			rounds: []inboundRound{round(2000, 2000, 2000, 2100), round(2000, 2000, 2000, 2000), round(2000, 2200, 2000, 2000)},
			wantLines: []string{
				"| delivered | ≥ 2000/s | 2000/s | met |",
				"Raw whatsmeow kept up with the offered rate",
				"Wagraph against raw whatsmeow (issue 35, goal 2): met.",
				"Goal 3: met.",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			opts := Options{Rounds: len(tc.rounds), InboundSessions: 100, InboundRate: 2000, InboundBurst: 5}
			writeInboundReport(&b, tc.rounds, []inboundCase{plain, secret}, true, opts)
			out := b.String()
			for _, want := range tc.wantLines {
				if !strings.Contains(out, want) {
					t.Errorf("the report lacks %q:\n%s", want, out)
				}
			}
			for _, c := range []string{"**Texts without message secrets**", "**Texts with message secrets**"} {
				if !strings.Contains(out, c) {
					t.Errorf("the report lacks the section %s", c)
				}
			}
		})
	}
}

// TestInboundReportCutShort: a round that stopped at a window that did
// not drain is told, and no goal is met with it.
func TestInboundReportCutShort(t *testing.T) {
	plain := inboundCase{}
	lost := deliveredWindow(2000)
	lost.Lost = 3
	rounds := []inboundRound{{plain: {sideWagraph: deliveredWindow(2000), sideRaw: deliveredWindow(2000)}}, {plain: {sideWagraph: lost}}}
	var b strings.Builder
	writeInboundReport(&b, rounds, []inboundCase{plain}, true, Options{Rounds: 5, InboundRate: 2000})
	out := b.String()
	for _, want := range []string{"Only 2 of the 5 rounds ran", "Goal 3: NOT met.", "(issue 35, goal 2): NOT met."} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
}

package revocation

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
)

// TestSplit: a notice about more tokens than one notification holds is
// split into parts under PostgreSQL's bound, each naming the session, and
// together naming every token once.
func TestSplit(t *testing.T) {
	tests := []struct {
		name   string
		tokens int
		parts  int
	}{
		{"session only", 0, 1},
		{"one token", 1, 1},
		{"many tokens", 1000, 6}, // 39 bytes each, under 7000 a part
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := Notice{Session: "3f2a8c1e-0000-4000-8000-000000000000"}
			for i := range tt.tokens {
				n.Tokens = append(n.Tokens, fmt.Sprintf("%08d-0000-4000-8000-000000000000", i))
			}
			parts := split(n)
			if len(parts) != tt.parts {
				t.Errorf("%d parts, want %d", len(parts), tt.parts)
			}
			var all []string
			for _, p := range parts {
				b, _ := json.Marshal(p)
				if len(b) >= 8000 {
					t.Errorf("a part of %d bytes: PostgreSQL refuses 8000 and more", len(b))
				}
				if p.Session != n.Session {
					t.Errorf("a part without the session: %+v", p)
				}
				back, err := Decode(string(b))
				if err != nil || !slices.Equal(back.Tokens, p.Tokens) {
					t.Errorf("decode: %v %v", back, err)
				}
				all = append(all, p.Tokens...)
			}
			if !slices.Equal(all, n.Tokens) {
				t.Errorf("the parts name %d tokens, want the %d given in order", len(all), len(n.Tokens))
			}
		})
	}
}

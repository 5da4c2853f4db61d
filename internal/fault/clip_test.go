package fault

import "testing"

func TestClip(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"short", 32, "short"},
		{"exactly", 7, "exactly"},
		{"abcdefgh", 4, "abcd…"},
		{"aé", 2, "a…"}, // é is two bytes: never cut in half
		{"ééé", 3, "é…"},
		{"", 0, ""},
	}
	for _, tt := range tests {
		if got := Clip(tt.s, tt.n); got != tt.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

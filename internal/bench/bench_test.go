package bench

import (
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	tests := []struct {
		name, stat string
		want       time.Duration
		wantErr    bool
	}{
		{name: "plain", stat: "4242 (wagraph) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 12 0 100 0 0",
			want: 3 * time.Second},
		{name: "name with spaces and parentheses", stat: "7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 1 0 0",
			want: 100 * time.Millisecond},
		{name: "no name", stat: "7 a R 1", wantErr: true},
		{name: "too short", stat: "7 (a) R 1 7 7", wantErr: true},
		{name: "not a number", stat: "7 (a) R 1 7 7 0 -1 0 0 0 0 0 x 3 0", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatCPU(tt.stat)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	var hundred []time.Duration
	for i := 1; i <= 100; i++ {
		hundred = append(hundred, time.Duration(i))
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 0.99, 0},
		{"one", []time.Duration{5}, 0.99, 5},
		{"p50 of 100", hundred, 0.50, 50},
		{"p99 of 100", hundred, 0.99, 99},
		{"p99 of 10", hundred[:10], 0.99, 10},
	}
	for _, tt := range tests {
		if got := percentile(tt.sorted, tt.p); got != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestSpreadOf(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		want spread
	}{
		{"odd", []float64{3, 1, 2, 5, 4}, spread{3, 1, 5}},
		{"even", []float64{4, 1, 3, 2}, spread{2.5, 1, 4}},
		{"empty", nil, spread{}},
	}
	for _, tt := range tests {
		if got := spreadOf(tt.xs); got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

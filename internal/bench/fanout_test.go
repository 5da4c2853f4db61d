package bench

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestFanoutText(t *testing.T) {
	sent := time.Unix(1_800_000_000, 123_456_789)
	prefix := fanoutPrefix(41, sent)
	tests := []struct {
		text string
		num  int64
		ok   bool
	}{
		{prefix + "1", 41, true},
		{prefix + "3", 43, true},
		{prefix + "0", 0, false},  // the network numbers from 1
		{prefix + "x", 0, false},  // not a number
		{prefix, 0, false},        // no number
		{"hello", 0, false},       // not the goal's
		{"fo1.2", 0, false},       // too few parts
		{"fo1.2.3.4", 0, false},   // too many
		{"fo0.5.1", 0, false},     // runs number from 1
		{"fo-1.5.1", 0, false},    // negative
		{"xfo1.5.1", 0, false},    // prefix elsewhere
		{prefix + "12", 52, true}, // several digits
	}
	for _, tt := range tests {
		num, at, ok := parseFanoutText(tt.text)
		if ok != tt.ok || num != tt.num {
			t.Errorf("parseFanoutText(%q) = %d, %v; want %d, %v", tt.text, num, ok, tt.num, tt.ok)
		}
		if ok && !at.Equal(sent) {
			t.Errorf("parseFanoutText(%q): sent %v, want %v", tt.text, at, sent)
		}
	}
}

// TestTally: a subscriber's bookkeeping from its first text on: in order
// is clean; a skipped number is a gap of that many; a repeat, a number
// going back or a seq not rising is disorder; a cut keeps its first
// reason; caught up means the number was received or the stream is cut.
func TestTally(t *testing.T) {
	type obs struct{ num, seq int64 }
	tests := []struct {
		name     string
		obs      []obs
		received int64
		gaps     int64
		disorder int64
		last     int64
	}{
		{"none", nil, 0, 0, 0, 0},
		{"baseline anywhere", []obs{{17, 100}}, 1, 0, 0, 17},
		{"in order", []obs{{5, 10}, {6, 12}, {7, 13}}, 3, 0, 0, 7},
		{"a gap of two", []obs{{5, 10}, {8, 11}, {9, 12}}, 3, 2, 0, 9},
		{"repeat", []obs{{5, 10}, {6, 11}, {6, 11}, {7, 12}}, 4, 0, 1, 7},
		{"back in time", []obs{{5, 10}, {7, 12}, {6, 11}}, 3, 1, 1, 7},
		{"seq not rising", []obs{{5, 10}, {6, 10}}, 2, 0, 1, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tl tally
			for _, o := range tt.obs {
				tl.observe(o.num, o.seq)
			}
			if tl.received != tt.received || tl.gaps != tt.gaps || tl.disorder != tt.disorder || tl.last != tt.last {
				t.Fatalf("received %d gaps %d disorder %d last %d; want %d %d %d %d",
					tl.received, tl.gaps, tl.disorder, tl.last, tt.received, tt.gaps, tt.disorder, tt.last)
			}
		})
	}

	var tl tally
	if tl.caughtUp(1) {
		t.Error("caught up before any text")
	}
	tl.observe(3, 1)
	if !tl.caughtUp(3) || tl.caughtUp(4) {
		t.Error("caughtUp: want up to 3 only")
	}
	tl.cutOff("RATE_LIMITED: fell behind")
	tl.cutOff("closed: EOF")
	if tl.cut != "RATE_LIMITED: fell behind" {
		t.Errorf("cut %q, want the first reason", tl.cut)
	}
	if !tl.caughtUp(1000) {
		t.Error("a cut subscriber can wait for nothing more")
	}
}

// TestWsMessageEnd: which graphql-transport-ws messages end a stream, and
// how the goal names it.
func TestWsMessageEnd(t *testing.T) {
	tests := []struct {
		msg  string
		want string // "" continues; otherwise a prefix of the reason
	}{
		{`{"type":"next","id":"1","payload":{"data":{"events":{"seq":4,"data":{"text":"x"}}}}}`, ""},
		{`{"type":"next","id":"1","payload":{"data":null,"errors":[{"message":"subscriber fell behind","extensions":{"code":"RATE_LIMITED"}}]}}`, "RATE_LIMITED: subscriber fell behind"},
		{`{"type":"next","id":"1","payload":{"errors":[{"message":"boom"}]}}`, "error: boom"},
		{`{"type":"complete","id":"1"}`, "complete"},
		{`{"type":"ping"}`, ""},
		{`{"type":"connection_ack"}`, ""},
	}
	for _, tt := range tests {
		var m wsMessage
		if err := json.Unmarshal([]byte(tt.msg), &m); err != nil {
			t.Fatalf("%s: %v", tt.msg, err)
		}
		got := m.endReason()
		if (tt.want == "") != (got == "") || !strings.HasPrefix(got, tt.want) {
			t.Errorf("endReason(%s) = %q, want %q", tt.msg, got, tt.want)
		}
	}
}

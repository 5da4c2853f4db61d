package bench

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The texts the fan-out goal sends carry what each subscriber needs to
// check them on its own: a number counting every text of the run from 1
// (a gap or a repeat shows as a jump in it) and when the load program asked
// the network to send it (the latency's start). The network numbers a
// burst's texts from 1 after the prefix, so the prefix names the burst's
// first number and its send time: "fo<first>.<unix nanos>." + i.
const fanoutTextPrefix = "fo"

// fanoutPrefix is the prefix of a burst whose first text is number first,
// sent at sent.
func fanoutPrefix(first int64, sent time.Time) string {
	return fanoutTextPrefix + strconv.FormatInt(first, 10) + "." + strconv.FormatInt(sent.UnixNano(), 10) + "."
}

// parseFanoutText reads back the number and send time of a text of the
// fan-out goal; ok is false for any other text.
func parseFanoutText(text string) (num int64, sent time.Time, ok bool) {
	rest, found := strings.CutPrefix(text, fanoutTextPrefix)
	if !found {
		return 0, time.Time{}, false
	}
	parts := strings.Split(rest, ".")
	if len(parts) != 3 {
		return 0, time.Time{}, false
	}
	var v [3]int64
	for i, p := range parts {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n < 0 {
			return 0, time.Time{}, false
		}
		v[i] = n
	}
	if v[0] < 1 || v[2] < 1 {
		return 0, time.Time{}, false
	}
	return v[0] + v[2] - 1, time.Unix(0, v[1]), true
}

// tally is one subscriber's bookkeeping: what it received, whether in
// order and without a gap, and whether its stream was cut off. The first
// text it receives is its baseline (a subscription starts live: it cannot
// see what was sent before it was registered); from there every text of
// the run must follow in order, each once, with a rising seq.
type tally struct {
	started  bool
	last     int64 // the number of the last text received
	lastSeq  int64
	received int64 // texts received, baseline included
	gaps     int64 // texts skipped (never received after a later one)
	disorder int64 // texts whose number or seq was not above the last one's
	cut      string
}

// observe records a text's number and its event's seq.
func (t *tally) observe(num, seq int64) {
	t.received++
	if !t.started {
		t.started, t.last, t.lastSeq = true, num, seq
		return
	}
	switch {
	case num <= t.last || seq <= t.lastSeq:
		t.disorder++
	case num > t.last+1:
		t.gaps += num - t.last - 1
	}
	if num > t.last {
		t.last = num
	}
	if seq > t.lastSeq {
		t.lastSeq = seq
	}
}

// cutOff records that the stream ended while the goal wanted it open: an
// error (RATE_LIMITED when it fell behind), a complete, a closed socket.
// The first reason is kept.
func (t *tally) cutOff(reason string) {
	if t.cut == "" {
		t.cut = reason
	}
}

// caughtUp reports whether the subscriber has received text num, or no
// longer can (cut off).
func (t *tally) caughtUp(num int64) bool {
	return t.cut != "" || (t.started && t.last >= num)
}

// wsMessage is a graphql-transport-ws message as the subscribers read it:
// only the fields the goal checks are decoded.
type wsMessage struct {
	Type    string `json:"type"`
	Payload struct {
		Data *struct {
			Events *struct {
				Seq  int64 `json:"seq"`
				Data struct {
					Text string `json:"text"`
				} `json:"data"`
			} `json:"events"`
		} `json:"data"`
		Errors []struct {
			Message    string `json:"message"`
			Extensions struct {
				Code string `json:"code"`
			} `json:"extensions"`
		} `json:"errors"`
		// An "error" message's payload is the list of errors itself; it is
		// reported by its type.
	} `json:"payload"`
}

// endReason is why a message ends the stream ("" when it does not): an
// error result (its code), "error" or "complete".
func (m *wsMessage) endReason() string {
	switch m.Type {
	case "next":
		if len(m.Payload.Errors) > 0 {
			e := m.Payload.Errors[0]
			code := e.Extensions.Code
			if code == "" {
				code = "error"
			}
			return fmt.Sprintf("%s: %.200s", code, e.Message)
		}
	case "error", "complete":
		return m.Type
	}
	return ""
}

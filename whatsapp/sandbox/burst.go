package sandbox

import (
	"context"
	"unicode/utf8"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// A burst of texts from a simulated contact (sandboxSendBurst), for load
// and crash tests.

const pathSendBurst = "/v1/send-burst"

type (
	burstReq struct {
		From   string `json:"from"`
		To     string `json:"to"`
		Count  int    `json:"count"`
		Prefix string `json:"prefix"`
	}
	burstResp struct {
		Queued int `json:"queued"`
	}
)

// checkBurst accepts a burst size of 1 to wafake.MaxBurst, and a prefix
// that leaves room for the number within WhatsApp's text limit.
func checkBurst(count int, prefix string) error {
	if count < 1 || count > wafake.MaxBurst {
		return fault.InvalidField("count", "count must be from 1 to %d (got %d)", wafake.MaxBurst, count)
	}
	if n := utf8.RuneCountInString(prefix); n > maxTextRunes-len("10000") {
		return fault.InvalidField("prefix", "prefix has %d characters; with the number a text must stay within WhatsApp's %d", n, maxTextRunes)
	}
	return nil
}

// SendBurst has the simulated phone of from send count texts, prefix+"1" to
// prefix+count, to to, a user JID, as fast as the network can; every linked
// device of that account gets them in order, an offline one at its next
// login. It returns how many were queued. The burst is not tied to ctx once
// started: a caller that goes away (a server killed mid-call in a crash
// test) does not cut it short.
func (l *Local) SendBurst(ctx context.Context, from, to string, count int, prefix string) (int, error) {
	if err := checkAccount("from", from); err != nil {
		return 0, err
	}
	dest, err := parseUser("to", to)
	if err != nil {
		return 0, err
	}
	if err := checkBurst(count, prefix); err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	ids, err := l.net.SendBurst(from, dest.User, prefix, count)
	if err != nil {
		l.log.Warn("sandbox: burst cut short", "queued", len(ids), "count", count, "err", err)
	}
	return len(ids), refusal(err, dest.User)
}

// SendBurst is Local.SendBurst on the remote network.
func (r *Remote) SendBurst(ctx context.Context, from, to string, count int, prefix string) (int, error) {
	if err := checkSend(from, to); err != nil {
		return 0, err
	}
	if err := checkBurst(count, prefix); err != nil {
		return 0, err
	}
	var out burstResp
	err := r.call(ctx, pathSendBurst, burstReq{From: from, To: to, Count: count, Prefix: prefix}, &out)
	return out.Queued, err
}

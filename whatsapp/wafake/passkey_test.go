package wafake_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	waLog "go.mau.fi/whatsmeow/util/log"

	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// passkeyClient is a pairing client whose events the test reads, with the
// passkey step's too.
func passkeyClient(t *testing.T, n *wafake.Network) (*whatsmeow.Client, chan any) {
	t.Helper()
	cli := whatsmeow.NewClient(newDevice(t), waLog.Noop)
	n.Point(cli)
	ch := make(chan any, 64)
	cli.AddEventHandler(func(evt any) {
		switch evt.(type) {
		case *events.QR, *events.PairPasskeyRequest, *events.PairPasskeyConfirmation, *events.PairPasskeyError,
			*events.PairSuccess, *events.PairError, *events.Connected:
			ch <- evt
		}
	})
	if err := cli.Connect(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cli.Disconnect)
	return cli, ch
}

func next[T any](t *testing.T, ch chan any) T {
	t.Helper()
	timeout := time.After(15 * time.Second)
	for {
		select {
		case evt := <-ch:
			if e, ok := evt.(T); ok {
				return e
			}
			if _, ok := evt.(*events.PairPasskeyError); ok {
				t.Fatalf("passkey error: %+v", evt)
			}
		case <-timeout:
			var zero T
			t.Fatalf("no %T within 15 s", zero)
			return zero
		}
	}
}

// answer is the account's authenticator answering the client's request.
func answer(t *testing.T, n *wafake.Network, phone string, req *events.PairPasskeyRequest) *types.WebAuthnResponse {
	t.Helper()
	opts, err := json.Marshal(req.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := n.PasskeyAssertion(phone, opts)
	if err != nil {
		t.Fatal(err)
	}
	var resp types.WebAuthnResponse
	if err := json.Unmarshal(raw, &resp); err != nil {
		t.Fatal(err)
	}
	return &resp
}

// TestPasskeyLinking: an account that requires a passkey links by QR code
// and by phone code only through the passkey step, with the same
// confirmation code on both sides; a tampered assertion is refused with
// its reason and the client gets fresh QR codes.
func TestPasskeyLinking(t *testing.T) {
	t.Parallel()
	for _, byCode := range []bool{false, true} {
		name := map[bool]string{false: "qr", true: "code"}[byCode]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			n := startNetwork(t)
			const phone = "491701234567"
			if err := n.RequirePasskey(phone); err != nil {
				t.Fatal(err)
			}
			cli, ch := passkeyClient(t, n)
			ctx := context.Background()
			qr := next[*events.QR](t, ch)
			if byCode {
				code, err := cli.PairPhone(ctx, phone, true, whatsmeow.PairClientChrome, "Chrome (Linux)")
				if err != nil {
					t.Fatal(err)
				}
				if err := n.EnterPairingCode(phone, code); err != nil {
					t.Fatal(err)
				}
			} else if err := n.ScanQR(qr.Codes[0], phone); err != nil {
				t.Fatal(err)
			}
			req := next[*events.PairPasskeyRequest](t, ch)
			if req.PublicKey.RelyingPartID != wafake.PasskeyRPID || len(req.PublicKey.Challenge) != 32 ||
				len(req.PublicKey.AllowCredentials) != 1 || req.PublicKey.Timeout <= 0 {
				t.Fatalf("request options %+v", req.PublicKey)
			}
			if d := n.LinkedDevices(phone); len(d) != 0 {
				t.Fatalf("linked before the passkey: %v", d)
			}

			// Tampered: one bit of the signature.
			bad := answer(t, n, phone, req)
			bad.Response.Signature[len(bad.Response.Signature)-1] ^= 1
			err := cli.SendPasskeyResponse(ctx, bad)
			var iqErr *whatsmeow.IQError
			if !errors.As(err, &iqErr) || iqErr.Code != 401 || iqErr.Text != "passkey-signature-invalid" {
				t.Fatalf("tampered assertion: %v", err)
			}
			fresh := next[*events.QR](t, ch)
			if fresh.Codes[0] == qr.Codes[0] {
				t.Error("no fresh QR codes after the refusal")
			}
			if byCode {
				code, err := cli.PairPhone(ctx, phone, true, whatsmeow.PairClientChrome, "Chrome (Linux)")
				if err != nil {
					t.Fatal(err)
				}
				if err := n.EnterPairingCode(phone, code); err != nil {
					t.Fatal(err)
				}
			} else if err := n.ScanQR(fresh.Codes[0], phone); err != nil {
				t.Fatal(err)
			}
			req = next[*events.PairPasskeyRequest](t, ch)
			if err := cli.SendPasskeyResponse(ctx, answer(t, n, phone, req)); err != nil {
				t.Fatal(err)
			}
			conf := next[*events.PairPasskeyConfirmation](t, ch)
			if shown := n.PasskeyCode(phone); conf.Code == "" || conf.Code != shown {
				t.Fatalf("client's code %q, phone's %q", conf.Code, shown)
			}
			if err := cli.SendPasskeyConfirmation(ctx); err != nil {
				t.Fatal(err)
			}
			ps := next[*events.PairSuccess](t, ch)
			next[*events.Connected](t, ch)
			if d := n.LinkedDevices(phone); len(d) != 1 || d[0] != ps.ID {
				t.Errorf("linked %v, paired as %s", d, ps.ID)
			}
			settle(t, n, ps.ID)
		})
	}
}

// TestPasskeyLate: an assertion that comes after the challenge expired is
// refused as late, with fresh QR codes; a client that never answers gets
// fresh QR codes a while after the expiry.
func TestPasskeyLate(t *testing.T) {
	t.Parallel()
	n, err := wafake.New(wafake.Options{PasskeyTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	const phone = "491701234567"
	if err := n.RequirePasskey(phone); err != nil {
		t.Fatal(err)
	}
	cli, ch := passkeyClient(t, n)
	qr := next[*events.QR](t, ch)
	if err := n.ScanQR(qr.Codes[0], phone); err != nil {
		t.Fatal(err)
	}
	req := next[*events.PairPasskeyRequest](t, ch)
	resp := answer(t, n, phone, req)
	time.Sleep(250 * time.Millisecond)
	err = cli.SendPasskeyResponse(context.Background(), resp)
	var iqErr *whatsmeow.IQError
	if !errors.As(err, &iqErr) || iqErr.Code != 401 || iqErr.Text != "passkey-challenge-expired" {
		t.Fatalf("late assertion: %v", err)
	}
	qr = next[*events.QR](t, ch)

	// Nobody answers: fresh codes come by themselves.
	if err := n.ScanQR(qr.Codes[0], phone); err != nil {
		t.Fatal(err)
	}
	next[*events.PairPasskeyRequest](t, ch)
	start := time.Now()
	fresh := next[*events.QR](t, ch)
	if waited := time.Since(start); waited < 200*time.Millisecond || fresh.Codes[0] == qr.Codes[0] {
		t.Errorf("fresh codes after %s: %v", waited, fresh.Codes[0] != qr.Codes[0])
	}
}

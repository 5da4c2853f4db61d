package whatsapp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types/events"
	waLog "go.mau.fi/whatsmeow/util/log"

	"github.com/wagraph/wagraph/internal/logtest"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// wafakeRef matches a QR ref as wafake makes them ("2@" and 18 random
// bytes of base64): whatsmeow receives six in its pair-device node.
var wafakeRef = regexp.MustCompile(`2@[A-Za-z0-9+/]{24}`)

// pairingTagsInLog are how the nodes that carry pairing secrets print.
var pairingTagsInLog = []string{"<ref", "<pair-device", "<pair-success", "<device-identity", "<pair-device-sign", "<link_code"}

// rawWALog is whatsmeow's log handed to slog without any filter, as
// waLogger did before it withheld pairing records.
type rawWALog struct {
	log    *slog.Logger
	module string
}

func (r rawWALog) Errorf(msg string, args ...any) { r.logf(slog.LevelError, msg, args) }
func (r rawWALog) Warnf(msg string, args ...any)  { r.logf(slog.LevelWarn, msg, args) }
func (r rawWALog) Infof(msg string, args ...any)  { r.logf(slog.LevelInfo, msg, args) }
func (r rawWALog) Debugf(msg string, args ...any) { r.logf(slog.LevelDebug, msg, args) }
func (r rawWALog) Sub(module string) waLog.Logger {
	return rawWALog{log: r.log, module: r.module + "/" + module}
}
func (r rawWALog) logf(level slog.Level, msg string, args []any) {
	r.log.Log(context.Background(), level, fmt.Sprintf(msg, args...), "module", r.module)
}

// pairDirect links a new whatsmeow client logging through wl to phone by
// QR on e's network, waits until it is connected and quiet, disconnects it
// and returns the QR code it showed.
func pairDirect(t *testing.T, e *env, wl waLog.Logger, phone string) string {
	t.Helper()
	cli := whatsmeow.NewClient(e.store.NewDevice(), wl)
	e.net.Point(cli)
	paired, connected := make(chan *events.PairSuccess, 1), make(chan struct{}, 1)
	cli.AddEventHandler(func(evt any) {
		switch ev := evt.(type) {
		case *events.PairSuccess:
			select {
			case paired <- ev:
			default:
			}
		case *events.Connected:
			select {
			case connected <- struct{}{}:
			default:
			}
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	qr, err := cli.GetQRChannel(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := cli.Connect(); err != nil {
		t.Fatal(err)
	}
	defer cli.Disconnect()
	var item whatsmeow.QRChannelItem
	select {
	case item = <-qr:
	case <-ctx.Done():
		t.Fatal("no QR code within 60 s")
	}
	if item.Event != whatsmeow.QRChannelEventCode {
		t.Fatalf("QR channel event %q, want a code", item.Event)
	}
	if err := e.net.ScanQR(item.Code, phone); err != nil {
		t.Fatal(err)
	}
	var ps *events.PairSuccess
	select {
	case ps = <-paired:
	case <-ctx.Done():
		t.Fatal("no PairSuccess within 60 s")
	}
	select {
	case <-connected:
	case <-ctx.Done():
		t.Fatal("not connected within 60 s of pairing")
	}
	// Acks still in flight at Disconnect race inside whatsmeow.
	e.waitUntil("the device is quiet", func() bool { return e.net.Unacked(ps.ID) == 0 && e.net.Idle(ps.ID) > 200*time.Millisecond })
	return item.Code
}

// TestWhatsmeowLogWithholdsPairingSecrets: a real QR pairing against
// wafake, with whatsmeow logging at debug level, leaves neither the QR code,
// nor any of the refs the network offered, nor the ADV secret, nor a
// pairing node in the log; the same pairing through an unfiltered adapter
// (waLogger before this change) logs them, so the test sees them when they
// are there. A phone-code pairing through the Manager leaves neither the
// code nor its link_code nodes.
func TestWhatsmeowLogWithholdsPairingSecrets(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		logger   func(*slog.Logger) waLog.Logger // nil: through the Manager
		wantLeak bool
	}{
		{"session logger", func(l *slog.Logger) waLog.Logger { return newWALogger(l, "whatsmeow") }, false},
		{"unfiltered adapter", func(l *slog.Logger) waLog.Logger { return rawWALog{log: l, module: "whatsmeow"} }, true},
		{"manager", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			log, logs := logtest.New(slog.LevelDebug)
			var code string
			if tt.logger != nil {
				code = pairDirect(t, e, tt.logger(log), phone)
			} else {
				e.log = log
				st := e.pairQR(e.manager(), "s1", phone)
				for _, ev := range e.pub.events("s1") {
					if qr, ok := ev.Data["qr"].(string); ok && qr != "" && code == "" {
						code = qr
					}
				}
				if st.JID == "" || code == "" {
					t.Fatalf("state %+v, QR %q", st, code)
				}
			}
			qr, err := wafake.ParseQR(code)
			if err != nil {
				t.Fatal(err)
			}
			got := logs.String()
			if !strings.Contains(got, "level\":\"DEBUG") {
				t.Fatal("no debug record was logged: the test would see no secret")
			}
			secrets := map[string]string{
				"the QR code":       strings.TrimPrefix(code, wafake.QRLinkPrefix),
				"the QR ref":        qr.Ref,
				"the ADV secret":    base64.StdEncoding.EncodeToString(qr.AdvSecret),
				"any offered <ref>": wafakeRef.FindString(got),
			}
			if !tt.wantLeak {
				for what, s := range secrets {
					if s != "" && strings.Contains(got, s) {
						t.Errorf("the log holds %s %q", what, s)
					}
				}
				for _, tag := range pairingTagsInLog {
					if strings.Contains(got, tag) {
						t.Errorf("the log holds a %s> node", tag)
					}
				}
				if len(logs.Lines("withheld")) == 0 {
					t.Error("no record says a pairing record was withheld")
				}
				return
			}
			for what, s := range secrets {
				if s == "" || !strings.Contains(got, s) {
					t.Errorf("the unfiltered log lacks %s %q", what, s)
				}
			}
			if n := len(wafakeRef.FindAllString(got, -1)); n < 6 {
				t.Errorf("the unfiltered log holds %d refs, want the 6 offered at least", n)
			}
			if !strings.Contains(got, "<ref") {
				t.Error("the unfiltered log holds no <ref> node")
			}
		})
	}
}

// TestWhatsmeowLogWithholdsPairingCode: pairing by phone code through the
// Manager, the debug log holds neither the code nor the link_code nodes
// that carry its wrapped keys and ref.
func TestWhatsmeowLogWithholdsPairingCode(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	log, logs := logtest.New(slog.LevelDebug)
	e.log = log
	m := e.manager()
	e.statuses.add("s1")
	code, err := m.PairPhone(ctx, "s1", "+"+phone)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.net.EnterPairingCode(phone, code); err != nil {
		t.Fatal(err)
	}
	e.settle(e.waitStatus(m, "s1", StatusConnected))
	got := logs.String()
	for _, s := range []string{code, strings.ReplaceAll(code, "-", ""), "<link_code", "<pair-success", "<device-identity"} {
		if strings.Contains(got, s) {
			t.Errorf("the log holds %q", s)
		}
	}
	if len(logs.Lines("withheld", "link_code")) == 0 {
		t.Error("no record says the link_code node was withheld")
	}
}

// TestWhatsmeowLogPasskeyByCode: pairing by phone code with a passkey, the
// primary_hello without a wrapped key (whatsmeow #1233) is logged as the
// hand-off to the passkey it is, not as an error; the passkey step's
// challenge, assertion, nonces and encrypted keys are withheld.
func TestWhatsmeowLogPasskeyByCode(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	log, logs := logtest.New(slog.LevelDebug)
	e.log = log
	m := e.manager()
	if err := e.net.RequirePasskey(phone); err != nil {
		t.Fatal(err)
	}
	e.statuses.add("s1")
	code, err := m.PairPhone(ctx, "s1", phone)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.net.EnterPairingCode(phone, code); err != nil {
		t.Fatal(err)
	}
	st := e.waitState(m, "s1", "the passkey step", func(st SessionState) bool { return st.Passkey.Status == PasskeyAwaitingAssertion })
	var opts struct{ Challenge string }
	if err := json.Unmarshal([]byte(st.Passkey.PublicKey), &opts); err != nil || opts.Challenge == "" {
		t.Fatalf("options %s: %v", st.Passkey.PublicKey, err)
	}
	assertion, err := e.net.PasskeyAssertion(phone, []byte(st.Passkey.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.SubmitPasskeyAssertion(ctx, "s1", assertion); err != nil {
		t.Fatal(err)
	}
	if _, err := m.ConfirmPasskey(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	e.settle(e.waitStatus(m, "s1", StatusConnected))
	if errs := logs.Lines(`"level":"ERROR"`); len(errs) != 0 {
		t.Errorf("errors logged: %q", errs)
	}
	if len(logs.Lines(`"level":"INFO"`, "hands over to the account's passkey")) != 1 {
		t.Error("no record of the hand-off to the passkey")
	}
	got := logs.String()
	for _, s := range []string{opts.Challenge, "<passkey_prologue", "<companion_nonce", "<encrypted_pairing_request", "<primary_ephemeral_identity", "<passkey_request_options"} {
		if strings.Contains(got, s) {
			t.Errorf("the log holds %q", s)
		}
	}
}

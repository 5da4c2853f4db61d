package e2e

import (
	"bytes"
	"encoding/base64"
	"image/png"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/apptest"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

func restCreateSession(t *testing.T, s *apptest.Server) string {
	t.Helper()
	res := s.REST(t, "POST", "/session", apptest.AdminToken, `{}`)
	if res.Status != http.StatusCreated {
		t.Fatalf("create session: %d %s", res.Status, res.Body)
	}
	var env struct{ Data struct{ ID string } }
	res.JSON(t, &env)
	return env.Data.ID
}

// TestPairByQRThroughREST: connect, read the QR code from GET /qr (JSON
// and PNG), the simulated phone scans it, the session is CONNECTED.
func TestPairByQRThroughREST(t *testing.T) {
	t.Parallel()
	s := apptest.StartSandbox(t)
	const phone = "4915550005001"
	id := restCreateSession(t, s)

	if res := s.REST(t, "GET", "/session/"+id+"/qr", apptest.AdminToken, ""); res.Status != http.StatusConflict || !strings.Contains(res.Message(t), "not pairing") {
		t.Errorf("QR before connect: %d %s", res.Status, res.Body)
	}
	if res := s.REST(t, "POST", "/session/"+id+"/connect", apptest.AdminToken, ""); res.Status != http.StatusOK {
		t.Fatalf("connect: %d %s", res.Status, res.Body)
	}
	var qr struct{ Code, Image string }
	deadline := time.Now().Add(15 * time.Second)
	for {
		res := s.REST(t, "GET", "/session/"+id+"/qr", apptest.AdminToken, "")
		if res.Status == http.StatusOK {
			var env struct{ Data struct{ Code, Image string } }
			res.JSON(t, &env)
			qr = env.Data
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no QR code: %d %s", res.Status, res.Body)
		}
		sleep()
	}
	if !strings.HasPrefix(qr.Code, wafake.QRLinkPrefix+"2@") || !strings.HasPrefix(qr.Image, "data:image/png;base64,") {
		t.Fatalf("QR answer: code %.20q image %.40q", qr.Code, qr.Image)
	}
	res := s.Do(t, "GET", "/api/v1/session/"+id+"/qr", apptest.AdminToken, "", map[string]string{"Accept": "image/png"})
	if res.Status != http.StatusOK || res.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("QR as PNG: %d %s", res.Status, res.Header.Get("Content-Type"))
	}
	if _, err := png.Decode(bytes.NewReader(res.Body)); err != nil {
		t.Fatalf("QR PNG does not decode: %v", err)
	}
	fromURL, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(qr.Image, "data:image/png;base64,"))
	if !bytes.Equal(fromURL, res.Body) {
		t.Error("the PNG and the data URL differ")
	}

	if err := s.Network(t).ScanQR(qr.Code, phone); err != nil {
		t.Fatalf("the phone scans the code: %v", err)
	}
	st := s.WaitStatus(t, id, "CONNECTED", nil)
	s.Track(apptest.Session{ID: id, Phone: phone, JID: st["jid"].(string)})
	res = s.REST(t, "GET", "/session/"+id, apptest.AdminToken, "")
	var env struct{ Data struct{ Status, Jid string } }
	res.JSON(t, &env)
	if env.Data.Status != "CONNECTED" || !strings.HasPrefix(env.Data.Jid, phone+":") {
		t.Errorf("GET session: %s", res.Body)
	}
	if res := s.REST(t, "GET", "/session/"+id+"/qr", apptest.AdminToken, ""); res.Status != http.StatusConflict {
		t.Errorf("QR of a linked session: %d %s", res.Status, res.Body)
	}
}

// TestPairByQRThroughSubscription: the sessionStatus subscription shows
// the QR code; the phone scans it; the subscription shows CONNECTED.
func TestPairByQRThroughSubscription(t *testing.T) {
	t.Parallel()
	s := apptest.StartSandbox(t)
	const phone = "4915550005002"
	var created struct {
		CreateSession struct{ Session struct{ ID string } }
	}
	s.MustGraphQL(t, apptest.AdminToken, `mutation { createSession { session { id } } }`, nil, &created)
	id := created.CreateSession.Session.ID

	sub := s.Subscribe(t, apptest.AdminToken, `subscription($id: ID!) { sessionStatus(sessionId: $id) { status qrCode qrImage jid } }`, map[string]any{"id": id})
	type state struct {
		SessionStatus struct {
			Status               string
			QRCode, QRImage, Jid *string
		}
	}
	var st state
	sub.Next(&st)
	if st.SessionStatus.Status != "DISCONNECTED" {
		t.Fatalf("first state %+v, want the current DISCONNECTED", st.SessionStatus)
	}
	s.MustGraphQL(t, apptest.AdminToken, `mutation($id: ID!) { connectSession(id: $id) { status } }`, map[string]any{"id": id}, nil)
	for st.SessionStatus.QRCode == nil {
		sub.Next(&st)
	}
	if st.SessionStatus.Status != "PAIRING" || st.SessionStatus.QRImage == nil {
		t.Fatalf("pairing state %+v", st.SessionStatus)
	}
	if err := s.Network(t).ScanQR(*st.SessionStatus.QRCode, phone); err != nil {
		t.Fatalf("the phone scans the code: %v", err)
	}
	for st.SessionStatus.Status != "CONNECTED" {
		sub.Next(&st)
	}
	if st.SessionStatus.Jid == nil || !strings.HasPrefix(*st.SessionStatus.Jid, phone+":") {
		t.Errorf("connected state %+v", st.SessionStatus)
	}
	sub.Close()
	s.Track(apptest.Session{ID: id, Phone: phone, JID: *st.SessionStatus.Jid})
}

// TestPairByPhoneCode: REST pair-phone gives a code the phone enters
// (sandboxEnterPairingCode); GraphQL pairPhone likewise.
func TestPairByPhoneCode(t *testing.T) {
	t.Parallel()
	s := apptest.StartSandbox(t)
	for _, api := range []string{"REST", "GraphQL"} {
		t.Run(api, func(t *testing.T) {
			phone := map[string]string{"REST": "4915550005003", "GraphQL": "4915550005004"}[api]
			id := restCreateSession(t, s)
			var code string
			if api == "REST" {
				res := s.REST(t, "POST", "/session/"+id+"/pair-phone", apptest.AdminToken, `{"number":"`+phone+`"}`)
				if res.Status != http.StatusOK {
					t.Fatalf("pair-phone: %d %s", res.Status, res.Body)
				}
				var env struct{ Data struct{ Code string } }
				res.JSON(t, &env)
				code = env.Data.Code
			} else {
				var out struct{ PairPhone string }
				s.MustGraphQL(t, apptest.AdminToken, `mutation($id: ID!, $n: String!) { pairPhone(sessionId: $id, number: $n) }`, map[string]any{"id": id, "n": phone}, &out)
				code = out.PairPhone
			}
			if len(code) != 9 || code[4] != '-' {
				t.Fatalf("pairing code %q, want ABCD-EFGH", code)
			}
			var out struct{ SandboxEnterPairingCode struct{ Status, Jid string } }
			s.MustGraphQL(t, apptest.AdminToken, `mutation($id: ID!, $p: String!, $c: String!) { sandboxEnterPairingCode(sessionId: $id, phone: $p, code: $c) { status jid } }`,
				map[string]any{"id": id, "p": phone, "c": code}, &out)
			if out.SandboxEnterPairingCode.Status != "CONNECTED" || !strings.HasPrefix(out.SandboxEnterPairingCode.Jid, phone+":") {
				t.Fatalf("after entering the code: %+v", out)
			}
			s.Track(apptest.Session{ID: id, Phone: phone, JID: out.SandboxEnterPairingCode.Jid})
		})
	}
}

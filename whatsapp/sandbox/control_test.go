package sandbox_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp/sandbox"
)

// TestControlAPI: what the handler answers, and what it refuses because a
// web page on the same machine could have sent it.
func TestControlAPI(t *testing.T) {
	l, err := sandbox.NewLocal(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	h := sandbox.Handler(l.Network(), nil)
	tests := []struct {
		name, method, host, path, contentType, body string
		status                                      int
		check                                       func(t *testing.T, body string)
	}{
		{"network info", "GET", "127.0.0.1:7781", "/v1/network", "", "", http.StatusOK, func(t *testing.T, body string) {
			var info struct{ Addr, RootPublicKey string }
			if err := json.Unmarshal([]byte(body), &info); err != nil {
				t.Fatal(err)
			}
			if key, err := hex.DecodeString(info.RootPublicKey); err != nil || len(key) != 32 || info.Addr != l.Network().Addr() {
				t.Errorf("info %+v, want %s and a 32-byte key", info, l.Network().Addr())
			}
		}},
		{"connections, none yet", "GET", "127.0.0.1:7781", "/v1/connections", "", "", http.StatusOK, func(t *testing.T, body string) {
			if strings.TrimSpace(body) != `{"devices":{}}` {
				t.Errorf("body %s, want no devices", body)
			}
		}},
		{"an inbox by name", "POST", "localhost:7781", "/v1/inbox", "application/json", `{"phone":"491701234567"}`, http.StatusOK, func(t *testing.T, body string) {
			if strings.TrimSpace(body) != "[]" {
				t.Errorf("body %s, want []", body)
			}
		}},
		{"a fault", "POST", "[::1]:7781", "/v1/inbox", "application/json", `{"phone":"12"}`, http.StatusBadRequest, func(t *testing.T, body string) {
			if !strings.Contains(body, `"code":"BAD_USER_INPUT","field":"phone"`) {
				t.Errorf("body %s, want the fault of the phone", body)
			}
		}},
		{"an unknown field", "POST", "127.0.0.1:7781", "/v1/inbox", "application/json", `{"phone":"491701234567","extra":1}`, http.StatusBadRequest, nil},
		{"not JSON", "POST", "127.0.0.1:7781", "/v1/inbox", "text/plain", `{"phone":"491701234567"}`, http.StatusUnsupportedMediaType, nil},
		{"a host that is not loopback (DNS rebinding)", "GET", "sandbox.example.com:7781", "/v1/network", "", "", http.StatusForbidden, nil},
		{"a GET of an operation", "GET", "127.0.0.1:7781", "/v1/inbox", "", "", http.StatusMethodNotAllowed, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, "http://"+tt.host+tt.path, strings.NewReader(tt.body))
			if tt.contentType != "" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != tt.status {
				t.Fatalf("status %d (%s), want %d", w.Code, w.Body, tt.status)
			}
			if tt.check != nil {
				tt.check(t, w.Body.String())
			}
		})
	}
}

func TestListenLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "192.0.2.1:7781", ":7781", "example.com:7781"} {
		if ln, err := sandbox.Listen(addr); err == nil {
			ln.Close()
			t.Errorf("listened on %s", addr)
		} else if !strings.Contains(err.Error(), "loopback") {
			t.Errorf("%s: %v, want a refusal naming loopback", addr, err)
		}
	}
	ln, err := sandbox.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
}

// TestRemoteUnreachable: a control address off loopback is refused before
// anything is sent; a network that went away is WHATSAPP_ERROR, as WhatsApp
// being unreachable would be.
func TestRemoteUnreachable(t *testing.T) {
	ctx := context.Background()
	if _, err := sandbox.Dial(ctx, "192.0.2.1:7781", nil); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("dialing off loopback: %v", err)
	}
	l, err := sandbox.NewLocal(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	srv := httptest.NewServer(sandbox.Handler(l.Network(), nil))
	r, err := sandbox.Dial(ctx, srv.Listener.Addr().String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	srv.Close()
	if _, err := sandbox.Do(ctx, r, sandbox.Inbox{Phone: "491701234567"}); fault.CodeOf(err) != fault.WhatsAppError {
		t.Errorf("inbox of a network that is gone: %v (%s), want %s", err, fault.CodeOf(err), fault.WhatsAppError)
	}
	if _, err := sandbox.Dial(ctx, srv.Listener.Addr().String(), nil); fault.CodeOf(err) != fault.WhatsAppError {
		t.Errorf("dialing a network that is gone: %v, want %s", err, fault.WhatsAppError)
	}
}

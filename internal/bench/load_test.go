package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"
)

// TestMeasure puts the closed loop on an in-process server: every right
// answer inside the window is counted, every wrong one is an error, and
// the CPU read is this process's.
func TestMeasure(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(srv.Close)
	self := func() (time.Duration, error) { return processCPU(os.Getpid()) }
	get := func(path string) func(ctx context.Context) (*http.Request, error) {
		return func(ctx context.Context) (*http.Request, error) {
			return http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
		}
	}
	tests := []struct {
		name   string
		target target
		wantOK bool // right answers, no errors; else errors only
	}{
		{"right body", target{name: "ok", request: get("/"), want: []byte(`{"ok":true}`), cpu: self}, true},
		{"other body", target{name: "other", request: get("/"), want: []byte(`{"ok":false}`), cpu: self}, false},
		{"not found", target{name: "404", request: get("/missing"), want: []byte(`{"ok":true}`), cpu: self}, false},
	}
	client := newClient(4)
	t.Cleanup(client.CloseIdleConnections)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := measure(context.Background(), client, tt.target, loadOptions{Conns: 4, Warmup: 50 * time.Millisecond, Duration: 300 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if m.Window != 300*time.Millisecond {
				t.Errorf("window %s, want 300ms", m.Window)
			}
			if tt.wantOK {
				if m.Requests == 0 || m.Errors != 0 {
					t.Fatalf("%d requests, %d errors: want requests and no error", m.Requests, m.Errors)
				}
				if m.P50 <= 0 || m.P50 > m.P99 {
					t.Errorf("p50 %s, p99 %s", m.P50, m.P99)
				}
				if m.CPU <= 0 {
					t.Errorf("CPU %s: the loop and the server ran in this process", m.CPU)
				}
			} else if m.Requests != 0 || m.Errors == 0 {
				t.Fatalf("%d requests, %d errors: want errors only", m.Requests, m.Errors)
			}
		})
	}
}

package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// bareListening is the log line of the reference server that gives its
// address, written as wagraph writes its own.
const bareListening = "bare listening"

// ServeBare is the reference: a bare net/http handler answering every
// request with the bytes of bodyFile as application/json, on a loopback
// port of its choosing, until ctx ends. It runs in its own process (the
// load program re-executes itself) so that it pays the same process and
// loopback costs as wagraph.
func ServeBare(ctx context.Context, bodyFile string) error {
	body, err := os.ReadFile(bodyFile)
	if err != nil {
		return fmt.Errorf("bare: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("bare: %w", err)
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(body)
		}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	slog.New(slog.NewJSONHandler(os.Stderr, nil)).Info(bareListening, "addr", ln.Addr().String())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("bare: %w", err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		return fmt.Errorf("bare: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("bare: %w", err)
	}
	return nil
}

// startBare re-executes self (this program) as the reference server
// answering body.
func startBare(self, dir string, body []byte) (*child, string, error) {
	bodyFile := filepath.Join(dir, "bare-body.json")
	if err := os.WriteFile(bodyFile, body, 0o600); err != nil {
		return nil, "", fmt.Errorf("bare body: %w", err)
	}
	c, err := startChild("bare", self, filepath.Join(dir, "bare.log"), "-serve-bare", bodyFile)
	if err != nil {
		return nil, "", err
	}
	addr, err := c.logged(bareListening, 30*time.Second)
	if err != nil {
		c.stop()
		return nil, "", err
	}
	return c, "http://" + addr, nil
}

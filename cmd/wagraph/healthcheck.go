package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wagraph/wagraph/internal/config"
)

// healthcheckCommand is the container image's HEALTHCHECK: it asks the
// server that serve would start with the same settings (--addr, or
// WAGRAPH_ADDR as the image sets it) for /readyz, at the address that
// server listens on. A fixed 127.0.0.1 fails a server bound to one other
// address (--addr 10.0.0.5:8080); only a server listening on every
// address (0.0.0.0, ::) is asked on loopback.
func (c *cli) healthcheckCommand() *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "healthcheck",
		Short: "exit 0 when the server at --addr is ready (/readyz answers 200): a container's health check",
		Long: `Ask the server listening at --addr (WAGRAPH_ADDR) for /readyz, as serve with the same
settings listens: on its address, or on loopback when it listens on every address
(0.0.0.0, ::). Prints the answer; exit status 0 when it is 200, 1 otherwise (starting,
the database unavailable, nothing listening). The image's HEALTHCHECK runs it.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := config.FromFlags(cmd.Flags(), c.env)
			if err != nil {
				return usageError("wagraph: %v", err)
			}
			return c.healthcheck(cmd.Context(), cfg.Addr, timeout)
		},
	}
	config.Register(cmd.Flags(), "addr")
	cmd.Flags().DurationVar(&timeout, "timeout", 4*time.Second, "how long to wait for the answer (the image's HEALTHCHECK allows 5s)")
	return cmd
}

func (c *cli) healthcheck(ctx context.Context, listen string, timeout time.Duration) error {
	addr, err := dialAddr(listen)
	if err != nil {
		return usageError("wagraph healthcheck: %v", err)
	}
	url := "http://" + addr + "/readyz"
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return &exitError{code: 1, msg: fmt.Sprintf("wagraph healthcheck: %v", err)}
	}
	resp, err := (&http.Client{Transport: &http.Transport{Proxy: nil}}).Do(req)
	if err != nil {
		return &exitError{code: 1, msg: fmt.Sprintf("wagraph healthcheck: %v", err)}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	answer := strings.TrimSpace(string(body))
	if resp.StatusCode != http.StatusOK {
		return &exitError{code: 1, msg: fmt.Sprintf("wagraph healthcheck: %s answered %d: %s", url, resp.StatusCode, answer)}
	}
	fmt.Fprintln(c.stdout, answer)
	return nil
}

// dialAddr is where a client reaches a server listening on listen: the
// same address, but loopback for every address (0.0.0.0, ::, none).
func dialAddr(listen string) (string, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", fmt.Errorf("--addr %q: %w", listen, err)
	}
	if port == "0" {
		return "", fmt.Errorf("--addr %s: port 0 is chosen by the system when the server starts; give the port it listens on", listen)
	}
	switch ip := net.ParseIP(host); {
	case host == "":
		host = "127.0.0.1"
	case ip != nil && ip.IsUnspecified() && ip.To4() == nil:
		host = "::1"
	case ip != nil && ip.IsUnspecified():
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/receiver"
	"github.com/wagraph/wagraph/internal/webhook"
)

// secretEnv is the environment variable of receive's --secret.
const secretEnv = "WAGRAPH_WEBHOOK_SECRET"

// receiveCommand serves internal/receiver: a webhook receiver to try
// wagraph with, printing each delivery. It is a development tool, so it
// listens on loopback unless told otherwise.
func (c *cli) receiveCommand() *cobra.Command {
	var addr, secret string
	cmd := &cobra.Command{
		Use:   "receive",
		Short: "print the webhook deliveries sent to it (a receiver to try wagraph with)",
		Long: `Serve a webhook receiver that prints each delivery on one line: its event kind, seq,
session and id, then its data. Given the webhook's secret (--secret, or
WAGRAPH_WEBHOOK_SECRET) it checks each delivery's signature and timestamp as a real
receiver must, and refuses what fails (401). A delivery whose webhook-id it saw
before is marked: deliveries are at least once, so a receiver drops repeats.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			from := "--secret"
			if secret == "" {
				secret, _ = c.env(secretEnv)
				from = secretEnv
			}
			// A secret of another form would have every delivery refused
			// (401), each for a reason that is not the receiver's.
			if secret != "" {
				if err := webhook.CheckSecret(secret); err != nil {
					return usageError("wagraph receive: %s: %v: give the secret createWebhook answered (whsec_…), or none to print deliveries unchecked", from, err)
				}
			}
			return c.receive(cmd.Context(), addr, secret)
		},
	}
	config.TextVar(cmd.Flags(), &addr, "addr", "host:port", "127.0.0.1:9000", "where to listen: the webhook's url is http://ADDR/")
	config.TextVar(cmd.Flags(), &secret, "secret", "whsec_…", "", "the webhook's secret, to check signatures (env "+secretEnv+")")
	return cmd
}

func (c *cli) receive(ctx context.Context, addr, secret string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return &exitError{code: 1, msg: fmt.Sprintf("wagraph receive: --addr %s: %v", addr, err)}
	}
	checked := "signatures checked"
	if secret == "" {
		checked = "signatures not checked: give --secret whsec_… to check them"
	}
	fmt.Fprintf(c.stderr, "wagraph receive: webhook url http://%s/ (%s); Ctrl-C stops\n", ln.Addr(), checked)
	srv := &http.Server{
		Handler:           receiver.New(c.stdout, receiver.Options{Secret: secret}),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return &exitError{code: 1, msg: fmt.Sprintf("wagraph receive: %v", err)}
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return &exitError{code: 1, msg: fmt.Sprintf("wagraph receive: %v", err)}
	}
	return nil
}

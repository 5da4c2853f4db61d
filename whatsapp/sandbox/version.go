package sandbox

import (
	"context"
	"log/slog"
	"net/http"

	"go.mau.fi/whatsmeow/store"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// The client version the network requires (sandboxRequireClientVersion),
// and the client that reads its web page: in sandbox mode the gateway
// learns the current WhatsApp Web version from the simulated network,
// never from the internet.

// RequireClientVersion makes the network refuse clients announcing a
// version below Minimum (405, client outdated), drop the connected ones
// below it, and advertise Minimum as the current version on its page.
type RequireClientVersion struct {
	Minimum string `json:"minimum"`
}

func (RequireClientVersion) control() Control[RequireClientVersion, Done] {
	return Control[RequireClientVersion, Done]{
		name: "require-client-version",
		check: func(q RequireClientVersion) error {
			_, err := parseMinimum(q.Minimum)
			return err
		},
		run: func(_ context.Context, n *wafake.Network, _ *slog.Logger, q RequireClientVersion) (Done, error) {
			v, err := parseMinimum(q.Minimum)
			if err != nil {
				return Done{}, err
			}
			n.RequireClientVersion(v)
			return Done{}, nil
		},
	}
}

// parseMinimum reads a minimum version, 2.3000.N.
func parseMinimum(minimum string) (store.WAVersionContainer, error) {
	v, err := store.ParseVersion(minimum)
	if err != nil || v[0] == 0 {
		return v, fault.InvalidField("minimum", "minimum must be a WhatsApp Web version such as 2.3000.1045649367 (got %q)", fault.Clip(minimum, fault.QuoteLen))
	}
	return v, nil
}

// HTTPClient reaches the network's web pages, whatever host a URL names.
func (l *Local) HTTPClient() *http.Client { return l.net.HTTPClient() }

// HTTPClient reaches the remote network's web pages, whatever host a URL
// names.
func (r *Remote) HTTPClient() *http.Client { return wafake.ClientFor(r.addr) }

package sandbox

import (
	"context"
	"net/http"

	"go.mau.fi/whatsmeow/store"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// The client version the network requires (sandboxRequireClientVersion),
// and the client that reads its web page: in sandbox mode the gateway
// learns the current WhatsApp Web version from the simulated network,
// never from the internet.

const pathRequireClientVersion = "/v1/require-client-version"

type versionReq struct {
	Minimum string `json:"minimum"`
}

// parseMinimum reads a minimum version, 2.3000.N.
func parseMinimum(minimum string) (store.WAVersionContainer, error) {
	v, err := store.ParseVersion(minimum)
	if err != nil || v[0] == 0 {
		return v, fault.InvalidField("minimum", "minimum must be a WhatsApp Web version such as 2.3000.1045649367 (got %q)", fault.Clip(minimum, fault.QuoteLen))
	}
	return v, nil
}

// RequireClientVersion makes the network refuse clients announcing a
// version below minimum (405, client outdated), drop the connected ones
// below it, and advertise minimum as the current version on its page.
func (l *Local) RequireClientVersion(ctx context.Context, minimum string) error {
	v, err := parseMinimum(minimum)
	if err != nil {
		return err
	}
	l.net.RequireClientVersion(v)
	return nil
}

// HTTPClient reaches the network's web pages, whatever host a URL names.
func (l *Local) HTTPClient() *http.Client { return l.net.HTTPClient() }

// RequireClientVersion is Local.RequireClientVersion on the remote network.
func (r *Remote) RequireClientVersion(ctx context.Context, minimum string) error {
	if _, err := parseMinimum(minimum); err != nil {
		return err
	}
	return r.call(ctx, pathRequireClientVersion, versionReq{Minimum: minimum}, nil)
}

// HTTPClient reaches the remote network's web pages, whatever host a URL
// names.
func (r *Remote) HTTPClient() *http.Client { return wafake.ClientFor(r.addr) }

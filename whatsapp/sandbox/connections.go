package sandbox

import (
	"context"
	"net/http"

	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// The network's count of connections per linked device (wafake's
// DeviceConnections), for tests running several wagraph processes against
// one network: a session must never be connected from two of them at once.
// GET, like /v1/network: it reads, takes nothing, and changes nothing.

const pathConnections = "/v1/connections"

// DeviceConnections counts the logged-in connections of one linked device,
// as the network saw them: a connection counts from the network accepting
// its login until the network has seen it closed.
type DeviceConnections struct {
	Open     int `json:"open"`     // logged in now
	MaxOpen  int `json:"maxOpen"`  // the most ever open at the same time
	Logins   int `json:"logins"`   // logins accepted, in all
	Replaced int `json:"replaced"` // logins that replaced a connection of the device still open
}

// connectionsResp is the answer of GET /v1/connections.
type connectionsResp struct {
	Devices map[string]DeviceConnections `json:"devices"` // by device JID
}

// Connections returns the connection counts of every device that ever
// logged in to the network, by device JID ("491701234567:1@s.whatsapp.net").
func (l *Local) Connections(ctx context.Context) (map[string]DeviceConnections, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return connectionsOf(l.net.ConnectionCounts()), nil
}

// Connections is Local.Connections on the remote network.
func (r *Remote) Connections(ctx context.Context) (map[string]DeviceConnections, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.base+pathConnections, nil)
	if err != nil {
		return nil, err
	}
	var out connectionsResp
	if err := r.do(req, &out); err != nil {
		return nil, err
	}
	if out.Devices == nil {
		out.Devices = map[string]DeviceConnections{}
	}
	return out.Devices, nil
}

// serveConnections answers GET /v1/connections.
func (l *Local) serveConnections(w http.ResponseWriter, r *http.Request) {
	devs, err := l.Connections(r.Context())
	if err != nil {
		writeError(w, l.log, r.URL.Path, err)
		return
	}
	writeJSON(w, http.StatusOK, connectionsResp{Devices: devs})
}

func connectionsOf(counts map[string]wafake.DeviceConnections) map[string]DeviceConnections {
	out := make(map[string]DeviceConnections, len(counts))
	for dev, c := range counts {
		out[dev] = DeviceConnections{Open: c.Open, MaxOpen: c.MaxOpen, Logins: c.Logins, Replaced: c.Replaced}
	}
	return out
}

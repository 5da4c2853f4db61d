package app

import (
	"net/http"

	"github.com/wagraph/wagraph/internal/cluster"
	"github.com/wagraph/wagraph/internal/config"
)

// ClusterTLS is the cluster's TLS as the router and the listener of
// --cluster-addr take it; nil when unset (plain HTTP).
func ClusterTLS(cfg config.Config) *cluster.TLS {
	if cfg.ClusterTLS == nil {
		return nil
	}
	return &cluster.TLS{Cert: cfg.ClusterTLS.Cert, CAs: cfg.ClusterTLS.CAs}
}

// callsHandler serves the calls the other processes forward here: signed
// with this process's key, each taken once; a send's media travel inside
// (base64). It is served on --cluster-addr (cmd/wagraph), else on the
// API's listener (routes).
func callsHandler(cfg config.Config, router *cluster.Router) http.Handler {
	return router.Handler(cfg.MaxBody/3*4 + 1<<20)
}

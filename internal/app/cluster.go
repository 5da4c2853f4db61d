package app

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"

	"github.com/wagraph/wagraph/internal/cluster"
	"github.com/wagraph/wagraph/internal/config"
)

// The calls between the processes of a cluster are served on the API's
// listener, unless --cluster-addr gives them a listener of their own; with
// --cluster-tls-* that listener is TLS, peers proving themselves with a
// certificate of the cluster's CA. A listener of their own, rather than TLS
// on --addr: the API's clients keep their plain HTTP behind a proxy (and
// never see the cluster's private CA), and the calls can be bound to a
// private interface.

// clusterTLS is the cluster's TLS as the router and the listener take it;
// nil when unset (plain HTTP).
func clusterTLS(cfg config.Config) *cluster.TLS {
	if cfg.ClusterTLS == nil {
		return nil
	}
	return &cluster.TLS{Cert: cfg.ClusterTLS.Cert, CAs: cfg.ClusterTLS.CAs}
}

// callsHandler serves the calls the other processes forward here: signed
// with this process's key, each taken once; a send's media travel inside
// (base64). It is served on --cluster-addr (serveCluster), else on the
// API's listener (routes).
func callsHandler(cfg config.Config, router *cluster.Router) http.Handler {
	return router.Handler(cfg.MaxBody/3*4 + 1<<20)
}

// listenCluster opens --cluster-addr; nil when the calls are served on the
// API's listener.
func listenCluster(cfg config.Config) (net.Listener, error) {
	if cfg.ClusterAddr == "" || !cfg.Clustered() {
		return nil, nil
	}
	ln, err := net.Listen("tcp", cfg.ClusterAddr)
	if err != nil {
		return nil, fmt.Errorf("--cluster-addr %s: %w", cfg.ClusterAddr, err)
	}
	return ln, nil
}

// serveCluster serves the calls (h) on ln (with the cluster's TLS when
// set) until ctx is done, letting those under way finish; the error, or
// nil, arrives on the channel returned.
func serveCluster(ctx context.Context, cfg config.Config, ln net.Listener, h http.Handler, log *slog.Logger) <-chan error {
	t := clusterTLS(cfg)
	if t != nil {
		ln = t.Listener(ln)
	}
	done := make(chan error, 1)
	go func() { done <- serve(ctx, ln, h, log) }()
	log.Info("serving the calls between the processes of the cluster", "addr", ln.Addr().String(), "tls", t != nil, "advertise", cfg.AdvertiseAddr)
	return done
}

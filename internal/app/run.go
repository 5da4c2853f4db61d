package app

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync/atomic"

	"github.com/wagraph/wagraph/internal/config"
)

// Run is the whole life of `wagraph serve`: listen, open the storage and
// build the server, serve until ctx is done, stop in order. The port opens
// first: while the storage opens /healthz answers and /readyz says what it
// waits for, and the linked sessions reconnect after that, in the
// background (/readyz is 503 until they have been started).
func Run(ctx context.Context, cfg config.Config, opts Options) error {
	opts = opts.withDefaults()
	ln := opts.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", cfg.Addr); err != nil {
			return fmt.Errorf("--addr %s: %w", cfg.Addr, err)
		}
	}
	debugLn, err := listenDebug(cfg, opts)
	if err != nil {
		ln.Close()
		return err
	}
	clusterLn, err := listenCluster(cfg)
	if err != nil {
		ln.Close()
		if debugLn != nil {
			debugLn.Close()
		}
		return err
	}
	front := &frontDoor{}
	front.set(http.HandlerFunc(serveStarting))
	serveCtx, stopServing := context.WithCancel(ctx)
	defer stopServing()
	served := make(chan error, 1)
	go func() { served <- serve(serveCtx, ln, front, opts.Logger) }()

	if cfg.Clustered() && cfg.AdvertiseAddr == "" {
		at := ln // where the calls of the other processes are served
		if clusterLn != nil {
			at = clusterLn
		}
		cfg.AdvertiseAddr = advertised(at.Addr())
	}
	a, err := New(ctx, cfg, opts)
	if err != nil {
		stopServing()
		<-served
		if debugLn != nil {
			debugLn.Close()
		}
		if clusterLn != nil {
			clusterLn.Close()
		}
		return err
	}
	defer a.Close()
	var clusterServed <-chan error // nil (never ready) without a listener of its own
	if clusterLn != nil {
		clusterServed = serveCluster(serveCtx, cfg, clusterLn, a.clusterCalls, a.log)
	}
	if debugLn != nil {
		a.debug = serveDebug(debugLn, a.log)
	}
	defer context.AfterFunc(ctx, a.endStreams)()
	front.set(a.handler)
	a.log.Info("wagraph listening", "addr", ln.Addr().String(), "graphql", "http://"+ln.Addr().String()+"/graphql", "data_dir", cfg.DataDir)
	// Both listeners stop together, before a.Close: the calls under way
	// finish while the manager still runs.
	select {
	case err := <-served:
		if clusterServed != nil {
			stopServing()
			if cerr := <-clusterServed; cerr != nil {
				a.log.Error("serving the calls between the processes failed", "err", cerr)
			}
		}
		return err
	case err := <-clusterServed:
		// Without its cluster listener the process cannot take the calls
		// for its sessions: it stops, as when --addr fails.
		stopServing()
		if serr := <-served; err == nil { // ctx is done: both stopped
			return serr
		}
		return fmt.Errorf("--cluster-addr: %w", err)
	}
}

// frontDoor serves the handler of the moment: the starting answers while
// the storage opens, then the server's.
type frontDoor struct{ h atomic.Pointer[http.Handler] }

func (f *frontDoor) set(h http.Handler) { f.h.Store(&h) }

func (f *frontDoor) ServeHTTP(w http.ResponseWriter, r *http.Request) { (*f.h.Load()).ServeHTTP(w, r) }

// serveStarting answers while the storage opens: the process is alive, not
// ready, and nothing else can be served yet.
func serveStarting(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/healthz":
		_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
	case "/readyz":
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"status":"starting","storage":"opening"}` + "\n"))
	default:
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"status":"failed","message":"wagraph is starting: retry in a moment"}` + "\n"))
	}
}

// advertised is the address the other processes of a cluster reach this
// one at when --advertise-addr is unset: the listening address, with the
// machine's name when it listens on every interface.
func advertised(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return addr.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if name, err := os.Hostname(); err == nil {
			host = name
		}
	}
	return net.JoinHostPort(host, port)
}

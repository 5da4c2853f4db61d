package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/wagraph/wagraph/internal/app"
	"github.com/wagraph/wagraph/internal/config"
	"github.com/wagraph/wagraph/internal/health"
)

// shutdownGrace is how long in-flight requests may finish at shutdown.
const shutdownGrace = 30 * time.Second

// serveOptions are what `wagraph serve` gives the server besides its
// settings; tests set the listeners.
type serveOptions struct {
	app app.Options
	// listener, when set, is where the API is served instead of on --addr:
	// a test learns the address before the server has started.
	listener net.Listener
	// debugListener, when set, is where /debug/pprof is served instead of
	// on --debug-addr.
	debugListener net.Listener
}

// runServer is the whole life of the server: listen, open the storage and
// build the server (internal/app), serve until ctx is done, stop in order.
// The port opens first: while the storage opens /healthz answers and
// /readyz says what it waits for (internal/health), and the linked
// sessions reconnect after that, in the background (/readyz is 503 until
// they have been started).
func runServer(ctx context.Context, cfg config.Config, opts serveOptions) error {
	log := opts.app.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
		opts.app.Logger = log
	}
	ln := opts.listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", cfg.Addr); err != nil {
			return fmt.Errorf("--addr %s: %w", cfg.Addr, err)
		}
	}
	debugLn := opts.debugListener
	if debugLn == nil {
		var err error
		if debugLn, err = listenOptional("--debug-addr", cfg.DebugAddr); err != nil {
			ln.Close()
			return err
		}
	}
	var clusterLn net.Listener // nil: the calls are served on the API's listener
	if cfg.Clustered() {
		var err error
		if clusterLn, err = listenOptional("--cluster-addr", cfg.ClusterAddr); err != nil {
			ln.Close()
			if debugLn != nil {
				debugLn.Close()
			}
			return err
		}
	}
	if debugLn != nil {
		// From the start, and stopped last: a start or a shutdown that
		// hangs can still be looked at.
		defer serveDebug(debugLn, log).close()
	}
	front := &frontDoor{}
	front.set(http.HandlerFunc(health.Starting))
	serveCtx, stopServing := context.WithCancel(ctx)
	defer stopServing()
	served := make(chan error, 1)
	go func() { served <- serveHTTP(serveCtx, ln, front, log) }()

	if cfg.Clustered() && cfg.AdvertiseAddr == "" {
		at := ln // where the calls of the other processes are served
		if clusterLn != nil {
			at = clusterLn
		}
		cfg.AdvertiseAddr = advertised(at.Addr())
	}
	a, err := app.New(ctx, cfg, opts.app)
	if err != nil {
		stopServing()
		<-served
		if clusterLn != nil {
			clusterLn.Close()
		}
		return err
	}
	defer a.Close()
	var clusterServed <-chan error // nil (never ready) without a listener of its own
	if clusterLn != nil {
		clusterServed = serveCluster(serveCtx, cfg, clusterLn, a.ClusterCalls(), log)
	}
	defer context.AfterFunc(ctx, a.EndStreams)()
	front.set(a.Handler())
	log.Info("wagraph listening", "addr", ln.Addr().String(), "graphql", "http://"+ln.Addr().String()+"/graphql", "data_dir", cfg.DataDir)
	// Both listeners stop together, before a.Close: the calls under way
	// finish while the manager still runs.
	select {
	case err := <-served:
		if clusterServed != nil {
			stopServing()
			if cerr := <-clusterServed; cerr != nil {
				log.Error("serving the calls between the processes failed", "err", cerr)
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

// listenOptional opens the address of the setting flag; nil when it is
// unset.
func listenOptional(flag, addr string) (net.Listener, error) {
	if addr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", flag, addr, err)
	}
	return ln, nil
}

// serveHTTP serves h on ln until ctx is done, then lets in-flight requests
// finish for up to shutdownGrace.
func serveHTTP(ctx context.Context, ln net.Listener, h http.Handler, log *slog.Logger) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down", "grace", shutdownGrace)
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// frontDoor serves the handler of the moment: the starting answers while
// the storage opens, then the server's.
type frontDoor struct{ h atomic.Pointer[http.Handler] }

func (f *frontDoor) set(h http.Handler) { f.h.Store(&h) }

func (f *frontDoor) ServeHTTP(w http.ResponseWriter, r *http.Request) { (*f.h.Load()).ServeHTTP(w, r) }

// The calls between the processes of a cluster are served on the API's
// listener, unless --cluster-addr gives them a listener of their own; with
// --cluster-tls-* that listener is TLS, peers proving themselves with a
// certificate of the cluster's CA. A listener of their own, rather than TLS
// on --addr: the API's clients keep their plain HTTP behind a proxy (and
// never see the cluster's private CA), and the calls can be bound to a
// private interface.

// serveCluster serves the calls (h) on ln (with the cluster's TLS when
// set) until ctx is done, letting those under way finish; the error, or
// nil, arrives on the channel returned.
func serveCluster(ctx context.Context, cfg config.Config, ln net.Listener, h http.Handler, log *slog.Logger) <-chan error {
	t := app.ClusterTLS(cfg)
	if t != nil {
		ln = t.Listener(ln)
	}
	done := make(chan error, 1)
	go func() { done <- serveHTTP(ctx, ln, h, log) }()
	log.Info("serving the calls between the processes of the cluster", "addr", ln.Addr().String(), "tls", t != nil, "advertise", cfg.AdvertiseAddr)
	return done
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

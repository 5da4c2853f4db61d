package main

import (
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// debugServer serves /debug/pprof on --debug-addr, a loopback address of
// its own: profiles show the process's memory, goroutines and command line
// to whoever reaches them, with no token, so they are never on the API
// address. The handlers are on a mux of their own. (Importing net/http/pprof
// also registers them on http.DefaultServeMux; nothing here serves that
// mux.)
type debugServer struct {
	srv  *http.Server
	log  *slog.Logger
	done chan struct{} // closed when Serve has returned
}

// serveDebug serves the profiles on ln until close.
func serveDebug(ln net.Listener, log *slog.Logger) *debugServer {
	mux := http.NewServeMux()
	// As net/http/pprof registers them: symbol takes POST too (pprof sends
	// addresses in the body), the others ignore the method.
	mux.HandleFunc("/debug/pprof/", pprof.Index) // also the named profiles: heap, goroutine, …
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	d := &debugServer{
		srv: &http.Server{
			Handler:           mux,
			ReadHeaderTimeout: 10 * time.Second,
			ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		},
		log:  log,
		done: make(chan struct{}),
	}
	go func() {
		defer close(d.done)
		if err := d.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			log.Error("the debug server stopped: /debug/pprof is no longer served", "addr", ln.Addr().String(), "err", err)
		}
	}()
	log.Info("serving /debug/pprof", "addr", ln.Addr().String(), "url", "http://"+ln.Addr().String()+"/debug/pprof/")
	return d
}

// close stops the debug server at once (a profile being taken is cut) and
// waits for it.
func (d *debugServer) close() {
	if err := d.srv.Close(); err != nil {
		d.log.Warn("closing the debug server failed", "err", err)
	}
	<-d.done
}

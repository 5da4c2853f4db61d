package sandbox

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"go.mau.fi/whatsmeow"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// Remote is the control surface of a network running as its own process
// (`wagraph sandbox-network`), reached over its control API.
type Remote struct {
	base string // http://<control address>
	addr string // where the network itself listens
	http *http.Client
	log  *slog.Logger
}

// Dial asks the control API at controlAddr (host:port on loopback) where
// the network listens and which root certifies it, and makes this
// process's whatsmeow clients trust that root (wafake.TrustRoot: a process
// trusts one root for good, so it fails if another was trusted before).
func Dial(ctx context.Context, controlAddr string, log *slog.Logger) (*Remote, error) {
	if !isLoopback(controlAddr) {
		return nil, fmt.Errorf("sandbox: %q is not a loopback address; the sandbox control API only listens on loopback", controlAddr)
	}
	r := &Remote{base: "http://" + controlAddr, http: &http.Client{}, log: orDiscard(log)}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.base+pathNetwork, nil)
	if err != nil {
		return nil, fmt.Errorf("sandbox: control address %q: %w", controlAddr, err)
	}
	var info networkInfo
	if err := r.do(req, &info); err != nil {
		return nil, fmt.Errorf("sandbox: ask the network at %s: %w", controlAddr, err)
	}
	key, err := hex.DecodeString(info.RootPublicKey)
	if err != nil || len(key) != 32 {
		return nil, fmt.Errorf("sandbox: the network at %s answered a root key that is not 32 bytes of hex", controlAddr)
	}
	if !isLoopback(info.Addr) {
		return nil, fmt.Errorf("sandbox: the network at %s says it listens on %q, which is not loopback", controlAddr, info.Addr)
	}
	if err := wafake.TrustRoot([32]byte(key)); err != nil {
		return nil, fmt.Errorf("sandbox: trust the network at %s: %w", controlAddr, err)
	}
	r.addr = info.Addr
	r.log.Info("sandbox: using a separate simulated network", "control_addr", controlAddr, "addr", r.addr)
	return r, nil
}

// Point makes cli connect to the remote network instead of WhatsApp.
func (r *Remote) Point(cli *whatsmeow.Client) { wafake.PointAt(cli, r.addr) }

// Transport is an HTTP transport to the remote network instead of
// WhatsApp, for whatsapp.ManagerOptions.Transport.
func (r *Remote) Transport() *wafake.Redirect { return wafake.TransportTo(r.addr) }

// Close releases the idle connections to the control API; the network
// keeps running.
func (r *Remote) Close() error {
	r.http.CloseIdleConnections()
	return nil
}

// call POSTs the request of c to the control API and decodes its result
// into res.
func (r *Remote) call(ctx context.Context, c op, req, res any) error {
	path := c.path()
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("sandbox: encode %s: %w", path, err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, r.base+path, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("sandbox: %s: %w", path, err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	return r.do(hreq, res)
}

// do sends req and decodes a 200 answer into out; an error answer becomes
// the fault it carries, so a Remote fails as a Local would.
func (r *Remote) do(req *http.Request, out any) error {
	resp, err := r.http.Do(req)
	if err != nil {
		if ctxErr := req.Context().Err(); ctxErr != nil {
			return ctxErr
		}
		r.log.Warn("sandbox: the simulated network does not answer", "url", req.URL.String(), "err", err)
		return fault.New(fault.WhatsAppError, "the sandbox network at %s does not answer: is `wagraph sandbox-network` running?", req.URL.Host)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			return fmt.Errorf("sandbox: decode the answer of %s: %w", req.URL.Path, err)
		}
		return nil
	}
	var eb errorBody
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&eb); err != nil || eb.Error.Code == "" {
		return fmt.Errorf("sandbox: %s answered %s", req.URL.Path, resp.Status)
	}
	if eb.Error.Code == fault.Internal {
		return errors.New("sandbox: " + eb.Error.Message)
	}
	return &fault.Error{Code: eb.Error.Code, Field: eb.Error.Field, Message: eb.Error.Message}
}

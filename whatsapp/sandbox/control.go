package sandbox

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp/wafake"
)

// The control API: every operation is a POST of a JSON object to
// /v1/<operation>; the answer is 200 with the result as JSON, or the fault's
// HTTP status with {"error": {"code", "field", "message"}}. Two reads are
// GETs without a body: GET /v1/network tells where the network listens and
// the public key of its root; GET /v1/connections counts each linked
// device's logged-in connections, {"devices": {"<device JID>": {"open",
// "maxOpen", "logins", "replaced"}}} (connections.go).
const (
	pathNetwork          = "/v1/network"
	pathLinkDevice       = "/v1/link-device"
	pathEnterPairingCode = "/v1/enter-pairing-code"
	pathInbox            = "/v1/inbox"
	pathMedia            = "/v1/media"
	pathSendText         = "/v1/send-text"
	pathSendImage        = "/v1/send-image"
	pathReact            = "/v1/react"
	pathReceipt          = "/v1/receipt"
	pathPresence         = "/v1/presence"
	pathGroup            = "/v1/group"
	pathAccount          = "/v1/account"
	pathDropConnection   = "/v1/drop-connection"
	pathRemoveDevice     = "/v1/remove-device"
)

// maxBody holds a 16 MiB image in base64 with room to spare.
const maxBody = 24 << 20

type (
	networkInfo struct {
		Addr          string `json:"addr"`
		RootPublicKey string `json:"rootPublicKey"` // hex
	}
	linkReq struct {
		QRCode string `json:"qrCode"`
		Phone  string `json:"phone"`
	}
	pairingCodeReq struct {
		Phone string `json:"phone"`
		Code  string `json:"code"`
	}
	phoneReq struct {
		Phone string `json:"phone"`
	}
	mediaReq struct {
		Phone     string `json:"phone"`
		MessageID string `json:"messageId"`
	}
	sendTextReq struct {
		From string `json:"from"`
		To   string `json:"to"`
		Text string `json:"text"`
	}
	sendImageReq struct {
		From     string `json:"from"`
		To       string `json:"to"`
		Image    []byte `json:"image"` // base64
		Mimetype string `json:"mimetype"`
		Caption  string `json:"caption,omitempty"`
	}
	reactReq struct {
		From      string `json:"from"`
		To        string `json:"to"`
		MessageID string `json:"messageId"`
		Emoji     string `json:"emoji"`
	}
	receiptReq struct {
		From      string `json:"from"`
		To        string `json:"to"`
		MessageID string `json:"messageId"`
		Type      string `json:"type"`
	}
	presenceReq struct {
		From  string `json:"from"`
		To    string `json:"to"`
		State string `json:"state"`
	}
	groupReq struct {
		JID string `json:"jid"`
	}
	deviceReq struct {
		Device string `json:"device"`
	}
	idResp struct {
		ID string `json:"id"`
	}
	done      struct{}
	errorBody struct {
		Error struct {
			Code    fault.Code `json:"code"`
			Field   string     `json:"field,omitempty"`
			Message string     `json:"message"`
		} `json:"error"`
	}
)

// Handler serves the control API of n (the sandbox-network command mounts
// it on its loopback control listener).
func Handler(n *wafake.Network, log *slog.Logger) http.Handler {
	l := over(n, log)
	mux := http.NewServeMux()
	info, infoErr := publicInfo(n)
	mux.HandleFunc("GET "+pathNetwork, func(w http.ResponseWriter, r *http.Request) {
		if infoErr != nil {
			writeError(w, l.log, r.URL.Path, infoErr)
			return
		}
		writeJSON(w, http.StatusOK, info)
	})
	mux.HandleFunc("GET "+pathConnections, l.serveConnections)
	handle(mux, l.log, pathLinkDevice, func(ctx context.Context, q linkReq) (done, error) {
		return done{}, l.LinkDevice(ctx, q.QRCode, q.Phone)
	})
	handle(mux, l.log, pathEnterPairingCode, func(ctx context.Context, q pairingCodeReq) (done, error) {
		return done{}, l.EnterPairingCode(ctx, q.Phone, q.Code)
	})
	handle(mux, l.log, pathInbox, func(ctx context.Context, q phoneReq) ([]Message, error) {
		return l.Inbox(ctx, q.Phone)
	})
	handle(mux, l.log, pathMedia, func(ctx context.Context, q mediaReq) ([]byte, error) {
		return l.Media(ctx, q.Phone, q.MessageID)
	})
	handle(mux, l.log, pathSendText, func(ctx context.Context, q sendTextReq) (idResp, error) {
		id, err := l.SendText(ctx, q.From, q.To, q.Text)
		return idResp{id}, err
	})
	handle(mux, l.log, pathSendImage, func(ctx context.Context, q sendImageReq) (idResp, error) {
		id, err := l.SendImage(ctx, q.From, q.To, q.Image, q.Mimetype, q.Caption)
		return idResp{id}, err
	})
	handle(mux, l.log, pathSendBurst, func(ctx context.Context, q burstReq) (burstResp, error) {
		n, err := l.SendBurst(ctx, q.From, q.To, q.Count, q.Prefix)
		return burstResp{n}, err
	})
	handle(mux, l.log, pathReact, func(ctx context.Context, q reactReq) (done, error) {
		return done{}, l.React(ctx, q.From, q.To, q.MessageID, q.Emoji)
	})
	handle(mux, l.log, pathReceipt, func(ctx context.Context, q receiptReq) (done, error) {
		return done{}, l.Receipt(ctx, q.From, q.To, q.MessageID, q.Type)
	})
	handle(mux, l.log, pathPresence, func(ctx context.Context, q presenceReq) (done, error) {
		return done{}, l.Presence(ctx, q.From, q.To, q.State)
	})
	handle(mux, l.log, pathGroup, func(ctx context.Context, q groupReq) (*Group, error) {
		return l.Group(ctx, q.JID)
	})
	handle(mux, l.log, pathAccount, func(ctx context.Context, q phoneReq) (*Account, error) {
		return l.Account(ctx, q.Phone)
	})
	handle(mux, l.log, pathDropConnection, func(ctx context.Context, q deviceReq) (done, error) {
		return done{}, l.DropConnection(ctx, q.Device)
	})
	handle(mux, l.log, pathRemoveDevice, func(ctx context.Context, q deviceReq) (done, error) {
		return done{}, l.RemoveDevice(ctx, q.Device)
	})
	handle(mux, l.log, pathRequireClientVersion, func(ctx context.Context, q versionReq) (done, error) {
		return done{}, l.RequireClientVersion(ctx, q.Minimum)
	})
	return loopbackOnly(mux)
}

// handle serves one operation: decode the request, run it, encode the
// result or the fault.
func handle[Req, Resp any](mux *http.ServeMux, log *slog.Logger, path string, fn func(context.Context, Req) (Resp, error)) {
	mux.HandleFunc("POST "+path, func(w http.ResponseWriter, r *http.Request) {
		var req Req
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				writeError(w, log, path, fault.New(fault.TooLarge, "the request is larger than %d MiB", maxBody>>20))
				return
			}
			writeError(w, log, path, fault.New(fault.Invalid, "the request body is not the JSON object %s takes", path))
			return
		}
		resp, err := fn(r.Context(), req)
		if err != nil {
			writeError(w, log, path, err)
			return
		}
		writeJSON(w, http.StatusOK, resp)
	})
}

// loopbackOnly refuses requests that a web page could have made: a Host
// that is not a loopback name (DNS rebinding) and POSTs that are not JSON
// (a cross-site form post needs no preflight; JSON does).
func loopbackOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isLoopback(r.Host) {
			writeJSON(w, http.StatusForbidden, errorOf(fault.New(fault.Forbidden, "the sandbox control API answers only requests addressed to a loopback host")))
			return
		}
		if r.Method == http.MethodPost && !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			writeJSON(w, http.StatusUnsupportedMediaType, errorOf(fault.New(fault.Invalid, "the sandbox control API takes application/json")))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers with the fault inside err; anything else is an
// internal error, logged here and shown as such.
func writeError(w http.ResponseWriter, log *slog.Logger, path string, err error) {
	f := fault.From(err)
	if f == nil {
		log.Error("sandbox control: operation failed", "op", path, "err", err)
		f = fault.New(fault.Internal, "internal error of the sandbox network (see its log)")
	}
	writeJSON(w, fault.HTTPStatus(f.Code), errorOf(f)) // restcompat's table; the Remote reads the code, not the status
}

func errorOf(f *fault.Error) errorBody {
	var b errorBody
	b.Error.Code, b.Error.Field, b.Error.Message = f.Code, f.Field, f.Message
	return b
}

// publicInfo is the network's address and root public key. wafake hands
// the root key out only in its root file, so it is read back from one
// written to a private temporary directory.
func publicInfo(n *wafake.Network) (networkInfo, error) {
	dir, err := os.MkdirTemp("", "wagraph-sandbox-")
	if err != nil {
		return networkInfo{}, fmt.Errorf("sandbox: read the root key: %w", err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "root.json")
	if err := n.WriteRootFile(path); err != nil {
		return networkInfo{}, fmt.Errorf("sandbox: read the root key: %w", err)
	}
	addr, root, err := wafake.ReadRootFile(path)
	if err != nil {
		return networkInfo{}, fmt.Errorf("sandbox: read the root key: %w", err)
	}
	return networkInfo{Addr: addr, RootPublicKey: hex.EncodeToString(root[:])}, nil
}

// Listen opens the listener of a control API. Like the network, it only
// ever listens on loopback: the API has no authentication.
func Listen(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("sandbox: control address %q: %w", addr, err)
	}
	if !isLoopback(host) {
		return nil, fmt.Errorf("sandbox: %q is not a loopback address; the sandbox control API only listens on loopback (127.0.0.1, ::1)", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("sandbox: listen on %s: %w", addr, err)
	}
	return ln, nil
}

// isLoopback reports whether a host, or host:port, names loopback.
func isLoopback(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

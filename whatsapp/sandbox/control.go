package sandbox

import (
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

// The control API: every control of the table (controls.go) is a POST of
// its request as a JSON object to /v1/<name>; the answer is 200 with the
// result as JSON, or the fault's HTTP status with {"error": {"code",
// "field", "message"}}. Two reads are GETs without a body: GET /v1/network
// tells where the network listens and the public key of its root; GET
// /v1/connections counts each linked device's logged-in connections,
// {"devices": {"<device JID>": {"open", "maxOpen", "logins", "replaced"}}}
// (connections.go).
const pathNetwork = "/v1/network"

// maxBody holds a 16 MiB image in base64 with room to spare.
const maxBody = 24 << 20

type (
	networkInfo struct {
		Addr          string `json:"addr"`
		RootPublicKey string `json:"rootPublicKey"` // hex
	}
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
	for _, c := range controls() {
		mux.HandleFunc("POST "+c.path(), c.serve(l, l.log))
	}
	return loopbackOnly(mux)
}

// serve answers a POST of c: decode the request, run it on n (the checks
// first, as for any caller), encode the result or the fault.
func (c Control[Req, Res]) serve(n Network, log *slog.Logger) http.HandlerFunc {
	path := c.path()
	return func(w http.ResponseWriter, r *http.Request) {
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
		res, err := c.do(r.Context(), n, req)
		if err != nil {
			writeError(w, log, path, err)
			return
		}
		writeJSON(w, http.StatusOK, res)
	}
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

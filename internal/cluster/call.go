package cluster

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/internal/requestid"
)

// CallPath is where a process takes the calls the others forward to it.
// It is served outside the users' authentication, on the API's listener or
// on a listener of its own (--cluster-addr, with TLS when it is set up): a
// call is signed with the key of the process it is for (cluster_nodes),
// which only readers of the database know, and carries a nonce, so a
// recorded call cannot be played again.
const CallPath = "/internal/cluster/call"

// The headers of a forwarded call.
const (
	headerNode      = "Wagraph-Node"      // the caller's node id (for the log)
	headerTimestamp = "Wagraph-Timestamp" // unix seconds
	// headerNonce is 16 random bytes (unpadded base64url), new for each
	// call: the receiver takes each nonce once within the signature window.
	headerNonce     = "Wagraph-Nonce"
	headerSignature = "Wagraph-Signature" // base64 HMAC-SHA256 of timestamp "." nonce "." path "." body
	// headerKey proves the key before the body is read: base64
	// HMAC-SHA256 of "call." timestamp "." nonce. Without it anybody could
	// make a process read a body of the largest size before refusing it.
	headerKey = "Wagraph-Key"
)

// callSkew is how far a call's timestamp may be from the receiver's clock:
// a recorded call cannot be replayed later than that, and within it its
// nonce is remembered (seenCache).
const callSkew = time.Minute

// call is a forwarded operation: one method of the session manager.
type call struct {
	Session string          `json:"session"`
	Op      string          `json:"op"`
	Args    json.RawMessage `json:"args"`
}

// reply is its outcome: Result, or Error.
type reply struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  *replyError     `json:"error,omitempty"`
}

type replyError struct {
	Code    string `json:"code"` // a fault code; codeMoved; codeInternal
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

// codeMoved: the receiver does not hold the session (any more). The caller
// reads the holder again and retries once.
const codeMoved = "MOVED"

var errMoved = errors.New("cluster: the process called does not hold the session")

// op runs one forwarded operation here: args decoded, result encoded.
type op func(ctx context.Context, sessionID string, args json.RawMessage) (any, error)

// keyProof is the header that proves the key for a timestamp and nonce.
func keyProof(secret []byte, ts, nonce string) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte("call."))
	mac.Write([]byte(ts))
	mac.Write([]byte("."))
	mac.Write([]byte(nonce))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

func sign(secret []byte, ts, nonce, path string, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(ts))
	mac.Write([]byte("."))
	mac.Write([]byte(nonce))
	mac.Write([]byte("."))
	mac.Write([]byte(path))
	mac.Write([]byte("."))
	mac.Write(body)
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// newNonce returns a fresh nonce in its header's form.
func newNonce() string {
	var b [nonceLen]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// parseNonce reads a nonce header; false when it is not one.
func parseNonce(s string) (n [nonceLen]byte, ok bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != nonceLen {
		return n, false
	}
	copy(n[:], b)
	return n, true
}

// callServer answers forwarded calls with the operations of this process.
type callServer struct {
	node    *Node
	ops     map[string]op
	maxBody int64
	seen    *seenCache // the router's: shared by every handler of it
	log     *slog.Logger
}

func (s *callServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	// The signature's inputs first, then the body, bounded: an unsigned
	// call (or a replayed one) costs a header check.
	ts, sig := r.Header.Get(headerTimestamp), r.Header.Get(headerSignature)
	nonceText := r.Header.Get(headerNonce)
	sec, err := strconv.ParseInt(ts, 10, 64)
	nonce, nonceOK := parseNonce(nonceText)
	if err != nil || sig == "" || !nonceOK || time.Since(time.Unix(sec, 0)).Abs() > callSkew ||
		!hmac.Equal([]byte(r.Header.Get(headerKey)), []byte(keyProof(s.node.secret, ts, nonceText))) {
		http.Error(w, "unauthenticated", http.StatusUnauthorized)
		return
	}
	if s.seen.seen(nonce) {
		s.refuseReplay(w, r)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxBody))
	if err != nil {
		http.Error(w, "body too large or cut", http.StatusRequestEntityTooLarge)
		return
	}
	if !hmac.Equal([]byte(sig), []byte(sign(s.node.secret, ts, nonceText, CallPath, body))) {
		http.Error(w, "unauthenticated", http.StatusUnauthorized)
		return
	}
	// Taken only now, signed: nobody without the key can fill the cache.
	// Kept until the timestamp leaves the window, when the check above
	// refuses the call anyway.
	switch err := s.seen.take(nonce, time.Unix(sec, 0).Add(callSkew), time.Now()); {
	case errors.Is(err, errReplay): // two copies raced past the first look
		s.refuseReplay(w, r)
		return
	case err != nil:
		s.log.Warn("a forwarded call was refused: too many calls within the signature window",
			"from", r.Header.Get(headerNode), "remembered", maxSeen)
		w.Header().Set("Retry-After", "1")
		http.Error(w, "too many cluster calls: try again in a moment", http.StatusServiceUnavailable)
		return
	}
	var c call
	if err := json.Unmarshal(body, &c); err != nil {
		http.Error(w, "bad call", http.StatusBadRequest)
		return
	}
	fn, ok := s.ops[c.Op]
	if !ok || c.Session == "" {
		http.Error(w, "unknown operation", http.StatusBadRequest)
		return
	}
	// The caller's request id joins this process's lines to its own.
	id := requestid.Of(r)
	ctx := requestid.With(r.Context(), id)
	log := s.log.With("session_id", c.Session, "op", c.Op, "from", r.Header.Get(headerNode), "request_id", id)
	var out reply
	if !s.node.Holds(c.Session) {
		out.Error = &replyError{Code: codeMoved, Message: "this process does not hold the session"}
	} else if res, err := fn(ctx, c.Session, c.Args); err != nil {
		out.Error = replyErrorOf(err, log)
	} else if out.Result, err = json.Marshal(res); err != nil {
		out.Error = replyErrorOf(fmt.Errorf("encode the result: %w", err), log)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// refuseReplay answers a call whose nonce was taken already: somebody
// recorded a call and played it again. Logged without the call's headers
// or body (its signature, its contents).
func (s *callServer) refuseReplay(w http.ResponseWriter, r *http.Request) {
	s.log.Warn("a forwarded call was refused: it replays one taken already",
		"from", r.Header.Get(headerNode), "remote_addr", r.RemoteAddr)
	http.Error(w, "replayed call: its nonce was taken already", http.StatusUnauthorized)
}

// replyErrorOf carries a classified error as it is; anything else travels
// as an internal error. Only the client-safe part crosses the hop, so the
// cause stays here: a fault of WhatsApp or an internal one is logged with
// it (the whatsmeow error of a refused send), a refusal of the caller's
// input is not.
func replyErrorOf(err error, log *slog.Logger) *replyError {
	f := fault.From(err)
	switch {
	case f == nil:
		log.Error("a forwarded operation failed", "err", err)
		return &replyError{Code: string(fault.Internal), Message: "internal error"}
	case f.Code == fault.Internal || fault.IsWhatsApp(f.Code):
		log.Error("a forwarded operation failed", "code", string(f.Code), "err", err, "cause", f.Cause)
	}
	return &replyError{Code: string(f.Code), Field: f.Field, Message: f.Message}
}

// caller forwards calls to the process holding a session.
type caller struct {
	node   *Node
	client *http.Client
	scheme string // https with the cluster's TLS
}

// newCaller returns n's caller; with t, it calls over TLS (every process
// of a cluster is set up alike: a holder's address is its TLS listener).
func newCaller(n *Node, t *TLS) *caller {
	tr := &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost:   32,
		IdleConnTimeout:       time.Minute,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 5 * time.Minute, // a media send can take long; the caller's context bounds it too
	}
	c := &caller{node: n, client: &http.Client{Transport: tr}, scheme: "http"}
	if t != nil {
		tr.TLSClientConfig, c.scheme = t.clientConfig(), "https"
	}
	return c
}

// do forwards one operation to h and decodes its result into res.
func (c *caller) do(ctx context.Context, h Holder, sessionID, opName string, args, res any) error {
	raw, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("cluster: encode %s: %w", opName, err)
	}
	body, err := json.Marshal(call{Session: sessionID, Op: opName, Args: raw})
	if err != nil {
		return fmt.Errorf("cluster: encode %s: %w", opName, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.scheme+"://"+h.Addr+CallPath, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("cluster: %s: %w", opName, err)
	}
	ts, nonce := strconv.FormatInt(time.Now().Unix(), 10), newNonce()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(headerNode, c.node.id)
	req.Header.Set(headerTimestamp, ts)
	req.Header.Set(headerNonce, nonce)
	req.Header.Set(headerSignature, sign(h.secret, ts, nonce, CallPath, body))
	req.Header.Set(headerKey, keyProof(h.secret, ts, nonce))
	if id := requestid.From(ctx); id != "" {
		req.Header.Set(requestid.Header, id)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fault.Wrap(err, fault.NotConnected, "session %s: the process running it (%s) does not answer; another takes the session over within %s",
			sessionID, h.Addr, c.node.ttl)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusServiceUnavailable {
		return fault.New(fault.RateLimited, "session %s: the process running it is busy: try again in a moment", sessionID)
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("cluster: %s forwarded to %s: %s: %s", opName, h.Addr, resp.Status, bytes.TrimSpace(msg))
	}
	var out reply
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return fmt.Errorf("cluster: %s forwarded to %s: decode the reply: %w", opName, h.Addr, err)
	}
	if e := out.Error; e != nil {
		if code := fault.Code(e.Code); code == fault.Internal || e.Code == "" || fault.IsWhatsApp(code) {
			c.node.log.Warn("a forwarded operation failed on the process holding the session (its log has the cause)",
				"session_id", sessionID, "op", opName, "holder", h.Node, "code", e.Code, "request_id", requestid.From(ctx))
		}
		switch e.Code {
		case codeMoved:
			return errMoved
		case string(fault.Internal), "":
			return fmt.Errorf("cluster: %s forwarded to %s failed there (see that process's log)", opName, h.Addr)
		}
		return &fault.Error{Code: fault.Code(e.Code), Field: e.Field, Message: e.Message}
	}
	if res == nil || len(out.Result) == 0 {
		return nil
	}
	if err := json.Unmarshal(out.Result, res); err != nil {
		return fmt.Errorf("cluster: %s forwarded to %s: decode the result: %w", opName, h.Addr, err)
	}
	return nil
}

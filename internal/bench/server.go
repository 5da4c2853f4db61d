package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"time"
)

// wagraphServer is a running `wagraph serve --sandbox` with one session and
// one webhook, as its clients reach it.
type wagraphServer struct {
	*child
	base    string // http://host:port
	token   string
	session string
	http    *http.Client
}

// startWagraph starts the built wagraph as a server on a loopback port of
// its choosing, in e's directory, and waits until it is ready. network is
// "--sandbox" (the simulated network inside the server) or
// "--sandbox-network", <control address> (a network process, see
// startNetwork); extra are further flags. The rate limit is lifted out of
// the way: the load program measures the request path, not the limiter's
// refusals. On PostgreSQL (e.dbURL) its storage is the goal's database.
func startWagraph(e *env, network ...string) (*wagraphServer, error) {
	return startWagraphNode(e, 0, network...)
}

// startWagraphNode starts the goal's i-th server: its own data directory
// (media, the sandbox files), log and node id; on PostgreSQL every server
// of the goal shares its database, and so forms a cluster with the others.
func startWagraphNode(e *env, i int, network ...string) (*wagraphServer, error) {
	suffix := ""
	if i > 0 {
		suffix = fmt.Sprintf("-%d", i+1)
	}
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data-dir", filepath.Join(e.dir, "data"+suffix),
		"--admin-token", e.token, "--allow-private-urls", "--rate", "1000000/s,1000000",
		"--log-format", "json"}, network...)
	if e.dbURL != "" {
		args = append(args, "--database-url", e.dbURL, "--node-id", nodeID(i))
	}
	if e.DebugAddr != "" {
		addr, err := debugAddrOf(e.DebugAddr, i)
		if err != nil {
			return nil, err
		}
		args = append(args, "--debug-addr", addr)
	}
	c, err := startChild("wagraph"+suffix, e.Wagraph, filepath.Join(e.dir, "wagraph"+suffix+".log"), args...)
	if err != nil {
		return nil, err
	}
	s := &wagraphServer{child: c, token: e.token, http: &http.Client{Timeout: time.Minute}}
	addr, err := c.logged("wagraph listening", time.Minute)
	if err != nil {
		c.stop()
		return nil, err
	}
	s.base = "http://" + addr
	if err := s.waitFor("wagraph ready", time.Minute, s.ready); err != nil {
		c.stop()
		return nil, err
	}
	return s, nil
}

func (s *wagraphServer) ready() (bool, error) {
	res, err := s.http.Get(s.base + "/readyz")
	if err != nil {
		return false, err
	}
	b, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	res.Body.Close()
	return res.StatusCode == http.StatusOK, fmt.Errorf("readyz %d %s", res.StatusCode, b)
}

// prepare creates the session and its webhook the REST target lists, and
// returns the bytes that list answers.
func (s *wagraphServer) prepare(ctx context.Context) ([]byte, error) {
	var created struct {
		CreateSession struct{ Session struct{ ID string } }
	}
	if err := s.graphql(ctx, `mutation { createSession(name: "bench") { session { id } } }`, nil, &created); err != nil {
		return nil, fmt.Errorf("createSession: %w", err)
	}
	s.session = created.CreateSession.Session.ID
	if err := s.graphql(ctx, `mutation($id: ID!, $url: String!) {
		createWebhook(sessionId: $id, input: {url: $url, events: [INBOUND_MESSAGE_UPSERT]}) { webhook { id } } }`,
		map[string]any{"id": s.session, "url": "http://127.0.0.1:9/bench-hook"}, nil); err != nil {
		return nil, fmt.Errorf("createWebhook: %w", err)
	}
	req, err := s.restRequest(ctx)
	if err != nil {
		return nil, err
	}
	res, err := s.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET webhook list: %w", err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, fmt.Errorf("GET webhook list: %w", err)
	}
	if res.StatusCode != http.StatusOK || !bytes.Contains(body, []byte("bench-hook")) {
		return nil, fmt.Errorf("GET webhook list: HTTP %d %.300s: want 200 and the webhook", res.StatusCode, body)
	}
	return body, nil
}

func (s *wagraphServer) restURL() string {
	return s.base + "/api/v1/session/" + s.session + "/webhook"
}

func (s *wagraphServer) restRequest(ctx context.Context) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.restURL(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", s.token)
	return req, nil
}

// graphql runs one operation; a transport failure or any GraphQL error is
// an error.
func (s *wagraphServer) graphql(ctx context.Context, query string, vars map[string]any, out any) error {
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+"/graphql", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+s.token)
	res, err := s.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	if err != nil {
		return err
	}
	var r struct {
		Data   json.RawMessage `json:"data"`
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("HTTP %d, not a GraphQL answer: %.300s", res.StatusCode, raw)
	}
	if len(r.Errors) > 0 {
		msgs := make([]string, len(r.Errors))
		for i, e := range r.Errors {
			msgs[i] = e.Message
		}
		return fmt.Errorf("GraphQL errors: %s", strings.Join(msgs, "; "))
	}
	if out != nil {
		return json.Unmarshal(r.Data, out)
	}
	return nil
}

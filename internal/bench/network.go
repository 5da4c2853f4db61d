package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// network is a running `wagraph sandbox-network`: the simulated WhatsApp
// network as its own process, so that its CPU and memory are measured
// apart from the server's.
type network struct {
	*child
	control string // its control address, for --sandbox-network
}

// startNetwork starts the network process in e's directory and waits for
// the root file it writes once it serves.
func startNetwork(e *env) (*network, error) {
	dir := filepath.Join(e.dir, "network")
	c, err := startChild("network", e.Wagraph, filepath.Join(e.dir, "network.log"),
		"sandbox-network", "--addr", "127.0.0.1:0", "--control-addr", "127.0.0.1:0", "--data-dir", dir)
	if err != nil {
		return nil, err
	}
	n := &network{child: c}
	err = c.waitFor("network root file", time.Minute, func() (bool, error) {
		b, err := os.ReadFile(filepath.Join(dir, "sandbox-network.json"))
		if err != nil {
			return false, err
		}
		var rf struct{ ControlAddr string }
		if err := json.Unmarshal(b, &rf); err != nil || rf.ControlAddr == "" {
			return false, fmt.Errorf("root file %.200s: %v", b, err)
		}
		n.control = rf.ControlAddr
		return true, nil
	})
	if err != nil {
		c.stop()
		return nil, err
	}
	return n, nil
}

// serverArgs are the flags of a wagraph server using this network.
func (n *network) serverArgs() []string { return []string{"--sandbox-network", n.control} }

// linkSession creates a session named name, connects it and links it to
// the network's account phone (sandboxLinkDevice: the simulated phone
// scans the QR code), and returns its id once CONNECTED.
func (s *wagraphServer) linkSession(ctx context.Context, name, phone string) (string, error) {
	var created struct {
		CreateSession struct{ Session struct{ ID string } }
	}
	if err := s.graphql(ctx, `mutation($n: String!) { createSession(name: $n) { session { id } } }`,
		map[string]any{"n": name}, &created); err != nil {
		return "", fmt.Errorf("createSession: %w", err)
	}
	id := created.CreateSession.Session.ID
	if err := s.graphql(ctx, `mutation($id: ID!) { connectSession(id: $id) { status } }`, map[string]any{"id": id}, nil); err != nil {
		return "", fmt.Errorf("connectSession: %w", err)
	}
	if err := s.waitStatus(ctx, id, "PAIRING", time.Minute); err != nil {
		return "", err
	}
	var linked struct{ SandboxLinkDevice struct{ Status string } }
	if err := s.graphql(ctx, `mutation($id: ID!, $p: String!) { sandboxLinkDevice(sessionId: $id, phone: $p) { status } }`,
		map[string]any{"id": id, "p": phone}, &linked); err != nil {
		return "", fmt.Errorf("sandboxLinkDevice: %w", err)
	}
	if err := s.waitStatus(ctx, id, "CONNECTED", time.Minute); err != nil {
		return "", err
	}
	return id, nil
}

// waitStatus polls the session until it has status (and, for PAIRING, a
// QR code to scan).
func (s *wagraphServer) waitStatus(ctx context.Context, id, status string, limit time.Duration) error {
	return s.waitFor("session "+id+" "+status, limit, func() (bool, error) {
		var out struct {
			Session *struct {
				Status string
				QRCode *string
			}
		}
		if err := s.graphql(ctx, `query($id: ID!) { session(id: $id) { status qrCode } }`, map[string]any{"id": id}, &out); err != nil {
			return false, err
		}
		if out.Session == nil {
			return false, fmt.Errorf("no session %s", id)
		}
		ok := out.Session.Status == status && (status != "PAIRING" || out.Session.QRCode != nil)
		return ok, fmt.Errorf("status %s", out.Session.Status)
	})
}

// sendBurst asks the network to send count texts from the contact from to
// the session's account (sandboxSendBurst), each prefix followed by its
// number from 1, and returns how many it queued.
func (s *wagraphServer) sendBurst(ctx context.Context, session, from string, count int, prefix string) (int, error) {
	var out struct{ SandboxSendBurst int }
	err := s.graphql(ctx, `mutation($id: ID!, $f: String!, $n: Int!, $p: String!) { sandboxSendBurst(sessionId: $id, from: $f, count: $n, prefix: $p) }`,
		map[string]any{"id": session, "f": from, "n": count, "p": prefix}, &out)
	return out.SandboxSendBurst, err
}

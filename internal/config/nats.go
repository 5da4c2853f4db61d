package config

import (
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
)

// NATS is the event stream on NATS JetStream (integrations.md §2): off
// while URL is empty.
type NATS struct {
	// URL is one or more comma-separated broker URLs; user:password in
	// them are the credentials (a secret: never shown).
	URL string
	// Creds is a NATS credentials file (a user JWT and its NKey seed).
	Creds string
	// Stream is the JetStream stream the events go to.
	Stream string
}

// natsSchemes are the URL schemes nats.go dials.
var natsSchemes = []string{"nats", "tls", "ws", "wss"}

func parseNATSURL(c *Config, v string) string {
	c.NATS.URL = ""
	v = strings.TrimSpace(v)
	if v == "" {
		return ""
	}
	for i, raw := range strings.Split(v, ",") {
		u, err := url.Parse(strings.TrimSpace(raw))
		if err != nil || u.Host == "" || !slices.Contains(natsSchemes, u.Scheme) {
			// The URL itself is not repeated: it may hold a password.
			return fmt.Sprintf("URL %d is not nats://host:4222 (or tls://, ws://, wss://); give one or more, comma-separated", i+1)
		}
	}
	c.NATS.URL = v
	return ""
}

func parseNATSCreds(c *Config, v string) string {
	c.NATS.Creds = strings.TrimSpace(v)
	if c.NATS.Creds == "" {
		return ""
	}
	f, err := os.Open(c.NATS.Creds)
	if err != nil {
		return fmt.Sprintf("cannot read the credentials file: %v", err)
	}
	f.Close()
	return ""
}

func parseNATSStream(c *Config, v string) string {
	v = strings.TrimSpace(v)
	switch {
	case v == "":
		return "must not be empty"
	case len(v) > 255:
		return "at most 255 characters"
	case strings.ContainsAny(v, ">*. /\\\t\r\n"):
		return "a JetStream stream name has none of . * > / \\ or spaces"
	}
	c.NATS.Stream = v
	return ""
}

// checkNATS: the stream's other settings mean nothing without a broker.
func (c *Config) checkNATS(from map[string]Source) *Error {
	if c.NATS.URL == "" && c.NATS.Creds != "" {
		return &Error{Flag: "nats-creds", Env: "WAGRAPH_NATS_CREDS", Value: c.NATS.Creds,
			Problem: "credentials for the event stream need a broker: set --nats-url too, or leave this unset", From: from["nats-creds"]}
	}
	return nil
}

package webui_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/chromedp"

	"github.com/wagraph/wagraph/internal/apptest"
)

// TestDashboardMCPInABrowser: the sessions page shows how to add the MCP
// server to an agent's client, its URL and header, with a placeholder in
// place of a token (the pasted one appears nowhere on the page); with
// --mcp=false it says the server is off.
func TestDashboardMCPInABrowser(t *testing.T) {
	inABrowser(t)
	t.Parallel()
	srv := apptest.Start(t, apptest.Config(t))
	cfg := apptest.Config(t)
	cfg.MCP.Enabled = false
	off := apptest.Start(t, cfg)
	// One browser for both servers: the second's ping is its expected 404.
	b := newBrowser(t, srv.URL, time.Minute, func(e *cdplog.Entry) bool {
		return e.URL == off.URL+"/mcp" && strings.Contains(e.Text, "404")
	})
	var url, header, config, html string
	b.run(t, "the MCP card",
		chromedp.Navigate(srv.URL+"/ui/"),
		chromedp.WaitVisible("#token", chromedp.ByQuery),
		chromedp.SendKeys("#token", apptest.AdminToken, chromedp.ByQuery),
		chromedp.Click("#login-submit", chromedp.ByQuery),
		chromedp.WaitVisible("#mcp-config", chromedp.ByQuery),
		chromedp.Text("#mcp-url", &url, chromedp.ByQuery),
		chromedp.Text("#mcp-header", &header, chromedp.ByQuery),
		chromedp.Text("#mcp-config", &config, chromedp.ByQuery),
		chromedp.OuterHTML("html", &html, chromedp.ByQuery),
	)
	if url != srv.URL+"/mcp" || header != "Authorization: Bearer <token>" {
		t.Errorf("the card shows %q with %q; want %s/mcp and the header with a placeholder", url, header, srv.URL)
	}
	var c struct {
		MCPServers map[string]struct {
			Type, URL string
			Headers   map[string]string
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(config), &c); err != nil || c.MCPServers["wagraph"].URL != url || c.MCPServers["wagraph"].Headers["Authorization"] != "Bearer <token>" {
		t.Errorf("the client configuration %s (%v); want wagraph at %s with the header", config, err, url)
	}
	if strings.Contains(html, apptest.AdminToken) {
		t.Error("the page shows the pasted token")
	}
	b.report(t)

	b.mu.Lock() // the first server's requests are checked: the second's from here
	b.origin, b.requests, b.sockets = off.URL, nil, nil
	b.mu.Unlock()
	var said string
	b.run(t, "the MCP server off",
		chromedp.Navigate(off.URL+"/ui/"),
		chromedp.WaitVisible("#token", chromedp.ByQuery),
		chromedp.SendKeys("#token", apptest.AdminToken, chromedp.ByQuery),
		chromedp.Click("#login-submit", chromedp.ByQuery),
		chromedp.WaitVisible("#mcp-off", chromedp.ByQuery),
		chromedp.Text("#mcp-off", &said, chromedp.ByQuery),
	)
	if !strings.Contains(said, "--mcp=false") {
		t.Errorf("with --mcp=false the card says %q", said)
	}
	b.report(t)
}

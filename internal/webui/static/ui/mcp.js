// How to add wagraph's MCP server to an AI agent's client (Claude, Cursor,
// any MCP client over Streamable HTTP): the URL and the header. The token
// in it stays a placeholder: the page never shows a token it was not
// given to show (the one pasted stays in this tab's storage).

import { h, replace } from "./dom.js";
import { token } from "./gql.js";

// mcpCard is the card, filled once the server said whether /mcp is on
// (an MCP ping, one request of the token's rate limit; --mcp=false: 404).
export function mcpCard() {
  const url = location.origin + "/mcp";
  const body = h("div", h("p.muted", "Looking for the MCP server…"));
  const card = h("section.card#mcp", h("h2", "AI agents (MCP)"), body);
  fetch("/mcp", {
    method: "POST",
    headers: { Authorization: token.get(), "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  })
    .then((res) => {
      if (res.status === 404) {
        replace(body, h("p.muted#mcp-off", "This server's MCP server is off (--mcp=false)."));
        return;
      }
      const config = { mcpServers: { wagraph: { type: "http", url, headers: { Authorization: "Bearer <token>" } } } };
      replace(
        body,
        h("p", "Agents reach the sessions through the MCP server (Streamable HTTP) at ", h("code#mcp-url", url),
          " with the header ", h("code#mcp-header", "Authorization: Bearer <token>"), "."),
        h("p.muted", "Put a token in place of <token>: a session token (createSessionToken, or the one shown when a session is created) " +
          "limits the agent to its one session; the token's rate limit applies to each tool call."),
        h("pre.json#mcp-config", JSON.stringify(config, null, 2))
      );
    })
    .catch((e) => replace(body, h("p.error", "The MCP server did not answer: " + e.message)));
  return card;
}

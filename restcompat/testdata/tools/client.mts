// A small client of wagraph's REST API, written as a user would write one:
// types generated from the served OpenAPI document by openapi-typescript
// (./schema.d.ts), calls made with openapi-fetch. TestOpenAPITypeScriptClient
// (restcompat/openapi_client_test.go) generates the types, type-checks this
// file under `tsc --strict`, runs it against a sandbox server and checks the
// JSON it prints against the server's own records.
//
// ./config.mts is written by the test: the server's URL, a token, a linked
// session and a number to send to.
import createClient from "openapi-fetch";
import type { components, paths } from "./schema.js";
import { baseUrl, linkedSession, recipient, token } from "./config.mjs";

type Session = components["schemas"]["Session"];
type Failure = components["schemas"]["Failure"];

const client = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${token}` } });

// need ends the program on an answer that is not the expected success.
function need<T>(what: string, r: { data?: T; error?: unknown; response: Response }): T {
  if (r.data === undefined) {
    throw new Error(`${what}: HTTP ${r.response.status} ${JSON.stringify(r.error)}`);
  }
  return r.data;
}

const out: Record<string, unknown> = {};

// Sessions: create, read, list.
const created = need("create session", await client.POST("/session", { body: { name: "typescript client" } }));
const id: string = created.data.id;
out.created = { id, name: created.data.name, status: created.data.status, tokenPrefix: created.data.token.slice(0, 4) };

const read: Session = need("read session", await client.GET("/session/{sessionId}", { params: { path: { sessionId: id } } })).data;
out.read = { id: read.id, name: read.name, status: read.status, jid: read.jid, createdAt: read.createdAt };

const listed: Session[] = need("list sessions", await client.GET("/session")).data;
out.listed = listed.map((s) => s.id);

// Webhooks: create (201, with its secret), list, delete.
const path = { sessionId: id };
const hookRes = await client.POST("/session/{sessionId}/webhook", {
  params: { path },
  body: { url: "https://example.com/hooks/wa", displayName: "typescript", events: { "messages.update": true } },
});
const hook = need("create webhook", hookRes).data;
out.webhook = {
  httpStatus: hookRes.response.status,
  id: hook.id,
  secretPrefix: hook.secret.slice(0, 6),
  selected: Object.entries(hook.events).filter(([, on]) => on).map(([kind]) => kind),
};
const page = need("list webhooks", await client.GET("/session/{sessionId}/webhook", { params: { path, query: { page: 1, pageSize: 10 } } }));
out.webhooks = { total: page.total, page: page.page, ids: page.data.map((w) => w.id) };
const deleted = need("delete webhook", await client.DELETE("/session/{sessionId}/webhook/{webhookId}", { params: { path: { sessionId: id, webhookId: hook.id } } }));
out.deleted = deleted.data;

// A send through the new session, which is not connected: the typed
// failure envelope.
const refused = await client.POST("/session/{sessionId}/message/text", { params: { path }, body: { number: recipient, text: "hello" } });
if (refused.error === undefined) {
  throw new Error(`send through an unconnected session: HTTP ${refused.response.status}, not refused`);
}
const failure: Failure = refused.error;
out.refused = { httpStatus: refused.response.status, status: failure.status, message: failure.message };

// Sends through the linked session: a text, a location by coordinates, then
// the stored record of the text.
const linked = { sessionId: linkedSession };
const sent = need("send text", await client.POST("/session/{sessionId}/message/text", {
  params: { path: linked },
  body: { number: recipient, text: "hello from TypeScript" },
})).data;
const location = need("send location", await client.POST("/session/{sessionId}/message/location", {
  params: { path: linked },
  body: { number: recipient, latitude: 52.520008, longitude: 13.404954, name: "Berlin TV Tower" },
})).data;
const stored = need("read message", await client.GET("/session/{sessionId}/message/{messageId}", {
  params: { path: { sessionId: linkedSession, messageId: sent.messageId } },
})).data;
out.sent = { messageId: sent.messageId, timestamp: sent.timestamp ?? null };
out.location = { messageId: location.messageId, timestamp: location.timestamp ?? null };
out.message = { id: stored.id, chat: stored.chat, fromMe: stored.fromMe, type: stored.type, text: stored.text };

console.log(JSON.stringify(out));

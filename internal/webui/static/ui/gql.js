// The dashboard's only way to the server: the public GraphQL API, over
// HTTP for queries and mutations and over one graphql-transport-ws socket
// for subscriptions. The token travels in the Authorization header and in
// connection_init, never in a URL (it would land in access logs and the
// browser's history).

const tokenKey = "wagraph.token";

// The token lives in sessionStorage: it is gone when the tab closes, and
// other tabs and sites never see it.
export const token = {
  get: () => sessionStorage.getItem(tokenKey) || "",
  set: (t) => sessionStorage.setItem(tokenKey, t),
  clear: () => sessionStorage.removeItem(tokenKey),
};

// GraphQLError carries the first error of an answer: its message (which
// names the field and the rule) and its extensions.code.
export class GraphQLError extends Error {
  constructor(message, code, extensions) {
    super(message);
    this.code = code || "";
    this.extensions = extensions || {};
  }
}

// unauthorized is called when the server refuses the token, so the page
// can ask for another one.
let unauthorized = () => {};
export function onUnauthorized(f) {
  unauthorized = f;
}

// query sends one operation over HTTP and returns its data, or throws a
// GraphQLError.
export async function query(document, variables = {}) {
  let res;
  try {
    res = await fetch("/graphql", {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: "Bearer " + token.get() },
      body: JSON.stringify({ query: document, variables }),
      credentials: "omit",
      cache: "no-store",
    });
  } catch (e) {
    throw new GraphQLError("the server did not answer: " + e.message, "NETWORK");
  }
  let body = null;
  try {
    body = await res.json();
  } catch (e) {
    throw new GraphQLError(`the server answered ${res.status} without a GraphQL body`, "NETWORK");
  }
  const err = body.errors && body.errors[0];
  if (res.status === 401 || (err && err.extensions && err.extensions.code === "UNAUTHENTICATED")) {
    unauthorized(err ? err.message : "the token was refused");
  }
  if (err) {
    const ext = err.extensions || {};
    throw new GraphQLError(err.message, ext.code, ext);
  }
  return body.data;
}

// eventKinds reads the event kinds once per page load, from the server's
// table of them (the eventKinds query): each { kind, name, selectable },
// kind as the API's arguments take it (INBOUND_MESSAGE_UPSERT), name as
// webhooks and events.md spell it (inbound-message.upsert). The kind
// filter and the webhook form offer them, and every page names a kind by
// its name, as the person's webhooks will.
let kindsOnce = null;
export function eventKinds() {
  if (!kindsOnce) {
    kindsOnce = query(`{ eventKinds { kind name selectable } }`).then((d) => d.eventKinds);
    kindsOnce.catch(() => (kindsOnce = null)); // a failed read is tried again
  }
  return kindsOnce;
}

// kindNames is eventKinds as a map from each kind to its name.
export async function kindNames() {
  return new Map((await eventKinds()).map((k) => [k.kind, k.name]));
}

// showSessionName puts a session's name into el (left as it is when the
// session cannot be read: the page itself reports that).
export function showSessionName(id, el) {
  query(`query($id: ID!) { session(id: $id) { name } }`, { id })
    .then((d) => d.session && el.replaceChildren(document.createTextNode(d.session.name)))
    .catch(() => {});
}

// Live is the one socket of the page. Each subscription gives a function
// returning its variables, called again whenever it is sent again: after a
// reconnect the events stream asks for what came after the last event it
// showed, so nothing is lost or shown twice.
export class Live {
  constructor() {
    this.subs = new Map(); // id → {document, vars, handlers}
    this.nextId = 1;
    this.ws = null;
    this.acked = false;
    this.retry = 0;
    this.timer = 0;
    this.state = "closed";
    this.listeners = new Set();
  }

  // onState reports "connecting", "live", "reconnecting" or "closed".
  onState(f) {
    this.listeners.add(f);
    f(this.state);
    return () => this.listeners.delete(f);
  }

  setState(s) {
    this.state = s;
    for (const f of this.listeners) f(s);
  }

  // subscribe starts a subscription; handlers.next gets each data,
  // handlers.error a GraphQLError (the subscription is then over),
  // handlers.complete the server's end of it. It returns the function
  // that stops it.
  subscribe(document, vars, handlers) {
    const id = String(this.nextId++);
    this.subs.set(id, { document, vars, handlers });
    if (this.acked) this.send(id);
    else this.open();
    return () => {
      if (!this.subs.delete(id)) return;
      if (this.acked) this.ws.send(JSON.stringify({ id, type: "complete" }));
      if (this.subs.size === 0) this.close();
    };
  }

  // changes calls changed, at most every 250 ms, while the session's events
  // of kinds come (a page redrawing what they touch), and failed with the
  // error that ends them; it returns the function that stops it.
  changes(sessionId, kinds, changed, failed) {
    let timer = 0;
    const stop = this.subscribe(
      `subscription($id: ID!, $kinds: [EventKind!]) { events(sessionId: $id, kinds: $kinds) { id kind } }`,
      () => ({ id: sessionId, kinds }),
      {
        next: () => {
          if (timer) return;
          timer = setTimeout(() => {
            timer = 0;
            changed();
          }, 250);
        },
        error: failed,
      }
    );
    return () => {
      clearTimeout(timer);
      stop();
    };
  }

  send(id) {
    const s = this.subs.get(id);
    this.ws.send(JSON.stringify({ id, type: "subscribe", payload: { query: s.document, variables: s.vars() } }));
  }

  open() {
    if (this.ws || this.timer) return;
    this.setState(this.retry ? "reconnecting" : "connecting");
    const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/graphql";
    const ws = new WebSocket(url, "graphql-transport-ws");
    this.ws = ws;
    ws.onopen = () => ws.send(JSON.stringify({ type: "connection_init", payload: { Authorization: "Bearer " + token.get() } }));
    ws.onmessage = (m) => this.receive(ws, m);
    ws.onclose = (e) => this.closed(ws, e);
  }

  receive(ws, m) {
    let msg;
    try {
      msg = JSON.parse(m.data);
    } catch (e) {
      return;
    }
    const s = msg.id && this.subs.get(msg.id);
    switch (msg.type) {
      case "connection_ack":
        this.acked = true;
        this.retry = 0;
        this.setState("live");
        for (const id of this.subs.keys()) this.send(id);
        break;
      case "ping":
        ws.send(JSON.stringify({ type: "pong" }));
        break;
      case "next":
        if (!s) break;
        if (msg.payload.errors && msg.payload.errors.length) {
          this.subs.delete(msg.id);
          const e = msg.payload.errors[0];
          s.handlers.error(new GraphQLError(e.message, (e.extensions || {}).code, e.extensions));
        } else if (msg.payload.data) {
          s.handlers.next(msg.payload.data);
        }
        break;
      case "error": {
        if (!s) break;
        this.subs.delete(msg.id);
        const e = (msg.payload && msg.payload[0]) || { message: "subscription refused" };
        s.handlers.error(new GraphQLError(e.message, (e.extensions || {}).code, e.extensions));
        break;
      }
      case "complete":
        if (!s) break;
        this.subs.delete(msg.id);
        if (s.handlers.complete) s.handlers.complete();
        break;
    }
  }

  closed(ws, e) {
    if (ws !== this.ws) return;
    this.ws = null;
    this.acked = false;
    if (e.code === 4403) {
      // Forbidden: the token is wrong or was revoked.
      this.setState("closed");
      unauthorized(e.reason || "the live connection refused the token");
      return;
    }
    if (this.subs.size === 0) {
      this.setState("closed");
      return;
    }
    // Back off: 1 s, 2 s, 4 s … up to 15 s between attempts.
    const delay = Math.min(15000, 1000 * 2 ** this.retry);
    this.retry++;
    this.setState("reconnecting");
    this.timer = setTimeout(() => {
      this.timer = 0;
      this.open();
    }, delay);
  }

  // close ends every subscription and the socket.
  close() {
    this.subs.clear();
    clearTimeout(this.timer);
    this.timer = 0;
    if (this.ws) {
      const ws = this.ws;
      this.ws = null;
      this.acked = false;
      closeWhenOpen(ws, 1000, "page left");
    }
    this.retry = 0;
    this.setState("closed");
  }

  // drop closes the socket as a network failure would (for the page's
  // "reconnect" button): the subscriptions stay and are sent again.
  drop() {
    if (this.ws) closeWhenOpen(this.ws, 4000, "reconnect asked");
  }
}

// closeWhenOpen closes a socket, or, while it is still connecting, as
// soon as it opens: the browser reports a socket closed before it was
// established as a failed connection (a page left quickly, on a slow
// server, is no failure).
function closeWhenOpen(ws, code, reason) {
  if (ws.readyState === WebSocket.CONNECTING) {
    ws.onopen = () => ws.close(code, reason);
    return;
  }
  ws.close(code, reason);
}

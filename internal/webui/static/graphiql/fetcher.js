// wagraph's fetcher for GraphiQL: queries and mutations over HTTP (GraphiQL's
// own fetcher), subscriptions over graphql-transport-ws, one socket per
// subscription, with the Authorization header of the Headers tab sent in
// connection_init (a browser cannot set headers on a WebSocket).
(function () {
  "use strict";

  // operationType tells which kind of operation a run executes: the named
  // one, or else the first of the document. Comments and strings are left
  // out first so that a word inside them does not count.
  function operationType(query, operationName) {
    var text = String(query).replace(/"""[\s\S]*?"""|"(?:\\.|[^"\\])*"|#[^\n]*/g, " ");
    var re = /(^|[\s}])(query|mutation|subscription)\b\s*([_A-Za-z][_0-9A-Za-z]*)?/g;
    var m, first = null;
    while ((m = re.exec(text))) {
      if (!first) first = m[2];
      if (operationName && m[3] === operationName) return m[2];
    }
    return first || "query";
  }

  function authorization(headers) {
    if (!headers) return undefined;
    for (var k in headers) {
      if (k.toLowerCase() === "authorization") return headers[k];
    }
    return undefined;
  }

  // subscribe returns an observable GraphiQL streams into its result pane.
  function subscribe(wsURL, params, headers) {
    return {
      subscribe: function (observer) {
        var ws = new WebSocket(wsURL, "graphql-transport-ws");
        var done = false;
        function finish() {
          if (done) return;
          done = true;
          if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ id: "1", type: "complete" }));
          ws.close(1000);
        }
        ws.onopen = function () {
          ws.send(JSON.stringify({ type: "connection_init", payload: { Authorization: authorization(headers) } }));
        };
        ws.onmessage = function (m) {
          var msg = JSON.parse(m.data);
          if (msg.type === "connection_ack") {
            ws.send(JSON.stringify({
              id: "1", type: "subscribe",
              payload: { query: params.query, variables: params.variables, operationName: params.operationName },
            }));
          } else if (msg.type === "ping") {
            ws.send(JSON.stringify({ type: "pong" }));
          } else if (msg.type === "next") {
            observer.next(msg.payload);
          } else if (msg.type === "error") {
            observer.next({ errors: msg.payload });
            done = true;
            ws.close(1000);
            observer.complete();
          } else if (msg.type === "complete") {
            done = true;
            ws.close(1000);
            observer.complete();
          }
        };
        ws.onclose = function (e) {
          if (done) return;
          done = true;
          observer.next({ errors: [{ message: "the socket closed (" + e.code + (e.reason ? ": " + e.reason : "") + ")" }] });
          observer.complete();
        };
        return { unsubscribe: finish };
      },
    };
  }

  // wagraphFetcher is GraphiQL's fetcher for this server.
  window.wagraphFetcher = function (origin) {
    var http = GraphiQL.createFetcher({ url: new URL("/graphql", origin).toString() });
    var wsURL = new URL("/graphql", origin).toString().replace(/^http/, "ws");
    return function (params, opts) {
      // Run before a token replaced the placeholder: said here rather than
      // sent for the server to refuse.
      var auth = authorization(opts && opts.headers);
      if (typeof auth === "string" && auth.indexOf("<your token>") >= 0) {
        return Promise.resolve({
          errors: [{ message: "Put your token in the Headers tab first, in place of <your token> (see the line above the editor for where tokens come from)." }],
        });
      }
      if (operationType(params.query, params.operationName) === "subscription") {
        return subscribe(wsURL, params, opts && opts.headers);
      }
      return http(params, opts);
    };
  };
})();

// wagraph's GraphiQL, every file served by wagraph itself: it works on a
// machine without internet. Operations go to /graphql with the headers of
// the Headers tab: put your token there (subscriptions send it in
// connection_init, fetcher.js). GraphiQL keeps headers in memory only
// (shouldPersistHeaders is off), so a token is not left in the browser's
// storage.
//
// The page opens ready: the Headers tab open with an Authorization
// placeholder, an example query of wagraph's, and no schema request until
// a token is there (every request needs one: asking without would open on
// "Error fetching schema"). As soon as a token is entered the schema is
// loaded (GraphiQL introspects when its schema prop goes from null to
// undefined, and again when its fetcher changes: one fetcher per token).
(function () {
  "use strict";
  var e = React.createElement;

  var defaultHeaders = '{\n  "Authorization": "Bearer <your token>"\n}';
  var defaultQuery = [
    "# wagraph's GraphQL API. Put your token in the Headers tab below, then run",
    "# this with the run button (Ctrl-Enter). The Docs button lists every field.",
    "query Overview {",
    "  viewer {",
    "    user { name admin }",
    "    session { id name }",
    "  }",
    "  sessions {",
    "    id",
    "    name",
    "    status",
    "    phone",
    "    createdAt",
    "  }",
    "}",
    "",
  ].join("\n");

  // The shortest token there is (a WAGRAPH_ADMIN_TOKEN's minimum; wgu_ and
  // wgs_ tokens are longer): a token half typed or pasted is not sent.
  var minTokenLength = 32;

  // tokenOf returns the token of the Headers tab's text, or "" while there
  // is none (the placeholder, a partial token, headers not yet JSON).
  function tokenOf(text) {
    var headers;
    try {
      headers = JSON.parse(text || "{}");
    } catch (err) {
      return "";
    }
    if (!headers || typeof headers !== "object") return "";
    for (var k in headers) {
      if (k.toLowerCase() !== "authorization" || typeof headers[k] !== "string") continue;
      var t = headers[k].trim().replace(/^bearer\s+/i, "");
      return t.length >= minTokenLength && /^[\x21-\x7e]+$/.test(t) && t.indexOf("<") < 0 ? t : "";
    }
    return "";
  }

  function WagraphGraphiQL() {
    var state = React.useState(tokenOf(defaultHeaders));
    var token = state[0];
    var setToken = state[1];
    var timer = React.useRef(0);
    // A new fetcher per token: GraphiQL loads the schema again with it.
    var fetcher = React.useMemo(
      function () {
        return window.wagraphFetcher(window.location.href);
      },
      [token]
    );
    function onEditHeaders(text) {
      clearTimeout(timer.current);
      // Once typing pauses: not a request per key.
      timer.current = setTimeout(function () {
        setToken(tokenOf(text));
      }, 300);
    }
    return e(
      GraphiQL,
      {
        fetcher: fetcher,
        schema: token ? undefined : null,
        onEditHeaders: onEditHeaders,
        defaultQuery: defaultQuery,
        defaultHeaders: defaultHeaders,
        defaultEditorToolsVisibility: "headers",
        shouldPersistHeaders: false,
      },
      e(GraphiQL.Logo, null, "wagraph · ", e("a", { href: "/ui/" }, "dashboard"))
    );
  }

  ReactDOM.createRoot(document.getElementById("graphiql")).render(e(WagraphGraphiQL));
})();

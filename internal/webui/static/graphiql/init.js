// wagraph's GraphiQL, every file served by wagraph itself: it works on a
// machine without internet. Operations go to /graphql with the headers of
// the Headers tab: put your token there (subscriptions send it in
// connection_init, fetcher.js). GraphiQL keeps headers in memory only
// (shouldPersistHeaders is off), so a token is not left in the browser's
// storage.
(function () {
  "use strict";
  var e = React.createElement;
  var root = ReactDOM.createRoot(document.getElementById("graphiql"));
  root.render(e(GraphiQL, {
    fetcher: window.wagraphFetcher(window.location.href),
    defaultEditorToolsVisibility: true,
    shouldPersistHeaders: false,
    defaultHeaders: '{\n  "Authorization": "Bearer <your token>"\n}',
  }, e(GraphiQL.Logo, null, "wagraph · ", e("a", { href: "/ui/" }, "dashboard"))));
})();

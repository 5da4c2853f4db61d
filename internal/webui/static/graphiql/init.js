// wagraph's GraphiQL, every file served by wagraph itself: it works on a
// machine without internet. Queries and mutations go to /graphql with the
// headers of the Headers tab: put your token there. GraphiQL keeps them in
// memory only (shouldPersistHeaders is off), so a token is not left in the
// browser's storage.
(function () {
  "use strict";
  var url = new URL("/graphql", window.location.href).toString();
  var fetcher = GraphiQL.createFetcher({ url: url });
  var root = ReactDOM.createRoot(document.getElementById("graphiql"));
  root.render(React.createElement(GraphiQL, {
    fetcher: fetcher,
    defaultEditorToolsVisibility: true,
    shouldPersistHeaders: false,
    defaultHeaders: '{\n  "Authorization": "Bearer <your token>"\n}',
  }));
})();

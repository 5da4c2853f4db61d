// wagraph's REST API reference: Swagger UI rendering the document this
// server serves. Its settings keep the page to this origin: no validator
// badge (by default Swagger UI sends the document's URL to
// validator.swagger.io), no other document named in the page's URL
// (queryConfigEnabled), and "Try it out" calls this server's /api/v1 with
// the token given under Authorize.
"use strict";
window.ui = SwaggerUIBundle({
  url: "/api/v1/openapi.json",
  dom_id: "#apidocs",
  validatorUrl: null,
  queryConfigEnabled: false,
  deepLinking: true,
  docExpansion: "list",
  defaultModelsExpandDepth: 0,
  displayOperationId: true,
  presets: [SwaggerUIBundle.presets.apis],
  layout: "BaseLayout",
});

// The API reference: Swagger UI (vendored under swagger-ui/) rendering the
// gateway's own OpenAPI document. "Authorize" takes the session token
// (BearerAuth: type "Bearer <token>") and the administrator key (ApiKeyAuth);
// they are kept for this page only, not stored.
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "../openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    docExpansion: "list",
    filter: true,
    displayRequestDuration: true,
    persistAuthorization: false,
    validatorUrl: null,
  });
});

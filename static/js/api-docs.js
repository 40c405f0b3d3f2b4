// The API docs page: Swagger UI over /api/v1/schema (served from our static files).
(function () {
  "use strict";
  var root = document.getElementById("swagger-ui");
  var csrf = document.cookie.split("; ").filter(function (c) { return c.indexOf("csrftoken=") === 0; })[0];
  window.ui = SwaggerUIBundle({
    url: root.dataset.schemaUrl,
    domNode: root,
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    // Session reads need no token; a write made with a session is refused (403) unless a key is given.
    requestInterceptor: function (request) {
      if (csrf) { request.headers["X-CSRFToken"] = csrf.split("=")[1]; }
      return request;
    },
  });
})();

// The browsable API reference: Swagger UI over the platform's own schema. "Try it out" runs as
// the signed-in researcher (the session cookie), with the CSRF token a session's writes need.
(function () {
  "use strict";
  var root = document.getElementById("swagger-ui");
  window.SwaggerUIBundle({
    url: root.dataset.schemaUrl,
    dom_id: "#swagger-ui",
    presets: [window.SwaggerUIBundle.presets.apis, window.SwaggerUIStandalonePreset],
    layout: "BaseLayout",
    deepLinking: true,
    requestInterceptor: function (request) {
      request.headers["X-CSRFToken"] = root.dataset.csrfToken;
      return request;
    }
  });
})();

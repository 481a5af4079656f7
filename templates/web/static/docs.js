// The API docs page's start-up (a file, not an inline script: the page's CSP runs scripts
// from the service only). The spec's address is the page's data-spec attribute.
(function () {
  var root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.getAttribute("data-spec"), dom_id: "#swagger-ui", deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: "StandaloneLayout", validatorUrl: null
  });
})();

// The API reference: Swagger UI (served from node_modules) over the document at /api/docs.
// A file of its own because the CSP allows scripts from this site only, never inline ones.
document.addEventListener('DOMContentLoaded', () => {
  const target = document.getElementById('swagger-ui');
  if (!target || typeof window.SwaggerUIBundle !== 'function') return;
  window.SwaggerUIBundle({
    url: target.dataset.documentUrl,
    domNode: target,
    deepLinking: true,
    // tags start closed: rendering all 160 operations at once takes Swagger UI many seconds
    docExpansion: 'none',
    defaultModelsExpandDepth: 0,
    // no call to validator.swagger.io: the document is checked by the test suite
    validatorUrl: null,
  });
});

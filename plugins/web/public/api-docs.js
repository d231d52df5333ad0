// The REST API's OpenAPI document (api/openapi.json), browsable with Swagger
// UI, which svc serves from its own package (vendor/): no CDN.

window.SwaggerUIBundle({
  url: new URL('api/openapi.json', location.href).href,
  dom_id: '#viewer',
  deepLinking: true,
  // svc serves nothing else: no validator badge asking a service elsewhere.
  validatorUrl: null,
})

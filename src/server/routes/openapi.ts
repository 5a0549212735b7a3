import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Core } from '../../core.js';
import { buildOpenApi, type OpenApiDocument } from '../openapi.js';
import { authenticate } from '../route.js';
import { basePathOf } from '../web.js';

/** Where the API reference page lives (Swagger UI from the swagger-ui-dist package, served from here). */
export const REFERENCE_PREFIX = '/openapi';
const REFERENCE_FILES: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
};

function referencePage(base: string): string {
  const specUrl = `${base}/api/openapi.json`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Atrium API reference</title>
<link rel="stylesheet" href="${base}${REFERENCE_PREFIX}/swagger-ui.css">
</head>
<body>
<div id="reference"></div>
<script src="${base}${REFERENCE_PREFIX}/swagger-ui-bundle.js"></script>
<script>
// The web UI keeps its login token in localStorage: with it the page can read an admin-only
// document and "Try it out" acts as the logged-in user.
const token = localStorage.getItem('token') || '';
window.ui = SwaggerUIBundle({
  url: ${JSON.stringify(specUrl)},
  dom_id: '#reference',
  deepLinking: true,
  // Over 200 operations: the tags start folded, with a filter box over them.
  docExpansion: 'none',
  filter: true,
  requestInterceptor: (req) => { if (token && !req.headers.Authorization) req.headers.Authorization = token; return req; },
});
</script>
</body>
</html>
`;
}

/**
 * `GET /api/openapi.json`: the OpenAPI 3.1 document of every `/api` route, public unless the
 * `openapi_public` setting is off (then admins only); `GET /openapi`: the reference page.
 */
export function openApiRoutes(app: FastifyInstance, core: Core): void {
  let cached: OpenApiDocument | undefined;
  app.get(
    '/api/openapi.json',
    {
      config: {
        doc: {
          auth: 'none',
          summary: 'this OpenAPI document (admins only when the openapi_public setting is false)',
          rawResponse: { description: 'the OpenAPI 3.1 document (not wrapped in the envelope); an error envelope when refused' },
        },
      },
    },
    async (req, reply) => {
      if (!core.settings.getBool('openapi_public')) await authenticate(core, req, 'admin');
      cached ??= buildOpenApi(app.routeTable, basePathOf(core.config.site_url));
      return reply.type('application/json; charset=utf-8').send(cached);
    },
  );

  const dist = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const files = new Map<string, Buffer>();
  for (const name of Object.keys(REFERENCE_FILES)) {
    app.get(`${REFERENCE_PREFIX}/${name}`, async (_req, reply) => {
      let body = files.get(name);
      if (!body) files.set(name, (body = readFileSync(path.join(dist, name))));
      return reply.type(REFERENCE_FILES[name]!).header('Cache-Control', 'public, max-age=86400').send(body);
    });
  }
  app.get(REFERENCE_PREFIX, async (_req, reply) =>
    reply.type('text/html; charset=utf-8').send(referencePage(basePathOf(core.config.site_url))),
  );
}

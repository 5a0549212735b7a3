// The OpenAPI 3.1 document, generated from the route table (server/route-table.ts): every
// `/api` route with its input (query parameters or body, from the route's zod schema), its
// authentication, and the envelope `{code, message, data}` with the route's `data` shape.

import { z } from 'zod';
import { VERSION } from '../version.js';
import type { RegisteredRoute, RouteDoc, RouteTable } from './route-table.js';

type JsonSchema = Record<string, unknown>;

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description: string };
  servers: Array<{ url: string }>;
  paths: Record<string, Record<string, unknown>>;
  components: Record<string, unknown>;
  tags: Array<{ name: string }>;
}

const ENVELOPE_NOTE =
  'Every JSON answer is HTTP 200 with the envelope {code, message, data}: code 200 and the data below on success; ' +
  'on failure code 400 (bad input), 401 (not logged in / bad token), 403 (not allowed), 404 (not found) or 500, a message and data null.';

/** A zod schema as JSON Schema 2020-12 (OpenAPI 3.1's dialect); what cannot be said becomes `{}`. */
export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const out = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as JsonSchema;
  delete out.$schema;
  return out;
}

/** `/api/x/:id` → `/api/x/{id}` and the names of its path parameters. */
function openApiPath(url: string): { path: string; params: string[] } {
  const params: string[] = [];
  const path = url.replace(/:([A-Za-z0-9_]+)/g, (_m, name: string) => {
    params.push(name);
    return `{${name}}`;
  });
  return { path, params };
}

const operationId = (method: string, url: string) =>
  `${method.toLowerCase()}${url
    .replace(/^\/api/, '')
    .split(/[/_{}:-]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('')}`;

/** The tag of a route: `fs`, `auth`, `admin/storage`, … */
function tagOf(url: string): string {
  const parts = url.split('/').filter(Boolean).slice(1);
  if (parts[0] === 'admin' && parts[1]) return `admin/${parts[1]}`;
  return parts[0] ?? 'api';
}

function security(auth: RouteDoc['auth']): Array<Record<string, string[]>> {
  if (auth === 'none') return [];
  // 'user' routes also serve the guest account when it is enabled: the token is optional.
  if (auth === 'user') return [{ token: [] }, {}];
  return [{ token: [] }];
}

function queryParameters(schema: JsonSchema): Array<Record<string, unknown>> {
  const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(props).map(([name, s]) => ({ name, in: 'query', required: required.has(name), schema: s }));
}

function operation(method: string, route: RegisteredRoute, doc: RouteDoc, pathParams: string[]): Record<string, unknown> {
  const op: Record<string, unknown> = {
    operationId: operationId(method, route.url),
    tags: [tagOf(route.url)],
    ...(doc.summary ? { summary: doc.summary } : {}),
    security: security(doc.auth),
  };
  const parameters: Array<Record<string, unknown>> = pathParams.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
  for (const [name, description] of Object.entries(doc.headers ?? {})) {
    parameters.push({ name, in: 'header', required: false, description, schema: { type: 'string' } });
  }
  if (doc.input) {
    const input = jsonSchemaOf(doc.input, 'input');
    const from = doc.from ?? 'body';
    if (from === 'query' || (from === 'any' && method === 'GET')) {
      parameters.push(...queryParameters(input));
    } else {
      op.requestBody = {
        required: true,
        content: { 'application/json': { schema: input }, 'application/x-www-form-urlencoded': { schema: input } },
      };
    }
  }
  if (doc.body === 'binary') {
    op.requestBody = { required: true, content: { 'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } } };
  } else if (doc.body === 'multipart') {
    op.requestBody = {
      required: true,
      content: {
        'multipart/form-data': {
          schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', contentMediaType: 'application/octet-stream' } } },
        },
      },
    };
  }
  if (parameters.length > 0) op.parameters = parameters;
  op.responses = doc.rawResponse
    ? { '200': { description: doc.rawResponse.description, content: { 'application/json': { schema: { type: 'object' } } } } }
    : {
        '200': {
          description: ENVELOPE_NOTE,
          content: {
            'application/json': {
              schema: {
                anyOf: [
                  {
                    type: 'object',
                    required: ['code', 'message', 'data'],
                    properties: {
                      code: { const: 200 },
                      message: { type: 'string' },
                      data: doc.output ? jsonSchemaOf(doc.output, 'output') : {},
                    },
                  },
                  { $ref: '#/components/schemas/ErrorEnvelope' },
                ],
              },
            },
          },
        },
      };
  return op;
}

/**
 * The document for the routes of `table` that are under `/api`. Routes without documentation
 * are left out (a test holds every registered `/api` route documented).
 */
export function buildOpenApi(table: RouteTable, basePath = ''): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  const tags = new Set<string>();
  for (const route of table.api()) {
    if (!route.doc) continue;
    const { path, params } = openApiPath(route.url);
    const item = (paths[path] ??= {});
    const method = route.method.toLowerCase();
    if (item[method]) continue;
    item[method] = operation(route.method, route, route.doc, params);
    tags.add(tagOf(route.url));
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Atrium API',
      version: VERSION.atrium,
      description: `The HTTP JSON API of Atrium, wire-compatible with AList v3 / OpenList v4 (API ${VERSION.apiVersion}). ${ENVELOPE_NOTE} Log in with POST /api/auth/login and send the token as the Authorization header (no "Bearer" prefix).`,
    },
    servers: [{ url: basePath || '/' }],
    tags: [...tags].sort().map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: { token: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'the token from /api/auth/login, or the admin token setting' } },
      schemas: {
        ErrorEnvelope: {
          type: 'object',
          required: ['code', 'message', 'data'],
          properties: { code: { type: 'integer', not: { const: 200 } }, message: { type: 'string' }, data: {} },
        },
      },
    },
  };
}

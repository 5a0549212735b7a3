import type { FastifyInstance, HTTPMethods } from 'fastify';
import type { z } from 'zod';

/** Who may call a route: anyone, a logged-in user (or guest), an admin. */
export type AuthLevel = 'none' | 'user' | 'admin';

/**
 * Where the input comes from: `query`; `body` (JSON or form); `any` = the query for GET and
 * the body otherwise, as the original's routes registered for any method.
 */
export type InputSource = 'query' | 'body' | 'any';

/**
 * What the OpenAPI document says about a route. JSON routes (`apiRoute`) get it from their
 * definition; a route that reads its body itself (uploads) or answers something other than
 * the envelope (the OpenAPI document itself) passes one in its Fastify `config.doc`.
 */
export interface RouteDoc {
  auth: AuthLevel;
  summary?: string;
  input?: z.ZodType;
  from?: InputSource;
  /** The success envelope's `data`; absent = not described (any JSON value). */
  output?: z.ZodType;
  /** A body that is not JSON: the raw bytes, or a multipart form with a `file` part. */
  body?: 'binary' | 'multipart';
  /** Request headers the route reads, name → description. */
  headers?: Record<string, string>;
  /** The answer is this JSON schema itself, not wrapped in the envelope. */
  rawResponse?: { description: string };
}

export interface RegisteredRoute {
  method: string;
  url: string;
  doc?: RouteDoc;
}

/** Every route the app registers, in order, with its documentation when it has one. */
export class RouteTable {
  readonly routes: RegisteredRoute[] = [];

  /** The `/api` routes (HEAD routes Fastify adds for GET are left out). */
  api(): RegisteredRoute[] {
    return this.routes.filter((r) => (r.url === '/api' || r.url.startsWith('/api/')) && r.method !== 'HEAD');
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    routeTable: RouteTable;
  }
  interface FastifyContextConfig {
    doc?: RouteDoc;
  }
}

/** Starts recording routes; call before any route is registered (child scopes inherit the hook). */
export function recordRoutes(app: FastifyInstance): RouteTable {
  const table = new RouteTable();
  app.decorate('routeTable', table);
  app.addHook('onRoute', (opts) => {
    const methods = (Array.isArray(opts.method) ? opts.method : [opts.method]) as HTTPMethods[];
    const doc = (opts.config as { doc?: RouteDoc } | undefined)?.doc;
    for (const method of methods) table.routes.push({ method: String(method).toUpperCase(), url: opts.url, doc });
  });
  return table;
}

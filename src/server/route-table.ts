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

/** A `oneOf` segment in a route's URL: `:name(value|value|…)`. */
const ONE_OF = /:(\w+)\(([\w-]+(?:\|[\w-]+)*)\)/;

/**
 * A path segment that is exactly one of `values`, its value in `req.params[name]`. One route in
 * the router stands for one route per value (fewer routes to build at start-up), and the route
 * table lists one route per value, so the documents (OpenAPI, docs/routes.md) and the answers
 * are those of the separate routes: another value is not found, as it was.
 */
export function oneOf(name: string, values: readonly string[]): string {
  const bad = values.find((v) => !/^[\w-]+$/.test(v));
  if (bad !== undefined || values.length === 0) throw new Error(`oneOf(${name}): values must be words, got "${bad ?? ''}"`);
  return `:${name}(${values.join('|')})`;
}

/** The URLs a route pattern answers for each value of its `oneOf` segments (the URL itself when it has none). */
export function expandOneOf(url: string): string[] {
  const m = ONE_OF.exec(url);
  if (!m) return [url];
  const [whole, , values] = m;
  return values!.split('|').flatMap((v) => expandOneOf(url.slice(0, m.index) + v + url.slice(m.index + whole.length)));
}

/** The URL of the route that answered, with its `oneOf` segments filled from the request's params (metrics label). */
export function concreteUrl(url: string, params: unknown): string {
  if (!url.includes('(')) return url;
  const p = (params ?? {}) as Record<string, unknown>;
  return url.replace(new RegExp(ONE_OF.source, 'g'), (whole, name: string) => (typeof p[name] === 'string' ? (p[name] as string) : whole));
}

/** Every route the app registers, in order, with its documentation when it has one. */
export class RouteTable {
  readonly routes: RegisteredRoute[] = [];
  /** `METHOD url` of each URL a `oneOf` route answers (Fastify's hasRoute compares patterns). */
  private readonly enumerated = new Set<string>();

  add(method: string, url: string, doc: RouteDoc | undefined): void {
    const urls = expandOneOf(url);
    for (const u of urls) {
      this.routes.push({ method, url: u, doc });
      if (u !== url) this.enumerated.add(`${method} ${u}`);
    }
  }

  /** True when a route with a `oneOf` segment answers exactly `url`. */
  answersEnumerated(method: string, url: string): boolean {
    return this.enumerated.has(`${method} ${url}`);
  }

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
    for (const method of methods) table.add(String(method).toUpperCase(), opts.url, doc);
  });
  return table;
}

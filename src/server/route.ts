import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import type { z } from 'zod';
import type { Principal } from '../auth/accounts.js';
import { isAdmin } from '../auth/permissions.js';
import type { Core } from '../core.js';
import { type ApiCodes, Forbidden } from '../errors.js';
import { ok } from './envelope.js';
import type { AuthLevel, InputSource } from './route-table.js';
import { parseInput } from './validation.js';
import { TimeSlices } from '../util/slices.js';

export type { AuthLevel, InputSource } from './route-table.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
}

/**
 * Already-serialised JSON a handler returns as `data` (large listings are assembled as text),
 * whole or as pieces sent as they are made (a tree of 100 000 archive entries never exists as
 * one string).
 */
export class RawJson {
  constructor(readonly text: string | Iterable<string> | AsyncIterable<string>) {}
}

export interface RouteContext<I> {
  input: I;
  principal: Principal;
  req: FastifyRequest;
  reply: FastifyReply;
}

export interface ApiRoute<S extends z.ZodType> {
  method: HTTPMethods | HTTPMethods[];
  url: string;
  auth: AuthLevel;
  input?: S;
  from?: InputSource;
  /** The shape of the success envelope's `data`, for the OpenAPI document (server/openapi.ts). */
  output?: z.ZodType;
  /** Request headers the route reads, name → description (for the OpenAPI document). */
  headers?: Record<string, string>;
  /** A larger request body than the app's JSON limit (a base64 file in a field). */
  bodyLimit?: number;
  /** The envelope codes OpenList's wire gives this route's cases where they differ from their kind's (server/api-codes.ts). */
  codes?: ApiCodes;
  handler(ctx: RouteContext<z.infer<S>>): Promise<unknown> | unknown;
}

const ENVELOPE_HEAD = '{"code":200,"message":"success","data":';

/** Pieces made as they are asked for (an archive's tree), with a turn of the event loop between time slices. */
async function* paced(pieces: Iterable<string>): AsyncGenerator<string> {
  const slices = new TimeSlices();
  for (const p of pieces) {
    yield p;
    await slices.maybePause();
  }
}

/**
 * The success envelope around `data` pieces, joined into chunks of about 64 KiB, each encoded
 * here (where the producer pauses between time slices, so no request holds the event loop for
 * long: server/listing-render.ts), so the socket's write has no long string to convert at once.
 */
async function* envelopedSlices(pieces: AsyncIterable<string>): AsyncGenerator<Buffer> {
  let buf = ENVELOPE_HEAD;
  for await (const p of pieces) {
    buf += p;
    if (buf.length >= 65_536) {
      yield Buffer.from(buf);
      buf = '';
    }
  }
  yield Buffer.from(`${buf}}`);
}

export const ANY: HTTPMethods[] = ['GET', 'POST'];
export const MSG_NOT_ADMIN = 'You are not an admin';

/** Resolves the caller; used by JSON routes and by /d, /p. */
export async function authenticate(core: Core, req: FastifyRequest, level: AuthLevel): Promise<Principal | undefined> {
  if (level === 'none') return undefined;
  const principal = await core.accounts.resolve(req.headers.authorization);
  if (level === 'admin' && !isAdmin(principal.user)) throw new Forbidden(MSG_NOT_ADMIN);
  req.principal = principal;
  return principal;
}

function rawInput(req: FastifyRequest, from: InputSource): unknown {
  if (from === 'query' || (from === 'any' && req.method === 'GET')) return req.query;
  return req.body && typeof req.body === 'object' ? req.body : {};
}

/**
 * Registers a JSON API route: authenticate, validate, call the handler, wrap its value in
 * the success envelope. Errors travel to the app's error handler (server/envelope.ts).
 */
export function apiRoute<S extends z.ZodType>(app: FastifyInstance, core: Core, def: ApiRoute<S>): void {
  app.route({
    method: def.method,
    url: def.url,
    ...(def.bodyLimit ? { bodyLimit: def.bodyLimit } : {}),
    config: { doc: { auth: def.auth, input: def.input, from: def.from ?? 'body', output: def.output, headers: def.headers }, ...(def.codes ? { apiCodes: def.codes } : {}) },
    handler: async (req, reply) => {
      const principal = await authenticate(core, req, def.auth);
      const input = def.input ? parseInput(def.input, rawInput(req, def.from ?? 'body')) : (undefined as z.infer<S>);
      const data = await def.handler({ input, principal: principal as Principal, req, reply });
      if (reply.sent) return reply;
      reply.type('application/json; charset=utf-8');
      if (data instanceof RawJson) {
        const { text } = data;
        if (typeof text === 'string') return reply.send(`${ENVELOPE_HEAD}${text}}`);
        const pieces = Symbol.asyncIterator in text ? text : paced(text);
        return reply.send(Readable.from(envelopedSlices(pieces), { objectMode: false }));
      }
      return reply.send(ok(data ?? null));
    },
  });
}

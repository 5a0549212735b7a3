// One WebDAV request's context (the caller, its view, the target path, the locks as they are
// now) and what every method handler needs of it: hrefs, lookups, the If header and lock checks.
import path from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Core } from '../../core.js';
import type { Obj } from '../../drivers/types.js';
import { encodePath } from '../../util/encode-path.js';
import { cleanPath } from '../../util/paths.js';
import type { View } from '../../view/view.js';
import type { Caller } from './auth.js';
import { DavError } from './errors.js';
import { evaluateIf, type IfList, parseIfHeader, submittedTokens } from './if-header.js';
import type { LockSet } from './locks.js';
import { type DeadProps, davEtag, type PropfindRenderers } from './props.js';

export const DAV_PREFIX = '/dav';
const MAX_XML_BODY = 1024 * 1024;

/** What outlives a request: dead properties, rendered PROPFIND entries (locks are in core.locks, fs/locks.ts). */
export interface DavState {
  dead: DeadProps;
  renderers: PropfindRenderers;
}

/** The request's path below /dav, decoded; undefined when the URL is not under /dav. */
export function davPath(url: string): string | undefined {
  let p = url.split('?')[0]!;
  if (/^https?:\/\//i.test(p)) p = new URL(p).pathname;
  if (p !== DAV_PREFIX && !p.startsWith(`${DAV_PREFIX}/`)) return undefined;
  const rest = p.slice(DAV_PREFIX.length);
  try {
    return cleanPath(decodeURIComponent(rest));
  } catch {
    throw new DavError(400, 'malformed percent-encoding in the path');
  }
}

export async function readBody(req: FastifyRequest): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req.raw) {
    size += chunk.length;
    if (size > MAX_XML_BODY) throw new DavError(413, 'request body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** One WebDAV request: the caller, its target path, and what the method handlers share. */
export class DavRequest {
  private readonly ifLists: IfList[] | undefined;
  readonly dead: DeadProps;
  readonly renderers: PropfindRenderers;

  constructor(
    readonly core: Core,
    readonly view: View,
    state: DavState,
    readonly locks: LockSet,
    readonly req: FastifyRequest,
    readonly reply: FastifyReply,
    readonly caller: Caller,
    readonly target: string,
  ) {
    ({ dead: this.dead, renderers: this.renderers } = state);
    const header = req.headers.if;
    this.ifLists = typeof header === 'string' && header.trim() !== '' ? parseIfHeader(header) : undefined;
  }

  get user() {
    return this.caller.user;
  }

  /** The href of a virtual path as this user sees it (below their base path). */
  href(p: string, isDir: boolean): string {
    const base = cleanPath(this.user.basePath);
    const rel = base === '/' ? p : p.slice(base.length) || '/';
    const encoded = `${DAV_PREFIX}${encodePath(rel)}`;
    return isDir && !encoded.endsWith('/') ? `${encoded}/` : encoded;
  }

  /** The object at a path, or undefined when there is none or it is hidden; a missing folder password is 403. */
  stat(p: string): Promise<Obj | undefined> {
    return this.view.find(p);
  }

  async mustStat(p: string): Promise<Obj> {
    const obj = await this.stat(p);
    if (!obj) throw new DavError(404, 'Not Found');
    return obj;
  }

  /**
   * RFC 4918 §10.4 and §7: the If header must hold (else 412), and every lock covering what the
   * request changes must have its token submitted (else 423).
   */
  async checkLocks(paths: Array<{ p: string; deep: boolean }>): Promise<void> {
    if (this.ifLists) {
      const ok = await evaluateIf(this.ifLists, async (resource) => {
        const p = resource === undefined ? this.target : this.pathOfUrl(resource);
        const obj = p === undefined ? undefined : await this.stat(p).catch(() => undefined);
        return { tokens: new Set(p === undefined ? [] : this.locks.covering(p).map((l) => l.token)), etag: obj && !obj.isDir ? davEtag(obj) : undefined };
      });
      if (!ok) throw new DavError(412, 'Precondition Failed');
    }
    const tokens = this.ownTokens();
    for (const { p, deep } of paths) {
      if (this.locks.blocking(p, tokens, deep).length > 0) throw new DavError(423, 'Locked');
    }
  }

  /** The lock tokens the If header submits that belong to this user's locks (another's token unlocks nothing). */
  ownTokens(): Set<string> {
    const tokens = this.ifLists ? submittedTokens(this.ifLists) : new Set<string>();
    return new Set([...tokens].filter((t) => this.locks.get(t)?.userId === this.user.id));
  }

  /** A URL or path naming a resource of this server, as a virtual path of this user. */
  pathOfUrl(url: string): string | undefined {
    let u: URL;
    try {
      u = new URL(url, `http://${this.req.headers.host ?? 'localhost'}`);
    } catch {
      return undefined;
    }
    const rel = davPath(u.pathname);
    return rel === undefined ? undefined : this.view.virtual(rel);
  }

  /** True when a Destination's host is this server as the client (or a reverse proxy) named it. */
  servesHost(host: string): boolean {
    const names = [this.req.headers.host, this.req.headers['x-forwarded-host']].flatMap((h) => (typeof h === 'string' ? h.split(',') : []));
    return names.some((n) => {
      try {
        return new URL(`http://${n.trim()}`).host === host;
      } catch {
        return false;
      }
    });
  }

  parent(p: string) {
    return path.posix.dirname(p);
  }
}

import path from 'node:path';
import { mimeTypes } from '../../util/mime.js';
import type { Obj } from '../../drivers/types.js';
import type { Lock } from './locks.js';
import { DAV, escapeXml, propElement, propKey, splitKey } from './xml.js';
import type { DavQuota } from './quota.js';

const OWNCLOUD = 'http://owncloud.org/ns';

/** `"<mtime in ns, hex><size, hex>"`, the original's default ETag. */
export function davEtag(obj: Obj): string {
  const ns = BigInt(obj.modified.getTime()) * 1_000_000n;
  return `"${ns.toString(16)}${obj.size.toString(16)}"`;
}

const rfc3339 = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

export function lockXml(l: Lock, href: string): string {
  const timeout = l.timeout > 0 ? `Second-${Math.max(0, Math.round((l.expires - Date.now()) / 1000))}` : 'Infinite';
  return (
    `<D:activelock><D:locktype><D:write/></D:locktype><D:lockscope><D:${l.scope}/></D:lockscope>` +
    `<D:depth>${l.depth === '0' ? '0' : 'infinity'}</D:depth>${l.owner}<D:timeout>${timeout}</D:timeout>` +
    `<D:locktoken><D:href>${escapeXml(l.token)}</D:href></D:locktoken><D:lockroot><D:href>${escapeXml(href)}</D:href></D:lockroot></D:activelock>`
  );
}

const SUPPORTED_LOCK =
  '<D:lockentry><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>' +
  '<D:lockentry><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>';

/** The properties the server computes; clients can't set them (PROPPATCH answers 403). */
export const LIVE_PROPS = new Set(
  ['resourcetype', 'displayname', 'getcontentlength', 'getlastmodified', 'creationdate', 'getcontenttype', 'getetag', 'lockdiscovery', 'supportedlock'].map((n) => propKey(DAV, n)),
);

/** RFC 4331's properties: computed only when a PROPFIND names them (never part of allprop). */
export const QUOTA_PROPS = new Set(['quota-available-bytes', 'quota-used-bytes'].map((n) => propKey(DAV, n)));

export interface Resource {
  obj: Obj;
  href: string;
  locks: Lock[];
  /** The collection's space (RFC 4331), when asked for. */
  quota?: DavQuota;
  /** Dead properties: key → serialized element. */
  dead: ReadonlyMap<string, string>;
}

const NO_PROPS: ReadonlyMap<string, string> = new Map();

/** A live property's inner XML, or undefined when the resource has no such property. */
function liveValue(key: string, r: Resource): string | undefined {
  const { obj } = r;
  switch (key) {
    case propKey(DAV, 'resourcetype'):
      return obj.isDir ? '<D:collection/>' : '';
    case propKey(DAV, 'displayname'):
      return escapeXml(obj.name);
    case propKey(DAV, 'getcontentlength'):
      return obj.isDir ? undefined : String(obj.size);
    case propKey(DAV, 'getlastmodified'):
      return obj.modified.toUTCString();
    case propKey(DAV, 'creationdate'):
      return rfc3339(obj.created ?? obj.modified);
    case propKey(DAV, 'getcontenttype'):
      return obj.isDir ? undefined : escapeXml(mimeTypes().lookup(path.posix.extname(obj.name)) || 'application/octet-stream');
    case propKey(DAV, 'getetag'):
      // Hex digits in quotes: nothing to escape, and clients compare it with the ETag header.
      return obj.isDir ? undefined : davEtag(obj);
    case propKey(DAV, 'lockdiscovery'):
      return r.locks.map((l) => lockXml(l, r.href)).join('');
    case propKey(DAV, 'supportedlock'):
      return SUPPORTED_LOCK;
    case propKey(DAV, 'quota-available-bytes'):
      return obj.isDir && r.quota ? String(r.quota.available) : undefined;
    case propKey(DAV, 'quota-used-bytes'):
      return obj.isDir && r.quota ? String(r.quota.used) : undefined;
    case propKey(OWNCLOUD, 'checksums'): {
      const md5 = obj.hash?.md5;
      return md5 ? `<X:checksum>MD5:${escapeXml(md5)}</X:checksum>` : undefined;
    }
    default:
      return undefined;
  }
}

export type PropRequest = { kind: 'allprop'; include: string[] } | { kind: 'propname' } | { kind: 'prop'; keys: string[] };

/** Renders `<D:response>` elements for one PROPFIND request (the requested keys are worked out once). */
export class PropfindRenderer {
  private readonly baseKeys: string[];
  /** Rendered responses of resources without locks or dead properties, by object (a cached listing's). */
  /** UTF-8 already: a response is then one concatenation of buffers, with no string encoding. */
  private readonly memo = new WeakMap<Obj, { href: string; dirHref?: string; xml: Buffer }>();
  readonly signature: string;

  constructor(private readonly req: PropRequest) {
    const all = [...LIVE_PROPS, propKey(OWNCLOUD, 'checksums')];
    this.baseKeys = req.kind === 'prop' ? [...new Set(req.keys)] : req.kind === 'allprop' ? [...new Set([...all, ...req.include])] : all;
    this.signature = `${req.kind}\0${this.baseKeys.join('\0')}`;
  }

  /** Whether this request names RFC 4331's quota properties (then the collection's space is worked out). */
  get wantsQuota(): boolean {
    return this.baseKeys.some((k) => QUOTA_PROPS.has(k));
  }

  render(r: Resource): Buffer {
    const plain = r.locks.length === 0 && r.dead.size === 0 && r.quota === undefined;
    if (plain) {
      const hit = this.memo.get(r.obj);
      if (hit && hit.href === r.href) return hit.xml;
    }
    const xml = Buffer.from(this.build(r));
    if (plain) this.memo.set(r.obj, { href: r.href, xml });
    return xml;
  }

  /**
   * An entry of a listed folder without locks or dead properties: the memo is checked against the
   * folder's href, so a hit costs no encoding of the name.
   */
  renderChild(obj: Obj, dirHref: string): Buffer {
    const hit = this.memo.get(obj);
    if (hit && hit.dirHref === dirHref) return hit.xml;
    const href = `${dirHref}${encodeURIComponent(obj.name)}${obj.isDir ? '/' : ''}`;
    const xml = Buffer.from(this.build({ obj, href, locks: [], dead: NO_PROPS }));
    this.memo.set(obj, { href, dirHref, xml });
    return xml;
  }

  private build(r: Resource): string {
    const found: string[] = [];
    const missing: string[] = [];
    const keys = r.dead.size === 0 || this.req.kind === 'prop' ? this.baseKeys : [...new Set([...this.baseKeys, ...r.dead.keys()])];
    for (const key of keys) {
      const dead = r.dead.get(key);
      const live = dead === undefined ? liveValue(key, r) : undefined;
      if (dead === undefined && live === undefined) {
        if (this.req.kind === 'prop') {
          const { ns, name } = splitKey(key);
          missing.push(propElement(ns, name));
        }
        continue;
      }
      if (this.req.kind === 'propname') {
        const { ns, name } = splitKey(key);
        found.push(propElement(ns, name));
      } else if (dead !== undefined) found.push(dead);
      else {
        const { ns, name } = splitKey(key);
        found.push(propElement(ns, name, live));
      }
    }
    let out = `<D:response><D:href>${escapeXml(r.href)}</D:href>`;
    if (found.length > 0) out += `<D:propstat><D:prop>${found.join('')}</D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat>`;
    if (missing.length > 0) out += `<D:propstat><D:prop>${missing.join('')}</D:prop><D:status>HTTP/1.1 404 Not Found</D:status></D:propstat>`;
    return `${out}</D:response>`;
  }
}

/** One renderer per kind of PROPFIND body, so entries of cached listings are rendered once. */
export class PropfindRenderers {
  private readonly bySignature = new Map<string, PropfindRenderer>();

  for(req: PropRequest): PropfindRenderer {
    const fresh = new PropfindRenderer(req);
    const known = this.bySignature.get(fresh.signature);
    if (known) return known;
    // Clients send a handful of distinct bodies; anything beyond is not worth keeping.
    if (this.bySignature.size >= 64) this.bySignature.clear();
    this.bySignature.set(fresh.signature, fresh);
    return fresh;
  }
}

const MULTISTATUS_OPEN = '<?xml version="1.0" encoding="UTF-8"?>\n<D:multistatus xmlns:D="DAV:">';
const MULTISTATUS_CLOSE = '</D:multistatus>';

export const multistatus = (responses: string) => `${MULTISTATUS_OPEN}${responses}${MULTISTATUS_CLOSE}`;

/** A multistatus body of rendered responses. */
export function multistatusBuffer(responses: Buffer[]): Buffer {
  return Buffer.concat([Buffer.from(MULTISTATUS_OPEN), ...responses, Buffer.from(MULTISTATUS_CLOSE)]);
}

/**
 * Dead properties set with PROPPATCH, by virtual path. Kept in memory like the original's locks:
 * enough for clients that store metadata for a session (Windows' Win32 times, Finder tags).
 */
export class DeadProps {
  private readonly byPath = new Map<string, Map<string, string>>();

  isEmpty(): boolean {
    return this.byPath.size === 0;
  }

  of(p: string): ReadonlyMap<string, string> {
    return this.byPath.get(p) ?? NO_PROPS;
  }

  set(p: string, props: Map<string, string>): void {
    if (props.size === 0) this.byPath.delete(p);
    else this.byPath.set(p, props);
  }

  private below(p: string): string[] {
    const prefix = p === '/' ? '/' : `${p}/`;
    return [...this.byPath.keys()].filter((k) => k === p || k.startsWith(prefix));
  }

  remove(p: string): void {
    for (const k of this.below(p)) this.byPath.delete(k);
  }

  copy(from: string, to: string, move: boolean): void {
    this.remove(to);
    for (const k of this.below(from)) {
      this.byPath.set(to + k.slice(from.length), new Map(this.byPath.get(k)));
      if (move) this.byPath.delete(k);
    }
  }
}

import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Core } from '../../core.js';
import { mustProxy } from '../../drivers/form.js';
import type { Link } from '../../drivers/types.js';
import { Forbidden, ServerError } from '../../errors.js';
import type { Mounted } from '../../fs/storages.js';
import { RawView } from '../../view/raw.js';
import { PrivacyMask } from '../envelope.js';
import { sendRawError } from '../raw-error.js';
import { sendFile } from '../send-file.js';
import { throttled } from '../../net/speed-limit.js';
import { encodePath } from '../urls.js';

type RawQuery = { sign?: string; type?: string; d?: string };

const extOf = (p: string) => path.posix.extname(p).slice(1).toLowerCase();
const listSetting = (core: Core, key: string) => core.settings.get(key).split(',').map((s) => s.trim()).filter(Boolean);

/** Hop-by-hop headers, never forwarded either way. */
const HOP_BY_HOP = new Set(['host', 'connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection', 'te', 'trailer', 'content-length']);
/**
 * Not asked of the upstream: fetch would decompress a compressed answer while its
 * Content-Encoding header still reached the client, so bytes are fetched as they are stored.
 */
const NOT_FORWARDED = new Set(['accept-encoding']);

/**
 * `/d/*` (raw download: redirect to the driver's link, or proxy) and `/p/*` (always proxied).
 * Their principal is the holder of a sign (view/raw.ts): the path is the full virtual path and a
 * `sign` is the only key, required when `sign_all` is on, the storage has enable_sign, or a rule
 * protects the entry (wire-api.md §8).
 */
export function rawRoutes(app: FastifyInstance, core: Core): void {
  const raw = new RawView(core);
  const handle = (proxyOnly: boolean) => async (req: FastifyRequest, reply: FastifyReply) => {
    const virtualPath = raw.virtual((req.params as { "*": string })["*"]);
    const query = req.query as RawQuery;
    await core.storages.ready();
    // The sign first, as the original's middleware: a path with no storage behind it is
    // reported (500) only to a caller holding a valid sign, or where none is needed.
    raw.requireSign(virtualPath, core.storages.resolve(virtualPath)?.storage, query.sign ?? '');
    const storage = raw.storageOf(virtualPath);

    const ext = extOf(virtualPath);
    const config = storage.factory.config;
    if (proxyOnly) {
      const canProxy =
        mustProxy(config) ||
        storage.row.web_proxy ||
        storage.row.webdav_policy === 'use_proxy_url' ||
        listSetting(core, 'proxy_types').includes(ext) ||
        listSetting(core, 'text_types').includes(ext);
      if (!canProxy) throw new Forbidden('proxy not allowed');
      const downProxy = storage.row.down_proxy_url.split('\n')[0]?.trim();
      if (downProxy && query.d === undefined) {
        return reply.redirect(`${downProxy.replace(/\/+$/, '')}${encodePath(virtualPath)}?sign=${core.signer.sign(virtualPath)}`, 302);
      }
    }
    const { link, obj } = await raw.link(virtualPath, { type: query.type, ip: req.ip, header: req.headers });
    const shouldProxy = proxyOnly || mustProxy(config) || storage.row.web_proxy || listSetting(core, 'proxy_types').includes(ext);
    if (!shouldProxy && link.url) {
      reply.header('Referrer-Policy', 'no-referrer');
      reply.header('Cache-Control', 'max-age=0, no-cache, no-store, must-revalidate');
      return reply.redirect(link.url, 302);
    }
    return proxy(core, req, reply, link, obj.name, obj.hash, storage);
  };

  const mask = new PrivacyMask(core.settings);
  for (const prefix of ['d', 'p'] as const) {
    const serve = handle(prefix === 'p');
    app.route({
      method: ['GET', 'HEAD'],
      url: `/${prefix}/*`,
      handler: async (req, reply) => {
        try {
          return await serve(req, reply);
        } catch (err) {
          return sendRawError(err, req, reply, mask);
        }
      },
    });
  }
}


/** Streams a driver's link to the client: a local file with ranges and validators, or a URL proxied. */
export async function proxy(core: Core, req: FastifyRequest, reply: FastifyReply, link: Link, name: string, hash: Record<string, string> | undefined, storage: Mounted, etag?: string) {
  if (link.file) {
    const file = link.file;
    const strongest = hash?.sha256 ?? hash?.sha1 ?? hash?.md5;
    return sendFile(req, reply, {
      name,
      size: file.size,
      modified: file.modified,
      etag: etag ?? (strongest ? `"${strongest}"` : undefined),
      contentType: link.contentType,
      // Bytes read from the storage and sent to the client pass both limits; with neither
      // set, a local file is read directly.
      open: async (start, end) => throttled(await file.open(start, end), core.speed.serverDownload, core.speed.clientDownload),
      localPath: core.speed.serverDownload.limited || core.speed.clientDownload.limited ? undefined : file.path,
    });
  }
  if (!link.url) throw new ServerError(`storage ${storage.row.mount_path} gave no way to read ${name}`);
  // A URL link: transparent proxy, forwarding the client's headers minus proxy_ignore_headers.
  const ignore = new Set(core.settings.get('proxy_ignore_headers').split(',').map((h) => h.trim().toLowerCase()));
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined || HOP_BY_HOP.has(k) || NOT_FORWARDED.has(k) || ignore.has(k)) continue;
    headers[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  const controller = new AbortController();
  req.raw.once('close', () => controller.abort());
  // Through the SSRF guard: a storage-content URL is refused (Forbidden) on private addresses.
  const upstream = await core.links.open(link, { method: req.method === 'HEAD' ? 'HEAD' : 'GET', headers, signal: controller.signal });
  reply.hijack();
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(upstream.headers)) {
    if (v !== undefined && (!HOP_BY_HOP.has(k) || k === 'content-length')) out[k] = v;
  }
  reply.raw.writeHead(upstream.statusCode ?? 502, out);
  if (req.method === 'HEAD') {
    upstream.resume();
    return reply.raw.end();
  }
  try {
    await pipeline(throttled(upstream, core.speed.serverDownload, core.speed.clientDownload), reply.raw);
  } catch {
    reply.raw.destroy();
  }
}

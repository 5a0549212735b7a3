import { pipeline } from 'node:stream/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TransferDone } from '../audit/record.js';
import type { Core } from '../core.js';
import type { Link } from '../drivers/types.js';
import { Unsupported } from '../errors.js';
import type { Mounted } from '../fs/storages.js';
import { type Throttle, throttled } from '../net/speed-limit.js';
import { sendFile } from './send-file.js';

/** Hop-by-hop headers, never forwarded either way. */
const HOP_BY_HOP = new Set(['host', 'connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection', 'te', 'trailer', 'content-length']);
/**
 * Not asked of the upstream: fetch would decompress a compressed answer while its
 * Content-Encoding header still reached the client, so bytes are fetched as they are stored.
 */
const NOT_FORWARDED = new Set(['accept-encoding']);

/** What a front knows of a transfer it proxies: the view's transfer-done and the account's download rate. */
export interface ProxiedTransfer {
  /** Called once with the bytes that went out. */
  sent: TransferDone;
  /** The principal's download rate (view/meters.ts), besides the global limits. */
  pace?: Throttle;
  /** Ends the principal's transfer (max_transfers) once the answer is over, however it went. */
  release?: () => void;
}

/**
 * Streams a driver's link to the client: a local file with ranges and validators, or a URL
 * proxied, paced by the global limits and the principal's own rate.
 */
export async function proxy(core: Core, req: FastifyRequest, reply: FastifyReply, link: Link, name: string, hash: Record<string, string> | undefined, storage: Mounted, etag?: string, transfer?: ProxiedTransfer) {
  const sent = transfer?.sent;
  if (transfer?.release) reply.raw.once('close', transfer.release);
  const paces = [core.speed.serverDownload, core.speed.clientDownload, ...(transfer?.pace ? [transfer.pace] : [])];
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
      open: async (start, end) => throttled(await file.open(start, end), ...paces),
      localPath: paces.some((t) => t.limited) ? undefined : file.path,
    }, { onSent: sent });
  }
  if (!link.url) throw new Unsupported(`storage ${storage.row.mount_path} gave no way to read ${name}`);
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
    sent?.(0);
    return reply.raw.end();
  }
  let bytes = 0;
  const body = throttled(upstream, ...paces);
  if (sent) body.on('data', (chunk: Buffer) => (bytes += chunk.length));
  try {
    await pipeline(body, reply.raw);
    sent?.(bytes);
  } catch (err) {
    reply.raw.destroy();
    // A client that went away cut the transfer (recorded with the bytes sent); anything else failed it.
    sent?.(bytes, (err as NodeJS.ErrnoException).code === 'ERR_STREAM_PREMATURE_CLOSE' ? undefined : err);
  }
}

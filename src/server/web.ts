// The web UI: hashed assets under /assets with long-lived caching, and index.html (with the
// base path, CDN and site settings injected at serve time) for every other GET that no route
// claims — `/`, `/@login`, `/@manage/...` and any folder or file path (wire-api.md §18) — from
// clients that accept HTML.

import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import mime from 'mime-types';
import type { Core } from '../core.js';

/** Paths owned by the server, never answered with index.html. */
const SERVER_PREFIXES = ['/api', '/d', '/p', '/dav', '/ping', '/assets', '/images', '/favicon.ico', '/robots.txt'];
const IMMUTABLE = 'public, max-age=31536000, immutable';
const COMPRESSIBLE = /\.(js|mjs|css|html|svg|json|map|txt)$/;

/** The built UI: `dist_dir` from the config, else `dist/web` next to the bundle or the sources. */
export function webRoot(distDir: string): string | undefined {
  const candidates = distDir
    ? [path.resolve(distDir)]
    : [fileURLToPath(new URL('./web', import.meta.url)), fileURLToPath(new URL('../../dist/web', import.meta.url))];
  return candidates.find((dir) => existsSync(path.join(dir, 'index.html')));
}

/** The site's base path from `site_url` ('' or '/sub', no trailing slash). */
export function basePathOf(siteUrl: string): string {
  let p = siteUrl;
  if (/^https?:\/\//i.test(p)) p = new URL(p).pathname;
  p = p.replace(/\/+$/, '');
  return p && !p.startsWith('/') ? `/${p}` : p;
}

const jsString = (s: string) => JSON.stringify(s).replace(/</g, '\\u003c');
const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** index.html as served: placeholders replaced (asset URLs, injected config, title, customisations). */
export function renderIndex(template: string, core: Core, manage: boolean): string {
  const base = basePathOf(core.config.site_url);
  const cdn = core.config.cdn.replace(/\/+$/, '');
  const assetBase = `${cdn || base}/`;
  const s = core.settings;
  let html = template
    .replace(/(src|href)="\/assets\//g, `$1="${assetBase}assets/`)
    .replace('base_path: undefined', `base_path: ${jsString(base)}`)
    .replace('cdn: undefined', `cdn: ${jsString(cdn)}`)
    .replace('asset_base: undefined', `asset_base: ${jsString(assetBase)}`)
    .replace('main_color: undefined', `main_color: ${jsString(s.get('main_color'))}`)
    .replace('<title>Loading...</title>', `<title>${escapeHtml(s.get('site_title') || 'Atrium')}</title>`)
    .replace('href="/favicon.ico"', `href="${escapeHtml(s.get('favicon') || `${base}/favicon.ico`)}"`);
  // Custom head/body come from the admin; the manage pages stay free of them so a broken
  // customisation can always be undone.
  html = html
    .replace('<!-- customize head -->', manage ? '' : s.get('customize_head'))
    .replace('<!-- customize body -->', manage ? '' : s.get('customize_body'));
  return html;
}

interface Asset {
  body: Buffer;
  gzip?: Buffer;
  etag: string;
  type: string;
}

export function webRoutes(app: FastifyInstance, core: Core): void {
  const root = webRoot(core.config.dist_dir);
  const assets = new Map<string, Asset>();
  let template: string | undefined;
  const indexTemplate = () => (template ??= root ? readFileSync(path.join(root, 'index.html'), 'utf8') : undefined);

  app.get('/assets/*', async (req, reply) => {
    const rel = (req.params as { '*': string })['*'];
    if (!root || !/^[\w.-]+(\/[\w.-]+)*$/.test(rel) || rel.split('/').includes('..')) return reply.callNotFound();
    let asset = assets.get(rel);
    if (!asset) {
      const body = await readFile(path.join(root, 'assets', rel)).catch(() => undefined);
      if (!body) return reply.callNotFound();
      asset = {
        body,
        gzip: COMPRESSIBLE.test(rel) && body.length > 512 ? gzipSync(body, { level: 9 }) : undefined,
        etag: `"${createHash('sha1').update(body).digest('base64url').slice(0, 20)}"`,
        type: mime.contentType(path.extname(rel)) || 'application/octet-stream',
      };
      assets.set(rel, asset);
    }
    return sendAsset(req, reply, asset);
  });

  app.get('/*', async (req, reply) => {
    const urlPath = req.url.split('?')[0]!;
    if (isServerPath(urlPath) || !wantsHtml(req)) return reply.callNotFound();
    const tpl = indexTemplate();
    if (!tpl) {
      return reply.code(503).type('text/plain; charset=utf-8').send('The web UI is not built: run `npm run build:web` (or set dist_dir).');
    }
    const base = basePathOf(core.config.site_url);
    const inApp = base && urlPath.startsWith(base) ? urlPath.slice(base.length) : urlPath;
    return reply
      .type('text/html; charset=utf-8')
      .header('Cache-Control', 'no-cache')
      .send(renderIndex(tpl, core, inApp.startsWith('/@manage')));
  });
}

/** The app shell is for clients that take HTML: browsers ask for text/html, curl and fetch for any type. */
function wantsHtml(req: FastifyRequest): boolean {
  const accept = req.headers.accept;
  return !!accept && /text\/html|\*\/\*/.test(accept);
}

function isServerPath(urlPath: string): boolean {
  return SERVER_PREFIXES.some((p) => urlPath === p || urlPath.startsWith(`${p}/`));
}

function sendAsset(req: FastifyRequest, reply: FastifyReply, a: Asset): FastifyReply {
  reply.header('Cache-Control', IMMUTABLE).header('ETag', a.etag).header('Vary', 'Accept-Encoding').type(a.type);
  if (req.headers['if-none-match'] === a.etag) return reply.code(304).send();
  if (a.gzip && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) {
    return reply.header('Content-Encoding', 'gzip').send(a.gzip);
  }
  return reply.send(a.body);
}

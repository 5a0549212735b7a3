// The web UI: hashed assets under /assets with long-lived caching, and index.html (with the
// base path, CDN and site settings injected at serve time) for every other GET that no route
// claims — `/`, `/@login`, `/@manage/...` and any folder or file path (wire-api.md §18) — from
// clients that accept HTML.

import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { mimeTypes } from '../util/mime.js';
import type { Core } from '../core.js';

/** Paths owned by the server, never answered with index.html. */
const SERVER_PREFIXES = ['/api', '/d', '/p', '/dav', '/ping', '/assets', '/images', '/streamer', '/static', '/manifest.json', '/favicon.ico', '/robots.txt', '/openapi'];
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
    .replace('href="/favicon.ico"', `href="${escapeHtml(s.get('favicon') || `${base}/favicon.ico`)}"`)
    // OpenList's front end: its default icon URLs and its manifest link
    .replace('href="/manifest.json"', `href="${base}/manifest.json"`)
    .replaceAll('https://res.oplist.org/logo/logo.svg', escapeHtml(s.get('favicon') || `${base}/favicon.ico`))
    .replaceAll('https://res.oplist.org/logo/logo.png', escapeHtml(s.get('logo').split('\n')[0] || `${base}/images/logo.svg`));
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
  cacheControl: string;
}

/** The front end's folders served as files (OpenList's layout; Atrium's own UI has only assets/). */
const STATIC_FOLDERS = ['assets', 'images', 'streamer', 'static'];
/** Larger files are streamed from disk rather than kept in memory. */
const MAX_CACHED_BYTES = 2 * 1024 * 1024;

export function webRoutes(app: FastifyInstance, core: Core): void {
  const root = webRoot(core.config.dist_dir);
  const assets = new Map<string, Asset>();
  let template: string | undefined;
  const indexTemplate = () => (template ??= root ? readFileSync(path.join(root, 'index.html'), 'utf8') : undefined);

  for (const folder of STATIC_FOLDERS) {
    // Hashed names under assets/ never change; the other folders keep OpenList's half year.
    const cacheControl = folder === 'assets' ? IMMUTABLE : 'public, max-age=15552000';
    app.get(`/${folder}/*`, async (req, reply) => {
      const rel = (req.params as { '*': string })['*'];
      const file = root ? fileInside(path.join(root, folder), rel) : undefined;
      if (!file) return reply.callNotFound();
      const key = `${folder}/${rel}`;
      let asset = assets.get(key);
      if (!asset) {
        const st = await stat(file).catch(() => undefined);
        if (!st?.isFile()) return reply.callNotFound();
        const type = mimeTypes().contentType(path.extname(file)) || 'application/octet-stream';
        if (st.size > MAX_CACHED_BYTES) {
          const etag = `"${st.size.toString(16)}-${Math.floor(st.mtimeMs).toString(16)}"`;
          reply.header('Cache-Control', cacheControl).header('ETag', etag).type(type);
          if (req.headers['if-none-match'] === etag) return reply.code(304).send();
          return reply.header('Content-Length', st.size).send(createReadStream(file));
        }
        const body = await readFile(file);
        asset = {
          body,
          gzip: COMPRESSIBLE.test(rel) && body.length > 512 ? gzipSync(body, { level: 9 }) : undefined,
          etag: `"${createHash('sha1').update(body).digest('base64url').slice(0, 20)}"`,
          type,
          cacheControl,
        };
        assets.set(key, asset);
      }
      return sendAsset(req, reply, asset);
    });
  }

  // OpenList's PWA manifest, from the site settings.
  app.get('/manifest.json', async (_req, reply) => {
    const base = basePathOf(core.config.site_url) || '/';
    const logo = core.settings.get('logo').split('\n')[0] ?? '';
    return reply
      .type('application/json; charset=utf-8')
      .header('Cache-Control', 'public, max-age=3600')
      .send({ display: 'standalone', scope: base, start_url: base, name: core.settings.get('site_title'), icons: [{ src: logo, sizes: '512x512', type: 'image/png' }] });
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

/** The file `rel` (a URL path, still encoded) names inside `dir`, or undefined when it would leave it. */
function fileInside(dir: string, rel: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(rel);
  } catch {
    return undefined;
  }
  if (decoded === '' || decoded.includes('\0') || decoded.includes('\\') || decoded.split('/').some((seg) => seg === '..' || seg === '')) return undefined;
  const full = path.resolve(dir, decoded);
  return full.startsWith(dir + path.sep) ? full : undefined;
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
  reply.header('Cache-Control', a.cacheControl).header('ETag', a.etag).header('Vary', 'Accept-Encoding').type(a.type);
  if (req.headers['if-none-match'] === a.etag) return reply.code(304).send();
  if (a.gzip && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) {
    return reply.header('Content-Encoding', 'gzip').send(a.gzip);
  }
  return reply.send(a.body);
}

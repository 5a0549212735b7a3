import { randomBytes } from 'node:crypto';
import path from 'node:path';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type HTTPMethods, LogController } from 'fastify';
import type { Core } from '../core.js';
import { BadRequest, NotFound } from '../errors.js';
import { registerCors } from './cors.js';
import { fairRequests } from './fairness.js';
import { PrivacyMask, sendError } from './envelope.js';
import { adminMetaRoutes } from './routes/admin-metas.js';
import { adminHookRoutes } from './routes/admin-hooks.js';
import { adminSyncRoutes } from './routes/admin-sync.js';
import { adminScanRoutes } from './routes/admin-scan.js';
import { archiveDownloadRoutes } from './routes/archive-download.js';
import { adminSettingRoutes } from './routes/admin-settings.js';
import { adminStorageRoutes } from './routes/admin-storages.js';
import { adminUserRoutes } from './routes/admin-users.js';
import { adminGroupRoutes } from './routes/admin-groups.js';
import { authRoutes } from './routes/auth.js';
import { ssoRoutes } from './routes/sso.js';
import { fsDirectUploadRoutes } from './routes/fs-direct-upload.js';
import { fsReadRoutes } from './routes/fs-read.js';
import { fsMultipartRoutes } from './routes/fs-multipart.js';
import { tusRoutes } from './routes/tus.js';
import { wopiRoutes } from './routes/wopi.js';
import { fsUploadRoutes, UPLOAD_SPOOL } from './routes/fs-upload.js';
import { fsWriteRoutes } from './routes/fs-write.js';
import { offlineRoutes } from './routes/offline.js';
import { offlineCloudRoutes } from './routes/offline-cloud.js';
import { torrentRoutes } from './routes/torrent.js';
import { adminMessageRoutes } from './routes/admin-messages.js';
import { publicRoutes } from './routes/public.js';
import { rawRoutes } from './routes/raw.js';
import { archiveRoutes } from './routes/archive.js';
import { searchRoutes } from './routes/search.js';
import { shareDownloadRoutes } from './routes/share-visit.js';
import { shareRoutes } from './routes/shares.js';
import { sshKeyRoutes } from './routes/ssh-keys.js';
import { s3KeyRoutes } from './routes/s3-keys.js';
import { appPasswordRoutes } from './routes/app-passwords.js';
import { sessionRoutes } from './routes/sessions.js';
import { passkeyRoutes } from './routes/passkeys.js';
import { taskRoutes } from './routes/tasks.js';
import { instrumentRequests, metricsRoutes } from './routes/metrics.js';
import { webdavRoutes } from '../protocols/webdav/server.js';
import { webRoutes } from './web.js';
import { openApiRoutes } from './routes/openapi.js';
import { recordRoutes } from './route-table.js';
import { adminAuditRoutes } from './routes/admin-audit.js';
import { adminAboutRoutes } from './routes/admin-about.js';
import { backupRoutes } from '../backup/routes.js';

/** Body limit for JSON and form bodies; uploads stream and are not bound by it. */
export const JSON_BODY_LIMIT = 1024 * 1024;

export interface AppOptions {
  /** Trust X-Forwarded-* from a reverse proxy (for client IPs). */
  trustProxy?: boolean;
}

/** JSON nesting no route needs; deeper bodies are refused before any code walks them recursively. */
export const MAX_JSON_DEPTH = 64;

/** True when a parsed body nests arrays/objects deeper than `max` (checked without recursion). */
function nestedDeeper(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth >= max) return true;
    for (const child of Object.values(v as Record<string, unknown>)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}

function parseForm(body: string): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(body));
}

export async function buildApp(core: Core, opts: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: core.log as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: JSON_BODY_LIMIT,
    trustProxy: opts.trustProxy ?? false,
    requestIdHeader: 'x-request-id',
    genReqId: () => randomBytes(8).toString('hex'),
    // A path parameter longer than the router's limit (100) makes its route not match, and the
    // request is not found like any other unknown path: given as undefined, Fastify leaves the
    // router without the handler that would answer its own 414 JSON when no other route matched
    // (a task kind of 101 letters is an unknown kind, see oneOf in route-table.ts).
    routerOptions: { ignoreDuplicateSlashes: true, onMaxParamLength: undefined },
  });
  const mask = new PrivacyMask(core.settings);
  recordRoutes(app);

  bodyParsers(app);
  requestHooks(app, core);
  instrumentRequests(app, core);
  fairRequests(app, core, core.config.max_connections);
  registerCors(app, core.config.cors, ['/api', '/d', '/p', '/sd', '/sad']);
  errorAnswers(app, mask);
  await routes(app, core);
  await startBackground(app, core);

  await app.ready();
  return app;
}

/** JSON only under a JSON content type, forms as gin reads them, any other body left to the routes. */
function bodyParsers(app: FastifyInstance): void {
  // JSON is parsed only under a JSON content type (Fastify's own parser); forms as gin does;
  // anything else is left unread for the routes that stream bodies.
  app.removeContentTypeParser('text/plain');
  // An empty body under a JSON content type is no body (gin binds nothing from it): clients
  // send one with the `?id=` verbs (OpenList's front end and SDKs), which read the query.
  const jsonParser = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (body === '') return done(null, undefined);
    return jsonParser(req, body as string, done);
  });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    done(null, parseForm(body as string));
  });
  app.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));
}

/** Every request: its id, the cluster state fresh enough, a bounded JSON nesting, one log line. */
function requestHooks(app: FastifyInstance, core: Core): void {
  // Hooks every request runs take a callback rather than return a promise: one promise and one
  // microtask less each, on every request (a resumable upload sends one per chunk).
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('X-Request-Id', req.id);
    // cluster mode: a request waits only when the state versions were not checked for 1.5 s
    const stale = core.cluster.fresh();
    if (stale) stale.then(() => done(), done);
    else done();
  });
  app.addHook('preValidation', (req, _reply, done) => {
    if (req.body !== null && typeof req.body === 'object' && nestedDeeper(req.body, MAX_JSON_DEPTH)) {
      return done(new BadRequest(`the JSON body is nested deeper than ${MAX_JSON_DEPTH} levels`));
    }
    done();
  });
  app.addHook('onResponse', (req, reply, done) => {
    req.log.info({ method: req.method, url: maskToken(req.url), status: reply.statusCode, ms: Math.round(reply.elapsedTime), ip: req.ip }, 'request');
    done();
  });
}

/** A WOPI callback's URL carries its access token (a 10-hour bearer credential): logged masked. */
const maskToken = (url: string) => (url.includes('access_token=') ? url.replace(/([?&]access_token=)[^&]*/g, '$1…') : url);

/** Errors in the envelope; an unknown path redirected as gin does, or not found. */
function errorAnswers(app: FastifyInstance, mask: PrivacyMask): void {
  app.setErrorHandler((err, req, reply) => sendError(err, req, reply, mask));
  app.setNotFoundHandler((req, reply) => {
    const redirect = trailingSlashRedirect(app, req.method, req.url);
    if (redirect) return reply.redirect(redirect.location, redirect.status);
    if (req.url === '/api' || req.url.startsWith('/api/')) {
      return sendError(new NotFound(`route ${req.method} ${req.url.split('?')[0]} not found`), req, reply, mask);
    }
    return reply.code(404).type('text/plain; charset=utf-8').send('404 page not found');
  });
}

/** Every front's routes, in the order they were always registered. */
async function routes(app: FastifyInstance, core: Core): Promise<void> {
  publicRoutes(app, core);
  authRoutes(app, core);
  ssoRoutes(app, core);
  adminUserRoutes(app, core);
  adminGroupRoutes(app, core);
  adminStorageRoutes(app, core);
  adminMetaRoutes(app, core);
  adminHookRoutes(app, core);
  adminSyncRoutes(app, core);
  adminSettingRoutes(app, core);
  adminScanRoutes(app, core);
  sshKeyRoutes(app, core);
  s3KeyRoutes(app, core);
  appPasswordRoutes(app, core);
  sessionRoutes(app, core);
  passkeyRoutes(app, core);
  fsReadRoutes(app, core);
  archiveDownloadRoutes(app, core);
  fsWriteRoutes(app, core);
  fsDirectUploadRoutes(app, core);
  await fsUploadRoutes(app, core);
  await fsMultipartRoutes(app, core);
  await tusRoutes(app, core);
  await wopiRoutes(app, core);
  rawRoutes(app, core);
  shareRoutes(app, core);
  shareDownloadRoutes(app, core);
  archiveRoutes(app, core);
  taskRoutes(app, core);
  offlineRoutes(app, core);
  offlineCloudRoutes(app, core);
  torrentRoutes(app, core);
  adminMessageRoutes(app, core);
  adminAuditRoutes(app, core);
  adminAboutRoutes(app, core);
  backupRoutes(app, core);
  webdavRoutes(app, core);
  searchRoutes(app, core);
  metricsRoutes(app, core);
  openApiRoutes(app, core);
  webRoutes(app, core);
}

/** The cluster bus, hooks and audit, then storages, tasks and the index in the background; the hourly session sweep. */
async function startBackground(app: FastifyInstance, core: Core): Promise<void> {
  await core.cluster.start();
  core.hooks.start();
  core.audit.start();
  // Storages mount in the background; requests that need them wait (a failing one keeps its
  // error as status and never stops the server).
  void core.storages
    .loadAll()
    .then(() => core.tasks.restore())
    .then(() => core.tasks.sweepTemp([path.join(core.config.temp_dir, UPLOAD_SPOOL), ...core.offline.tempFolders(), core.archives.stagingDir]))
    .catch((err) => core.log.error({ err }, 'loading storages or tasks failed'));
  const sweep = setInterval(() => {
    core.repos.sessions.deleteExpired(Date.now()).catch((err) => core.log.warn({ err }, 'session cleanup failed'));
  }, 3600_000);
  sweep.unref();
  void core.search.resume().catch((err) => core.log.error({ err }, 'resuming the index build failed'));
  app.addHook('onClose', async () => clearInterval(sweep));
}

/**
 * Gin's RedirectTrailingSlash, as the original answers: `/api/me/` with no route of its own
 * goes to `/api/me` when that route exists, 301 for GET and 307 for every other method (HEAD
 * included), which keeps the method and body.
 */
export function trailingSlashRedirect(app: FastifyInstance, method: string, url: string): { location: string; status: 301 | 307 } | undefined {
  const q = url.indexOf('?');
  const pathname = q === -1 ? url : url.slice(0, q);
  if (pathname.length < 2 || !pathname.endsWith('/')) return undefined;
  const bare = pathname.replace(/\/+$/, '') || '/';
  const lookup = method === 'HEAD' ? 'GET' : method;
  if (!app.hasRoute({ method: lookup as HTTPMethods, url: bare }) && !app.routeTable.answersEnumerated(lookup, bare)) return undefined;
  return { location: bare + (q === -1 ? '' : url.slice(q)), status: method === 'GET' ? 301 : 307 };
}

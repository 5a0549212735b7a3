import { randomBytes } from 'node:crypto';
import path from 'node:path';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { Core } from '../core.js';
import { NotFound } from '../errors.js';
import { registerCors } from './cors.js';
import { PrivacyMask, sendError } from './envelope.js';
import { adminMetaRoutes } from './routes/admin-metas.js';
import { adminSettingRoutes } from './routes/admin-settings.js';
import { adminStorageRoutes } from './routes/admin-storages.js';
import { adminUserRoutes } from './routes/admin-users.js';
import { authRoutes } from './routes/auth.js';
import { fsReadRoutes } from './routes/fs-read.js';
import { fsUploadRoutes, UPLOAD_SPOOL } from './routes/fs-upload.js';
import { fsWriteRoutes } from './routes/fs-write.js';
import { offlineRoutes } from './routes/offline.js';
import { publicRoutes } from './routes/public.js';
import { rawRoutes } from './routes/raw.js';
import { searchRoutes } from './routes/search.js';
import { sshKeyRoutes } from './routes/ssh-keys.js';
import { taskRoutes } from './routes/tasks.js';
import { instrumentRequests, metricsRoutes } from './routes/metrics.js';
import { webdavRoutes } from '../protocols/webdav/server.js';
import { webRoutes } from './web.js';

/** Body limit for JSON and form bodies; uploads stream and are not bound by it. */
export const JSON_BODY_LIMIT = 1024 * 1024;

export interface AppOptions {
  /** Trust X-Forwarded-* from a reverse proxy (for client IPs). */
  trustProxy?: boolean;
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
    routerOptions: { ignoreDuplicateSlashes: true },
  });
  const mask = new PrivacyMask(core.settings);

  // JSON is parsed only under a JSON content type (Fastify's own parser); forms as gin does;
  // anything else is left unread for the routes that stream bodies.
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    done(null, parseForm(body as string));
  });
  app.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));

  app.addHook('onRequest', async (req, reply) => {
    reply.header('X-Request-Id', req.id);
  });
  app.addHook('onResponse', async (req, reply) => {
    req.log.info({ method: req.method, url: req.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime), ip: req.ip }, 'request');
  });

  instrumentRequests(app, core);
  limitConcurrency(app, core.config.max_connections);
  registerCors(app, core.config.cors, ['/api', '/d', '/p']);

  app.setErrorHandler((err, req, reply) => sendError(err, req, reply, mask));
  app.setNotFoundHandler((req, reply) => {
    if (req.url === '/api' || req.url.startsWith('/api/')) {
      return sendError(new NotFound(`route ${req.method} ${req.url.split('?')[0]} not found`), req, reply, mask);
    }
    return reply.code(404).type('text/plain; charset=utf-8').send('404 page not found');
  });

  publicRoutes(app, core);
  authRoutes(app, core);
  adminUserRoutes(app, core);
  adminStorageRoutes(app, core);
  adminMetaRoutes(app, core);
  adminSettingRoutes(app, core);
  sshKeyRoutes(app, core);
  fsReadRoutes(app, core);
  fsWriteRoutes(app, core);
  await fsUploadRoutes(app, core);
  rawRoutes(app, core);
  taskRoutes(app, core);
  offlineRoutes(app, core);
  webdavRoutes(app, core);
  searchRoutes(app, core);
  metricsRoutes(app, core);
  webRoutes(app, core);

  await core.cluster.start();
  // Storages mount in the background; requests that need them wait (a failing one keeps its
  // error as status and never stops the server).
  void core.storages
    .loadAll()
    .then(() => core.tasks.restore())
    .then(() => core.tasks.sweepTemp([path.join(core.config.temp_dir, UPLOAD_SPOOL), ...core.offline.tempFolders()]))
    .catch((err) => core.log.error({ err }, 'loading storages or tasks failed'));
  const sweep = setInterval(() => {
    core.repos.sessions.deleteExpired(Date.now()).catch((err) => core.log.warn({ err }, 'session cleanup failed'));
  }, 3600_000);
  sweep.unref();
  void core.search.resume().catch((err) => core.log.error({ err }, 'resuming the index build failed'));
  app.addHook('onClose', async () => clearInterval(sweep));

  await app.ready();
  return app;
}

/** The config's `max_connections`: at most N requests are handled at once, the rest wait. */
function limitConcurrency(app: FastifyInstance, max: number): void {
  if (max <= 0) return;
  let active = 0;
  const waiting: Array<() => void> = [];
  const released = new WeakSet<object>();
  app.addHook('onRequest', async () => {
    if (active < max) {
      active++;
      return;
    }
    await new Promise<void>((resolve) => waiting.push(resolve));
  });
  const release = async (req: object) => {
    if (released.has(req)) return;
    released.add(req);
    const next = waiting.shift();
    if (next) next();
    else active--;
  };
  app.addHook('onResponse', async (req) => release(req));
  app.addHook('onRequestAbort', async (req) => release(req));
}

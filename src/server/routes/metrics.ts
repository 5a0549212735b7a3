import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Core } from '../../core.js';
import { concreteUrl } from '../route-table.js';

interface Counted {
  read: number;
  written: number;
}

const ENVELOPE_CODE = /^\{"code":(\d{3})/;

const digest = (s: string) => createHash('sha256').update(s).digest();

/** True when the request carries the `metrics_token` setting, as `Bearer <token>` or bare. */
function authorized(req: FastifyRequest, token: string): boolean {
  const header = req.headers.authorization ?? '';
  const given = header.startsWith('Bearer ') ? header.slice(7) : header;
  return timingSafeEqual(digest(given), digest(token));
}

/**
 * Feeds every request into the metrics: route pattern, HTTP status, the API envelope's code
 * (read from the serialised answer), latency, and the bytes the connection carried for it:
 * what the socket read and wrote since the previous response on it ended (requests on one
 * connection come one after the other), so headers and bodies both count.
 */
export function instrumentRequests(app: FastifyInstance, core: Core): void {
  const codes = new WeakMap<FastifyRequest, number>();
  const counted = new WeakMap<object, Counted>();
  app.addHook('onSend', (req, _reply, payload, done) => {
    if (typeof payload === 'string') {
      const m = ENVELOPE_CODE.exec(payload);
      if (m) codes.set(req, Number(m[1]));
    }
    done(null, payload);
  });
  app.addHook('onResponse', (req, reply, done) => {
    const socket = req.raw.socket;
    let bytesIn = 0;
    let bytesOut = 0;
    if (socket && typeof socket.bytesRead === 'number') {
      const before = counted.get(socket) ?? { read: 0, written: 0 };
      bytesIn = socket.bytesRead - before.read;
      bytesOut = socket.bytesWritten - before.written;
      counted.set(socket, { read: socket.bytesRead, written: socket.bytesWritten });
    }
    core.metrics.request({
      method: req.method,
      route: req.routeOptions.url === undefined ? 'unmatched' : concreteUrl(req.routeOptions.url, req.params),
      status: reply.statusCode,
      code: codes.get(req) ?? reply.statusCode,
      seconds: reply.elapsedTime / 1000,
      bytesIn,
      bytesOut,
    });
    done();
  });
}

/**
 * `GET /metrics` in the Prometheus text format. Off (404, as any unknown path) while the
 * `metrics_token` setting is empty; otherwise the token is required (`Authorization: Bearer …`).
 */
export function metricsRoutes(app: FastifyInstance, core: Core): void {
  app.get('/metrics', async (req, reply) => {
    const token = core.settings.get('metrics_token');
    if (token === '') return reply.code(404).type('text/plain; charset=utf-8').send('404 page not found');
    if (!authorized(req, token)) {
      return reply.code(401).header('WWW-Authenticate', 'Bearer realm="metrics"').type('text/plain; charset=utf-8').send('401 unauthorized: the metrics_token setting is required as a Bearer token\n');
    }
    return reply.type(core.metrics.contentType).send(await core.metrics.text());
  });
}

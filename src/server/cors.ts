import type { FastifyInstance } from 'fastify';
import type { Config } from '../config/defaults.js';
import { TUS_EXPOSED } from './routes/tus.js';

const ALL_METHODS = 'GET,HEAD,POST,PUT,DELETE,PATCH,OPTIONS';

/**
 * CORS for the API and download routes (`/api`, `/d`, `/p`), from the config's `cors`
 * section. `*` for headers reflects what the browser asks for, since a literal `*` does not
 * cover `Authorization`.
 */
export function registerCors(app: FastifyInstance, cors: Config['cors'], prefixes: string[]): void {
  const anyOrigin = cors.allow_origins.includes('*');
  const methods = cors.allow_methods.includes('*') ? ALL_METHODS : cors.allow_methods.join(',');
  const applies = (url: string) => prefixes.some((p) => url === p || url.startsWith(`${p}/`) || url.startsWith(`${p}?`));

  app.addHook('onRequest', (req, reply, done) => {
    if (!applies(req.url)) return done();
    const origin = req.headers.origin;
    if (!origin) return done();
    if (!anyOrigin && !cors.allow_origins.includes(origin)) return done();
    reply.header('Access-Control-Allow-Origin', anyOrigin ? '*' : origin);
    if (!anyOrigin) reply.header('Vary', 'Origin');
    reply.header('Access-Control-Expose-Headers', ['Content-Length', 'Content-Range', 'Content-Disposition', 'ETag', ...TUS_EXPOSED].join(', '));
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method']) {
      const asked = req.headers['access-control-request-headers'];
      const headers = cors.allow_headers.includes('*') ? (asked ?? '*') : cors.allow_headers.join(',');
      reply.header('Access-Control-Allow-Methods', methods);
      reply.header('Access-Control-Allow-Headers', headers);
      reply.header('Access-Control-Max-Age', '86400');
      // Answered here: the request goes no further (done is not called).
      reply.code(204).send();
      return;
    }
    done();
  });
}

import { z } from 'zod';
import type { FastifyInstance } from 'fastify';
import type { Core } from '../../core.js';
import { ANY, apiRoute } from '../route.js';

const LOGO_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect width="64" height="64" rx="14" fill="#1890ff"/><path d="M14 50V26l18-12 18 12v24H39V34H25v16z" fill="#fff"/></svg>`;

export function publicRoutes(app: FastifyInstance, core: Core): void {
  app.route({
    method: ['GET', 'HEAD', 'POST'],
    url: '/ping',
    handler: async (_req, reply) => reply.type('text/plain; charset=utf-8').send('pong'),
  });
  app.get('/favicon.ico', async (_req, reply) => reply.redirect(core.settings.get('favicon') || '/images/logo.svg', 302));
  app.get('/robots.txt', async (_req, reply) => reply.type('text/plain; charset=utf-8').send(core.settings.get('robots_txt')));
  app.get('/images/logo.svg', async (_req, reply) =>
    reply.type('image/svg+xml').header('Cache-Control', 'public, max-age=86400').send(LOGO_SVG),
  );
  apiRoute(app, core, {
    method: ANY,
    url: '/api/public/settings',
    output: z.record(z.string(), z.string()),
    auth: 'none',
    handler: () => core.settings.publicValues(),
  });
}

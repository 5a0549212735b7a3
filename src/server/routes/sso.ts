import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { SSO_COOKIE, type SsoResult } from '../../auth/sso.js';
import { AppError } from '../../errors.js';
import { envelopeCodeOf } from '../api-codes.js';
import type { Core } from '../../core.js';
import type { RouteDoc } from '../route-table.js';
import { apiUrl } from '../../http/urls.js';
import { parseInput } from '../validation.js';

const startInput = z.object({ method: z.string().max(64).default('') });
const callbackInput = z.object({
  method: z.string().max(64).optional(),
  state: z.string().max(256).optional(),
  code: z.string().max(4096).optional(),
  error: z.string().max(200).optional(),
  error_description: z.string().max(1000).optional(),
});

function cookieValue(req: FastifyRequest, name: string): string | undefined {
  const header = req.headers.cookie ?? '';
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}

/**
 * The answer the original's front ends expect: a page that posts `{token}` or `{sso_id}` to the
 * window that opened the popup, addressed to this site's origin only (never "*"), then closes; in
 * compatibility mode a redirect to `/@login?token=` or `/@manage?sso_id=` on this site.
 */
function answer(reply: FastifyReply, r: SsoResult, compatibility: boolean): FastifyReply {
  reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
  if (compatibility) {
    const target = new URL(`${r.base}${r.key === 'token' ? '/@login' : '/@manage'}`);
    target.searchParams.set(r.key, r.value);
    return reply.redirect(target.toString(), 302);
  }
  return reply.code(200).type('text/html; charset=utf-8').send(postingPage('Signed in', 'You can close this window.', { [r.key]: r.value }, new URL(r.base).origin, true));
}

/** A page that posts `message` to the window that opened it (for `origin` only), and closes itself when asked. */
function postingPage(title: string, text: string, message: Record<string, string>, origin: string, close: boolean): string {
  // JSON inside a script: escape what could end it or start markup.
  const json = (v: unknown) => JSON.stringify(v).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
  const escape = (t: string) => t.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex"><title>${escape(title)}</title></head>
<body><p>${escape(text)}</p>
<script>
if (window.opener) window.opener.postMessage(${json(message)}, ${json(origin)});
${close ? 'window.close();' : ''}
</script></body></html>`;
}

const callbackDoc = (summary: string): RouteDoc => ({
  auth: 'none',
  summary,
  input: callbackInput,
  from: 'query',
  rawResponse: {
    description:
      'an HTML page posting {"token": "<jwt>"} (sso_get_token) or {"sso_id": "<binding ticket>"} (get_sso_id) to window.opener for this site\'s origin; with sso_compatibility_mode a 302 to /@login?token=… or /@manage?sso_id=…; errors as the JSON envelope, or for a browser navigation (Sec-Fetch-Dest: document) an HTML page with the reason that posts {"sso_error": "<reason>"} to window.opener',
  },
});

/** OpenID Connect single sign-on: `/api/auth/sso` and the provider's redirect back (auth/sso.ts). */
export function ssoRoutes(app: FastifyInstance, core: Core): void {
  app.route({
    method: 'GET',
    url: '/api/auth/sso',
    config: {
      doc: {
        auth: 'none',
        summary: 'start single sign-on: 302 to the provider (method sso_get_token signs in, get_sso_id binds the identity to the signed-in account)',
        input: startInput,
        from: 'query',
        rawResponse: { description: '302 to the provider\'s authorization endpoint, setting the cookie that binds the attempt to this browser; errors as the JSON envelope' },
      },
    },
    handler: async (req, reply) => {
      const { method } = parseInput(startInput, req.query);
      const start = await core.sso.start(method, apiUrl(req, core.config.site_url), cookieValue(req, SSO_COOKIE), req.ip);
      const c = start.cookie;
      reply.header('set-cookie', `${c.name}=${c.value}; Path=${c.path}; Max-Age=${c.maxAge}; HttpOnly; SameSite=Lax${c.secure ? '; Secure' : ''}`);
      reply.header('cache-control', 'no-store');
      return reply.redirect(start.location, 302);
    },
  });

  const callback = (fixedMethod?: string) => async (req: FastifyRequest, reply: FastifyReply) => {
    try {
      const q = parseInput(callbackInput, req.query);
      const result = await core.sso.finish(fixedMethod ?? q.method ?? '', q, cookieValue(req, SSO_COOKIE), (user) =>
        core.accounts.signInVouched(user, { ip: req.ip, userAgent: String(req.headers['user-agent'] ?? '') }),
      );
      return answer(reply, result, core.sso.compatibility());
    } catch (err) {
      // A person in the provider's window (a browser navigation) reads the reason there, and the page
      // that opened it gets {sso_error}; programs get the JSON envelope.
      if (!(err instanceof AppError) || req.headers['sec-fetch-dest'] !== 'document') throw err;
      const origin = new URL(apiUrl(req, core.config.site_url)).origin;
      const page = postingPage('Single sign-on failed', `Single sign-on failed: ${err.message}`, { sso_error: err.message }, origin, false);
      const code = envelopeCodeOf(err);
      return reply.code(code >= 400 && code < 500 ? code : 500).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(page);
    }
  };
  app.route({ method: 'GET', url: '/api/auth/sso_callback', config: { doc: callbackDoc('single sign-on: the provider\'s redirect back (method in the query)') }, handler: callback() });
  app.route({ method: 'GET', url: '/api/auth/get_sso_id', config: { doc: callbackDoc('single sign-on, compatibility mode: the redirect back of a binding') }, handler: callback('get_sso_id') });
  app.route({ method: 'GET', url: '/api/auth/sso_get_token', config: { doc: callbackDoc('single sign-on, compatibility mode: the redirect back of a sign-in') }, handler: callback('sso_get_token') });
}

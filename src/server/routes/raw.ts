import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TransferDone } from '../../audit/record.js';
import type { Core } from '../../core.js';
import { Forbidden } from '../../errors.js';
import { downloadPlan, downProxyUrl, redirectOf } from '../../http/download-policy.js';
import { originOf } from '../../http/origin.js';
import { proxy } from '../../http/proxy.js';
import { RawView } from '../../view/raw.js';
import { PrivacyMask } from '../envelope.js';
import { sendRawError } from '../raw-error.js';

type RawQuery = { sign?: string; type?: string; d?: string; size?: string };

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
    // One `download` event per GET: when the bytes went out, the client was redirected, or it was refused.
    const sent = req.method === 'GET' ? raw.transfer(virtualPath, originOf(req, 'raw')) : undefined;
    try {
      return await serveRaw(req, reply, virtualPath, query, proxyOnly, sent);
    } catch (err) {
      sent?.(0, err);
      throw err;
    }
  };
  const serveRaw = async (req: FastifyRequest, reply: FastifyReply, virtualPath: string, query: RawQuery, proxyOnly: boolean, sent: TransferDone | undefined) => {
    await core.storages.ready(virtualPath);
    // The sign first, as the original's middleware: a path with no storage behind it is
    // reported (500) only to a caller holding a valid sign, or where none is needed.
    raw.requireSign(virtualPath, core.storages.resolve(virtualPath)?.storage, query.sign ?? '');
    // A thumbnail is the server's own bytes (thumbs/): made or cached, whatever the storage's download policy.
    if (query.type === 'thumb') {
      const { link, obj, storage } = await raw.thumb(virtualPath, query.size);
      return proxy(core, req, reply, link, obj.name, undefined, storage, undefined, sent && { sent });
    }
    const storage = raw.storageOf(virtualPath);

    const plan = downloadPlan(proxyOnly ? 'p' : 'd', storage, virtualPath, core.settings, { direct: query.d !== undefined });
    if (plan.refused) throw new Forbidden('proxy not allowed');
    if (plan.downProxy) {
      sent?.(0);
      return reply.redirect(downProxyUrl(plan.downProxy, virtualPath, core.signer.sign(virtualPath)), 302);
    }
    const { link, obj } = await raw.link(virtualPath, { type: query.type, ip: req.ip, header: req.headers });
    const to = redirectOf(plan, link);
    if (to) {
      reply.header('Referrer-Policy', 'no-referrer');
      reply.header('Cache-Control', 'max-age=0, no-cache, no-store, must-revalidate');
      sent?.(0);
      return reply.redirect(to, 302);
    }
    return proxy(core, req, reply, link, obj.name, obj.hash, storage, undefined, sent && { sent });
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

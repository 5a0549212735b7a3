import { chmodSync, readFileSync, rmSync } from 'node:fs';
import type { Server as HttpsServer } from 'node:https';
import type { FastifyInstance } from 'fastify';
import type { Core } from '../core.js';

export interface Listening {
  /** Addresses the server answers on, for the start-up message. */
  urls: string[];
  close(): Promise<void>;
}

/**
 * Starts the configured listeners: HTTP (`scheme.http_port`, -1 = off), HTTPS (`https_port`
 * with cert/key, optionally redirecting HTTP to it) and a Unix socket (`unix_file`).
 */
export async function listen(app: FastifyInstance, core: Core, portOverride?: number): Promise<Listening> {
  const scheme = core.config.scheme;
  const httpPort = portOverride ?? scheme.http_port;
  const urls: string[] = [];
  let https: HttpsServer | undefined;

  if (scheme.https_port !== -1) {
    // node:https (and TLS) load only when HTTPS is configured: ~1 MB less memory otherwise.
    const { createServer: createHttpsServer } = await import('node:https');
    https = createHttpsServer({ cert: readFileSync(scheme.cert_file), key: readFileSync(scheme.key_file) }, (req, res) => {
      app.routing(req, res);
    });
    await new Promise<void>((resolve, reject) => {
      https!.once('error', reject);
      https!.listen(scheme.https_port, scheme.address, () => resolve());
    });
    urls.push(`https://${scheme.address}:${scheme.https_port}`);
    if (scheme.force_https && httpPort !== -1) {
      app.addHook('onRequest', async (req, reply) => {
        if (req.protocol === 'http') {
          const host = (req.headers.host ?? scheme.address).replace(/:\d+$/, '');
          return reply.redirect(`https://${host}:${scheme.https_port}${req.url}`, 302);
        }
      });
    }
  }
  if (scheme.unix_file) {
    rmSync(scheme.unix_file, { force: true });
    await app.listen({ path: scheme.unix_file });
    if (scheme.unix_file_perm) chmodSync(scheme.unix_file, Number.parseInt(scheme.unix_file_perm, 8));
    urls.push(`unix:${scheme.unix_file}`);
  } else if (httpPort !== -1) {
    await app.listen({ host: scheme.address, port: httpPort });
    const addr = app.server.address();
    const port = typeof addr === 'object' && addr ? addr.port : httpPort;
    urls.push(`http://${scheme.address}:${port}`);
  }
  return {
    urls,
    close: async () => {
      await app.close();
      if (https) await new Promise<void>((resolve) => https!.close(() => resolve()));
    },
  };
}

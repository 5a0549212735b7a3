import { createHmac } from 'node:crypto';
import http from 'node:http';

export interface Hit {
  body: Buffer;
  headers: http.IncomingHttpHeaders;
}

export interface Receiver {
  url: string;
  port: number;
  hits: Hit[];
  /** The status of each next answer, in order; then 200. */
  statuses: number[];
  close(): Promise<void>;
}

/** A loopback HTTP server recording every request's raw body and headers. */
export async function startReceiver(port = 0): Promise<Receiver> {
  const hits: Hit[] = [];
  const statuses: number[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      hits.push({ body: Buffer.concat(chunks), headers: req.headers });
      res.statusCode = statuses.shift() ?? 200;
      res.end(res.statusCode === 200 ? 'ok' : 'receiver says no');
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${bound}/hook`,
    port: bound,
    hits,
    statuses,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Checks X-Atrium-Signature as a receiver would: HMAC-SHA256 of the raw body. */
export const signedBy = (hit: Hit, secret: string) => hit.headers['x-atrium-signature'] === `sha256=${createHmac('sha256', secret).update(hit.body).digest('hex')}`;

export async function until<T>(what: () => T | undefined | false, ms = 5000, label = 'condition'): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = what();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${label}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

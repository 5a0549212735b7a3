import http from 'node:http';
import type { FastifyInstance } from 'fastify';

/** Listens on a free loopback port and returns its base URL. */
export async function listenLoopback(app: FastifyInstance): Promise<string> {
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  return address;
}

/** Sends a PUT whose body stops after `sendBytes` of the declared `declaredBytes`, then drops the connection. */
export function interruptedPut(base: string, urlPath: string, headers: Record<string, string>, declaredBytes: number, sendBytes: number): Promise<void> {
  return new Promise((resolve) => {
    const url = new URL(urlPath, base);
    const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: 'PUT', headers: { ...headers, 'content-length': String(declaredBytes) } });
    req.on('error', () => resolve());
    req.write(Buffer.alloc(sendBytes, 7), () => {
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 200);
    });
  });
}

/** A PUT with a chunked body (no Content-Length). */
export function chunkedPut(base: string, urlPath: string, headers: Record<string, string>, body: Buffer): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const url = new URL(urlPath, base);
    const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: 'PUT', headers: { ...headers, 'transfer-encoding': 'chunked' } }, (res) => {
      let data = '';
      res.on('data', (c) => (data += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(data) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

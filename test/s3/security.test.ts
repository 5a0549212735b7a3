import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ProtocolListener } from '../../src/protocols/listeners.js';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { signedRequest, startS3 } from './s3-helpers.js';

const code = (body: string) => /<Code>([^<]*)<\/Code>/.exec(body)?.[1];

describe('S3 keys and signatures', () => {
  let s: TestServer;
  let root: string;
  let listener: ProtocolListener;
  let endpoint: string;
  let admin: string;

  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
    root = makeTree({ 'pub/a.txt': 'alpha', 'pub/hidden/h.txt': 'hidden bytes', 'other/secret.txt': 'top secret' });
    admin = await s.login();
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/disk', root) })).code).toBe(200);
    ({ listener, endpoint } = await startS3(s, [{ name: 'pub', path: '/disk/pub' }]));
  });
  afterAll(async () => {
    await listener?.close();
    await s?.destroy();
    if (root) rmSync(root, { recursive: true, force: true });
  });
  beforeEach(() => s.core.limiter.succeed('127.0.0.1'));

  it('a correctly signed request reads the object', async () => {
    const r = await signedRequest(endpoint, 'GET', '/pub/a.txt');
    expect(r.status).toBe(200);
    expect(r.body).toBe('alpha');
  });

  it('virtual-host style: the bucket named by the Host header', async () => {
    const port = new URL(endpoint).port;
    const r = await signedRequest(endpoint, 'GET', '/a.txt', { host: `pub.s3.test:${port}` });
    expect(r.status).toBe(200);
    expect(r.body).toBe('alpha');
    const listed = await signedRequest(endpoint, 'GET', '/', { host: `pub.s3.test:${port}` });
    expect(listed.body).toContain('<Key>a.txt</Key>');
    // A first label that is no bucket falls back to path style
    const path = await signedRequest(endpoint, 'GET', '/pub/a.txt', { host: `s3.test:${port}` });
    expect(path.body).toBe('alpha');
  });

  it('traversal battery: no key reaches outside the bucket folder', async () => {
    const attempts: Array<[string, string]> = [
      ['/pub/../other/secret.txt', '/pub/../other/secret.txt'],
      ['/pub/../other/secret.txt', '/pub/%2e%2e/other/secret.txt'],
      ['/pub/../other/secret.txt', '/pub/%2E%2E/other/secret.txt'],
      ['/pub/a/../../other/secret.txt', '/pub/a/%2e%2e/%2e%2e/other/secret.txt'],
      ['/pub/..%5Cother%5Csecret.txt', '/pub/..%5Cother%5Csecret.txt'],
      ['/pub//other/secret.txt', '/pub//other/secret.txt'],
      ['/pub/%252e%252e%252fother%252fsecret.txt', '/pub/%252e%252e%252fother%252fsecret.txt'],
    ];
    for (const [signedPath, wirePath] of attempts) {
      const r = await signedRequest(endpoint, 'GET', signedPath, { wirePath });
      expect(r.body, wirePath).not.toContain('top secret');
      expect([403, 404], `${wirePath}: ${r.status} ${r.body}`).toContain(r.status);
      // Refused by the path rules (a signature that fails would prove nothing about them).
      expect(['AccessDenied', 'NoSuchKey'], wirePath).toContain(code(r.body));
    }
    const put = await signedRequest(endpoint, 'PUT', '/pub/../other/planted.txt', { wirePath: '/pub/%2e%2e/other/planted.txt', body: 'x' });
    expect(put.status).toBe(403);
    expect(code(put.body)).toBe('AccessDenied');
    expect(existsSync(path.join(root, 'other/planted.txt'))).toBe(false);
  });

  it('a tampered signed header, a wrong secret or a region other than signed is SignatureDoesNotMatch', async () => {
    const tampered = await signedRequest(endpoint, 'GET', '/pub/a.txt', { headers: { 'x-amz-meta-note': 'one' }, tamper: (h) => (h['x-amz-meta-note'] = 'two') });
    expect(tampered.status).toBe(403);
    expect(code(tampered.body)).toBe('SignatureDoesNotMatch');
    const wrong = await signedRequest(endpoint, 'GET', '/pub/a.txt', { secret: 'not-the-secret' });
    expect(code(wrong.body)).toBe('SignatureDoesNotMatch');
    const region = await signedRequest(endpoint, 'GET', '/pub/a.txt', {
      region: 'eu-west-1',
      tamper: (h) => (h.authorization = h.authorization!.replace('/eu-west-1/', '/us-east-1/')),
    });
    expect(code(region.body)).toBe('SignatureDoesNotMatch');
  });

  it('a request signed 20 minutes off is RequestTimeTooSkewed', async () => {
    const r = await signedRequest(endpoint, 'GET', '/pub/a.txt', { signingDate: new Date(Date.now() - 20 * 60_000) });
    expect(r.status).toBe(403);
    expect(code(r.body)).toBe('RequestTimeTooSkewed');
  });

  it('a body that does not match its signed SHA-256 is refused and not stored', async () => {
    const good = await signedRequest(endpoint, 'PUT', '/pub/claimed.txt', { body: 'real' });
    expect(good.status).toBe(200);
    expect(readFileSync(path.join(root, 'pub/claimed.txt'), 'utf8')).toBe('real');
    const bad = await signedRequest(endpoint, 'PUT', '/pub/liar.txt', { body: 'real', sendBody: 'fake' });
    expect(bad.status).toBe(400);
    expect(code(bad.body)).toBe('XAmzContentSHA256Mismatch');
    expect(existsSync(path.join(root, 'pub/liar.txt'))).toBe(false);
  });

  it('bad signatures lock the address out as failed logins do', async () => {
    for (let i = 0; i < 5; i++) expect(code((await signedRequest(endpoint, 'GET', '/pub/a.txt', { secret: 'bad' })).body)).toBe('SignatureDoesNotMatch');
    const locked = await signedRequest(endpoint, 'GET', '/pub/a.txt');
    expect(locked.status).toBe(503);
    expect(code(locked.body)).toBe('SlowDown');
  });

  it('anonymous requests read only as the guest may, and never write', async () => {
    const http = await import('node:http');
    const anon = (method: string, p: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request(`${endpoint}${p}`, { method }, (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.end();
      });
    const put = await anon('PUT', '/pub/anon.txt');
    expect(code(put.body)).toBe('AccessDenied');
    const guest = await s.core.repos.users.byRole(1);
    const read = await anon('GET', '/pub/a.txt');
    if (guest && !guest.disabled) expect(read.status).toBe(200);
    else expect(code(read.body)).toBe('AccessDenied');
  });
});

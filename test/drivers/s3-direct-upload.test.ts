import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { BUCKET, resolveS3Localhost, S3_KEY, type S3Peer, startS3rver } from './s3-peer.js';

resolveS3Localhost();

const AUTH_PARAMS = ['X-Amz-Algorithm', 'X-Amz-Credential', 'X-Amz-Date', 'X-Amz-Expires', 'X-Amz-SignedHeaders', 'X-Amz-Signature', 'X-Amz-Security-Token'];

/** `20240102T030405Z` → Date. */
const amzDate = (s: string) => new Date(`${s.slice(0, 4)}-${s.slice(4, 6)}-${s.slice(6, 8)}T${s.slice(9, 11)}:${s.slice(11, 13)}:${s.slice(13, 15)}Z`);

/**
 * The signature the SDK's own SigV4 signer gives this query-signed request (s3rver checks no V4
 * signature, so a relay in front of it does, with an implementation other than the driver's).
 */
async function expectedSignature(req: http.IncomingMessage, url: URL): Promise<string> {
  const { SignatureV4 } = await import('@smithy/signature-v4');
  const { createHash, createHmac } = await import('node:crypto');
  const bytes = (d: unknown) => (typeof d === 'string' ? d : Buffer.from(d as Uint8Array));
  class Sha256 {
    private h;
    constructor(secret?: unknown) {
      this.h = secret ? createHmac('sha256', bytes(secret)) : createHash('sha256');
    }
    update(d: unknown) {
      this.h.update(bytes(d));
    }
    async digest() {
      return new Uint8Array(this.h.digest());
    }
  }
  const q = url.searchParams;
  const region = q.get('X-Amz-Credential')!.split('/')[2]!;
  const signer = new SignatureV4({ service: 's3', region, credentials: { accessKeyId: S3_KEY, secretAccessKey: S3_KEY }, sha256: Sha256 as never, uriEscapePath: false });
  const query: Record<string, string> = {};
  for (const [k, v] of q) if (!AUTH_PARAMS.includes(k)) query[k] = v;
  // the headers the URL says it signed, with the values this request carries
  const headers: Record<string, string> = { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' };
  for (const name of (q.get('X-Amz-SignedHeaders') ?? 'host').split(';')) headers[name] = String(req.headers[name] ?? '');
  const signed = await signer.presign(
    { method: req.method!, protocol: 'http:', hostname: url.hostname, path: url.pathname, query, headers },
    { expiresIn: Number(q.get('X-Amz-Expires')), signingDate: amzDate(q.get('X-Amz-Date')!), unsignableHeaders: new Set(['x-amz-content-sha256']), unhoistableHeaders: new Set(['x-amz-content-sha256']) },
  );
  return String((signed.query as Record<string, string>)['X-Amz-Signature']);
}

/** A relay to s3rver that refuses a query-signed request whose SigV4 signature is not the one expected. */
async function verifyingRelay(peerPort: number) {
  const refused: string[] = [];
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url!, `http://${req.headers.host}`);
    const given = url.searchParams.get('X-Amz-Signature');
    if (given && given !== (await expectedSignature(req, url))) {
      refused.push(`${req.method} ${url.pathname}`);
      req.resume();
      res.writeHead(403, { 'content-type': 'application/xml' }).end('<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SignatureDoesNotMatch</Code></Error>');
      return;
    }
    const up = http.request({ host: '127.0.0.1', port: peerPort, method: req.method, path: req.url, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as AddressInfo).port, refused, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('S3 direct upload (enable_direct_upload, get_direct_upload_info)', () => {
  let peer: S3Peer;
  let relay: Awaited<ReturnType<typeof verifyingRelay>>;
  let s: TestServer;
  let admin: string;
  let reader: string;
  let localRoot: string;
  const body = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7) % 256));

  const addition = (extra: Record<string, unknown>) => ({
    bucket: BUCKET,
    endpoint: `http://127.0.0.1:${relay.port}`,
    access_key_id: S3_KEY,
    secret_access_key: S3_KEY,
    region: 'us-east-1',
    force_path_style: true,
    list_object_version: 'v1',
    ...extra,
  });
  const mount = async (mountPath: string, extra: Record<string, unknown>) =>
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: { mount_path: mountPath, driver: 'S3', cache_expiration: 30, addition: JSON.stringify(addition(extra)) } })).code).toBe(200);
  const list = (p: string, token = admin) => s.api('POST', '/api/fs/list', { token, body: { path: p } });
  const info = (p: string, name: string, token = admin, headers: Record<string, string> = {}) =>
    s.api('POST', '/api/fs/get_direct_upload_info', { token, body: { path: p, file_name: name, file_size: body.length, tool: 'HttpDirect' }, headers });
  const put = (url: string, bytes: Buffer) => fetch(url, { method: 'PUT', body: new Uint8Array(bytes), headers: { 'content-type': 'application/octet-stream' } });

  beforeAll(async () => {
    peer = await startS3rver();
    relay = await verifyingRelay(peer.port);
    await peer.put('up/seed.txt', 'seed');
    await peer.put('off/seed.txt', 'seed');
    localRoot = mkdtempSync(path.join(os.tmpdir(), 'atrium-direct-local-'));
    s = await startServer(BACKENDS[0]!);
    admin = await s.login();
    await mount('/direct', { root_folder_path: '/up', enable_direct_upload: true });
    await mount('/off', { root_folder_path: '/off' });
    await mount('/hosted', { root_folder_path: '/hosted', enable_direct_upload: true, direct_upload_host: `http://s3.localhost:${relay.port}` });
    await mount('/hosted-bare', { root_folder_path: '/hosted', enable_direct_upload: true, direct_upload_host: 'upload.example.test' });
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/local', localRoot) })).code).toBe(200);
    // read and list only: no write bit (8)
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'reader', password: 'r', permission: 0 } })).code).toBe(200);
    reader = await s.login('reader', 'r');
  });
  afterAll(async () => {
    await s.destroy();
    await relay.close();
    await peer.destroy();
    rmSync(localRoot, { recursive: true, force: true });
  });

  it('fs/list names HttpDirect in direct_upload_tools only on a storage with it on, for a user who may upload', async () => {
    expect((await list('/direct')).data.direct_upload_tools).toEqual(['HttpDirect']);
    for (const p of ['/off', '/local', '/']) expect('direct_upload_tools' in (await list(p)).data, p).toBe(false);
    const asReader = await list('/direct', reader);
    expect(asReader.code).toBe(200);
    expect('direct_upload_tools' in asReader.data).toBe(false);
    // OpenList's fs/get has no such field
    expect('direct_upload_tools' in (await s.api('POST', '/api/fs/get', { token: admin, body: { path: '/direct' } })).data).toBe(false);
  });

  it('answers a short-lived presigned PUT of the key; a real PUT stores the bytes, and the folder shows them', async () => {
    // the listing is cached before the upload (cache_expiration 30 minutes)
    expect((await list('/direct')).data.content.map((o: { name: string }) => o.name)).toEqual(['seed.txt']);
    const r = await info('/direct', 'hello world.bin');
    expect(r.code).toBe(200);
    expect(Object.keys(r.data).sort()).toEqual(['chunk_size', 'method', 'upload_url']);
    expect(r.data).toMatchObject({ chunk_size: 0, method: 'PUT' });
    const url = new URL(r.data.upload_url);
    expect(`${url.protocol}//${url.host}${url.pathname}`).toBe(`http://127.0.0.1:${relay.port}/${BUCKET}/up/hello%20world.bin`);
    expect(url.searchParams.get('X-Amz-Expires')).toBe('900');
    expect(url.searchParams.get('X-Amz-SignedHeaders')).toBe('content-length;host');
    // the declared size is signed: a body of another length is refused
    expect((await put(r.data.upload_url, Buffer.concat([body, Buffer.from('more')]))).status).toBe(403);
    expect(relay.refused).toEqual([`PUT /${BUCKET}/up/hello%20world.bin`]);
    relay.refused.length = 0;
    expect(await peer.read('up/hello world.bin')).toBeUndefined();

    const res = await put(r.data.upload_url, body);
    expect(res.status).toBe(200);
    expect(relay.refused).toEqual([]);
    expect((await peer.read('up/hello world.bin'))!.equals(body)).toBe(true);

    // the cached listing was dropped when the URL was issued: the next listing reads the bucket
    const after = (await list('/direct')).data.content.find((o: { name: string }) => o.name === 'hello world.bin');
    expect(after).toMatchObject({ size: body.length, is_dir: false });
    // and Atrium serves it: /d redirects to a presigned GET (checked by the relay too)
    const p = '/direct/hello world.bin';
    const d = await s.inject({ method: 'GET', url: `/d${encodeURI(p)}?sign=${encodeURIComponent(s.core.signer.sign(p))}` });
    expect(d.statusCode).toBe(302);
    const got = await fetch(String(d.headers.location));
    expect(got.status).toBe(200);
    expect(Buffer.from(await got.arrayBuffer()).equals(body)).toBe(true);

    // issuing is recorded (the bytes never pass through Atrium)
    const audit = await s.api('GET', '/api/admin/audit/list', { token: admin, query: { op: 'direct_upload' } });
    expect(audit.data.content[0]).toMatchObject({ user: 'admin', op: 'direct_upload', path: '/direct/hello world.bin', bytes: body.length, result: 'ok' });
  });

  it('the URL stores no other key, and none after it expires', async () => {
    const r = await info('/direct', 'only-this.bin');
    const other = new URL(r.data.upload_url);
    other.pathname = `/${BUCKET}/up/other.bin`;
    expect((await put(other.href, body)).status).toBe(403);
    const longer = new URL(r.data.upload_url);
    longer.searchParams.set('X-Amz-Expires', '86400');
    expect((await put(longer.href, body)).status).toBe(403);
    expect(relay.refused).toEqual([`PUT /${BUCKET}/up/other.bin`, `PUT /${BUCKET}/up/only-this.bin`]);
    expect(await peer.keys('up/o')).toEqual([]);
    // 15 minutes and a second later the bucket refuses it (s3rver checks X-Amz-Date + X-Amz-Expires)
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 901_000);
      const late = await put(r.data.upload_url, body);
      expect(late.status).toBe(403);
      expect(await late.text()).toMatch(/Request has expired/);
    } finally {
      vi.useRealTimers();
    }
    expect(await peer.keys('up/o')).toEqual([]);
    // in time, it does
    expect((await put(r.data.upload_url, body)).status).toBe(200);
    expect(await peer.keys('up/o')).toEqual(['up/only-this.bin']);
  });

  it('with the option off, on a Local folder, or with the wrong tool: data null', async () => {
    expect(await info('/off', 'x.bin')).toEqual({ code: 200, message: 'success', data: null });
    expect(await info('/local', 'x.bin')).toEqual({ code: 200, message: 'success', data: null });
    const wrongTool = await s.api('POST', '/api/fs/get_direct_upload_info', { token: admin, body: { path: '/direct', file_name: 'x.bin', file_size: 1, tool: 'Other' } });
    expect(wrongTool).toEqual({ code: 200, message: 'success', data: null });
  });

  it('a user without write permission gets the 403 envelope; Overwrite: false against a file is refused', async () => {
    expect(await info('/direct', 'x.bin', reader)).toEqual({ code: 403, message: 'permission denied', data: null });
    expect(await info('/direct', 'seed.txt', admin, { overwrite: 'false' })).toEqual({ code: 403, message: 'file exists', data: null });
    expect((await info('/direct', 'seed.txt', admin)).data.upload_url).toMatch(/\/up\/seed\.txt\?/);
  });

  it('direct_upload_host replaces the scheme and host of the URL, which is signed for that host', async () => {
    const r = await info('/hosted', 'via-host.bin');
    const url = new URL(r.data.upload_url);
    expect(`${url.protocol}//${url.host}${url.pathname}`).toBe(`http://s3.localhost:${relay.port}/${BUCKET}/hosted/via-host.bin`);
    // s3.localhost reaches the same relay under another name: the signature holds for that host
    expect((await put(r.data.upload_url, body)).status).toBe(200);
    expect((await peer.read('hosted/via-host.bin'))!.equals(body)).toBe(true);
    // the same URL sent to the endpoint's own host does not
    const onEndpoint = new URL(r.data.upload_url);
    onEndpoint.host = `127.0.0.1:${relay.port}`;
    expect((await put(onEndpoint.href, body)).status).toBe(403);
    // a bare host keeps the endpoint's scheme
    const bare = new URL((await info('/hosted-bare', 'b.bin')).data.upload_url);
    expect(`${bare.protocol}//${bare.host}${bare.pathname}`).toBe(`http://upload.example.test/${BUCKET}/hosted/b.bin`);
  });
});

import { createHash, randomBytes } from 'node:crypto';
import { closeSync, createReadStream, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync, writeFileSync, writeSync, existsSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { openDatabase } from '../../src/db/index.js';
import { dropAll } from '../../src/db/migrations.js';
import { missingPrograms, startNginxProxy } from '../drivers/peers.js';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage } from '../helpers/files.js';
import { dropRedisKeys, REDIS_URL, redisReachable } from '../helpers/redis.js';
import { atrium, callApi, freePort, type ServerProcess, startServerProcess } from '../helpers/process.js';

const PASSWORD = 'resume-pass-1';
const START = { timeoutMs: 90_000 };
const MiB = 1024 * 1024;

/** Writes `size` bytes of random data, every MiB different. */
function makeFile(file: string, size: number): void {
  const fd = openSync(file, 'w');
  const block = randomBytes(MiB);
  for (let i = 0; i < size / MiB; i++) {
    block.writeUInt32BE(i, 0);
    writeSync(fd, block);
  }
  closeSync(fd);
}

const digestOf = (file: string) =>
  new Promise<string>((resolve, reject) => {
    const h = createHash('sha256');
    createReadStream(file).on('data', (b) => h.update(b)).on('end', () => resolve(h.digest('hex'))).on('error', reject);
  });

/** One HTTP request with a body read from a file range; resolves with status and text. */
function send(base: string, method: string, route: string, headers: Record<string, string>, body?: { file: string; start: number; end: number }): Promise<{ status: number; text: string; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const len = body ? body.end - body.start + 1 : 0;
    const r = http.request(`${base}${route}`, { method, headers: { ...headers, 'content-length': String(len) } }, (res) => {
      let text = '';
      res.on('data', (b) => (text += b));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text, headers: res.headers }));
    });
    r.on('error', reject);
    if (body) createReadStream(body.file, { start: body.start, end: body.end }).pipe(r);
    else r.end();
  });
}

const envelope = (r: { text: string }) => JSON.parse(r.text) as { code: number; message: string; data: any };

const writeConfig = (dir: string, config: Record<string, unknown>) => {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ log: { enable: false }, ...config }));
};

const NO_NGINX = missingPrograms('resumable uploads through a proxy', 'nginx');

describe.skipIf(NO_NGINX !== undefined)('1 GiB through nginx (client_max_body_size 100m), kill -9 mid-way', () => {
  let root: string;
  let proc: ServerProcess | undefined;
  let proxy: Awaited<ReturnType<typeof startNginxProxy>>;
  let port: number;
  const SIZE = 1024 * MiB;
  const CHUNK = 16 * MiB;

  beforeAll(async () => {
    root = mkdtempSync(path.join(os.tmpdir(), 'atrium-resume-'));
    writeConfig(path.join(root, 'data'), { jwt_secret: randomBytes(12).toString('hex') });
    await atrium('admin', 'set', PASSWORD, '--data', path.join(root, 'data'));
    port = await freePort();
    proc = await startServerProcess(path.join(root, 'data'), port, START);
    proxy = await startNginxProxy(`http://127.0.0.1:${port}`, '100m');
    makeFile(path.join(root, 'source.bin'), SIZE);
  }, 300_000);

  afterAll(async () => {
    await proc?.stop();
    await proxy?.destroy?.();
    rmSync(root, { recursive: true, force: true });
  }, 60_000);

  it('a single PUT is refused by the proxy; chunks get through, survive a kill -9 and give identical bytes', async () => {
    const source = path.join(root, 'source.bin');
    const files = path.join(root, 'files');
    mkdirSync(files);
    const login = await callApi(proxy.base, 'POST', '/api/auth/login', { body: { username: 'admin', password: PASSWORD } });
    const token = login.data.token as string;
    expect((await callApi(proxy.base, 'POST', '/api/admin/storage/create', { token, body: localStorage('/big', files) })).code).toBe(200);
    const auth = { authorization: token };

    // The proxy answers from the declared length, before any byte of the body.
    const single = await new Promise<number>((resolve, reject) => {
      const r = http.request(`${proxy.base}/api/fs/put`, { method: 'PUT', headers: { ...auth, 'file-path': '/big/one.bin', 'content-length': String(SIZE) } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
        r.destroy();
      });
      r.on('error', reject);
      r.flushHeaders();
    });
    expect(single).toBe(413);

    const init = envelope(await send(proxy.base, 'POST', '/api/fs/multipart/init', { ...auth, 'file-path': '/big/one.bin', 'x-file-size': String(SIZE), 'x-chunk-size': String(CHUNK) }));
    expect(init.code, init.message).toBe(200);
    const id = init.data.upload_id as string;
    const total = init.data.total_chunks as number;
    expect(total).toBe(64);
    const put = (i: number) =>
      send(proxy.base, 'PUT', '/api/fs/multipart/chunk', { ...auth, 'x-upload-id': id, 'x-chunk-index': String(i) }, { file: source, start: i * CHUNK, end: Math.min(SIZE, (i + 1) * CHUNK) - 1 });
    for (let i = 0; i < 24; i++) expect(envelope(await put(i)).code).toBe(200);

    // The process dies in the middle of chunk 24.
    const dying = put(24).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 30));
    await proc!.kill9();
    await dying;
    proc = await startServerProcess(path.join(root, 'data'), port, START);

    const status = envelope(await send(proxy.base, 'GET', `/api/fs/multipart/status?upload_id=${id}`, auth));
    expect(status.code, status.message).toBe(200);
    const frontier = status.data.frontier as number;
    expect(frontier).toBeGreaterThanOrEqual(24);
    expect(status.data.received_bytes).toBe(frontier * CHUNK);
    expect(existsSync(path.join(files, 'one.bin'))).toBe(false);
    for (let i = frontier; i < total; i++) expect(envelope(await put(i)).code).toBe(200);
    const done = envelope(await send(proxy.base, 'POST', '/api/fs/multipart/complete', { ...auth, 'x-upload-id': id }));
    expect(done.code, done.message).toBe(200);
    expect(await digestOf(path.join(files, 'one.bin'))).toBe(await digestOf(source));
    // Only the kept file: the staging folder of the upload is gone, and so are half-written parts.
    expect(readdirSync(path.join(root, 'data', 'temp', 'resumable'))).toEqual([]);
  }, 600_000);
});

const pg = (await redisReachable()) ? BACKENDS.find((b) => b.name === 'postgres') : undefined;

describe.skipIf(!pg)('resume on the other node of a two-process cluster (PostgreSQL + Redis, shared staging)', () => {
  let root: string;
  const procs: ServerProcess[] = [];
  const dirs: string[] = [];
  const prefix = `ru${randomBytes(4).toString('hex')}_`;
  const keyPrefix = `atrium-test:${prefix}:`;

  beforeAll(async () => {
    root = mkdtempSync(path.join(os.tmpdir(), 'atrium-resume-cluster-'));
    const jwt = randomBytes(12).toString('hex');
    const staging = path.join(root, 'shared-temp');
    for (const name of ['a', 'b']) {
      const dir = path.join(root, name);
      writeConfig(dir, { jwt_secret: jwt, temp_dir: staging, database: pg!.database(prefix, dir), redis: { url: REDIS_URL, key_prefix: keyPrefix } });
      dirs.push(dir);
    }
    await atrium('admin', 'set', PASSWORD, '--data', dirs[0]!);
    for (const dir of dirs) procs.push(await startServerProcess(dir, await freePort(), START));
  }, 300_000);

  afterAll(async () => {
    await Promise.allSettled(procs.map((p) => p.stop()));
    const handle = openDatabase(loadConfig(dirs[0]!, {}).config.database);
    await dropAll(handle).catch(() => {});
    await handle.close();
    await dropRedisKeys(keyPrefix);
    rmSync(root, { recursive: true, force: true });
  }, 60_000);

  it('chunks sent to A, the rest and complete on B; tus continued on the other node too', async () => {
    const [a, b] = procs.map((p) => p.base) as [string, string];
    const token = (await callApi(a, 'POST', '/api/auth/login', { body: { username: 'admin', password: PASSWORD } })).data.token as string;
    const files = path.join(root, 'files');
    mkdirSync(files);
    expect((await callApi(a, 'POST', '/api/admin/storage/create', { token, body: localStorage('/c', files) })).code).toBe(200);
    for (let t = 0; ; t++) {
      const listed = await callApi(b, 'POST', '/api/fs/list', { token, body: { path: '/' } });
      if ((listed.data?.content ?? []).some((o: { name: string }) => o.name === 'c')) break;
      if (t > 100) throw new Error('B never mounted the storage created on A');
      await new Promise((r) => setTimeout(r, 100));
    }
    const source = path.join(root, 'source.bin');
    const SIZE = 12 * MiB;
    const CHUNK = 2 * MiB;
    makeFile(source, SIZE);
    const auth = { authorization: token };
    const init = envelope(await send(a, 'POST', '/api/fs/multipart/init', { ...auth, 'file-path': '/c/x.bin', 'x-file-size': String(SIZE), 'x-chunk-size': String(CHUNK) }));
    const id = init.data.upload_id as string;
    const put = (base: string, i: number) => send(base, 'PUT', '/api/fs/multipart/chunk', { ...auth, 'x-upload-id': id, 'x-chunk-index': String(i) }, { file: source, start: i * CHUNK, end: (i + 1) * CHUNK - 1 });
    for (let i = 0; i < 3; i++) expect(envelope(await put(a, i)).code).toBe(200);
    expect(envelope(await send(b, 'GET', `/api/fs/multipart/status?upload_id=${id}`, auth)).data.frontier).toBe(3);
    for (let i = 3; i < 6; i++) expect(envelope(await put(b, i)).code).toBe(200);
    const done = envelope(await send(b, 'POST', '/api/fs/multipart/complete', { ...auth, 'x-upload-id': id }));
    expect(done.code, done.message).toBe(200);
    expect(await digestOf(path.join(files, 'x.bin'))).toBe(await digestOf(source));

    // tus: created and half sent on B, finished on A.
    const tusH = { ...auth, 'tus-resumable': '1.0.0' };
    const created = await send(b, 'POST', '/api/fs/tus/', { ...tusH, 'upload-length': String(4 * MiB), 'upload-metadata': `path ${Buffer.from('/c/t.bin').toString('base64')}` });
    expect(created.status).toBe(201);
    const loc = created.headers.location!;
    const patch = (base: string, offset: number) =>
      send(base, 'PATCH', loc, { ...tusH, 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' }, { file: source, start: offset, end: offset + 2 * MiB - 1 });
    expect((await patch(b, 0)).status).toBe(204);
    expect((await patch(a, 0)).status).toBe(409);
    expect((await patch(a, 2 * MiB)).status).toBe(204);
    const want = createHash('sha256');
    await new Promise((r) => createReadStream(source, { start: 0, end: 4 * MiB - 1 }).on('data', (d) => want.update(d)).on('end', () => r(undefined)));
    expect(await digestOf(path.join(files, 't.bin'))).toBe(want.digest('hex'));
    expect((await send(a, 'HEAD', loc, tusH)).status).toBe(200);
  }, 300_000);
});

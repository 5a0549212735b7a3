import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import * as tus from 'tus-js-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';

const CHUNK = 64 * 1024;
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe.each(BACKENDS)('resumable uploads on $name', (backend) => {
  let s: TestServer;
  let root: string;
  let token: string;
  const staging = () => path.join(s.core.config.temp_dir, 'resumable');
  const stagedIds = () => (existsSync(staging()) ? readdirSync(staging()) : []);

  const req = async (method: string, url: string, headers: Record<string, string> = {}, payload?: Buffer) => {
    const r = await s.inject({ method: method as 'GET', url, headers: { authorization: token, ...headers }, payload });
    return { status: r.statusCode, headers: r.headers, body: r.body, json: () => JSON.parse(r.body) as { code: number; message: string; data: any } };
  };
  const init = async (file: string, size: number, extra: Record<string, string> = {}) =>
    (await req('POST', '/api/fs/multipart/init', { 'file-path': encodeURIComponent(file), 'x-file-size': String(size), 'x-chunk-size': String(CHUNK), ...extra })).json();
  const chunk = async (id: string, index: number, body: Buffer) =>
    (await req('PUT', '/api/fs/multipart/chunk', { 'x-upload-id': id, 'x-chunk-index': String(index), 'content-type': 'application/octet-stream' }, body)).json();
  const complete = async (id: string) => (await req('POST', '/api/fs/multipart/complete', { 'x-upload-id': id })).json();
  const slice = (b: Buffer, i: number) => b.subarray(i * CHUNK, (i + 1) * CHUNK);

  beforeAll(async () => {
    s = await startServer(backend);
    root = makeTree({ 'old.bin': 'old' });
    token = await s.login();
    expect((await s.api('POST', '/api/admin/storage/create', { token, body: localStorage('/u', root) })).code).toBe(200);
  });
  afterAll(async () => {
    await s.destroy();
    rmSync(root, { recursive: true, force: true });
  });

  it('chunks in any order become the file only at complete, with the declared hash checked; status reports what arrived', async () => {
    const data = randomBytes(CHUNK * 3 + 1234);
    const r = await init('/u/big.bin', data.length, { 'x-file-sha256': sha256(data) });
    expect(r.code, r.message).toBe(200);
    expect(r.data).toMatchObject({ state: 'receiving', size: data.length, chunk_size: CHUNK, total_chunks: 4, received: [], received_bytes: 0, resumed: false, path: '/u/big.bin' });
    const id = r.data.upload_id as string;
    expect((await chunk(id, 2, slice(data, 2))).data.received).toEqual([[2, 2]]);
    expect((await chunk(id, 0, slice(data, 0))).data).toMatchObject({ received: [[0, 0], [2, 2]], frontier: 1 });
    expect((await chunk(id, 3, slice(data, 3))).data.received_bytes).toBe(CHUNK * 2 + 1234);
    // Incomplete: complete refuses and the upload stays open.
    const early = await complete(id);
    expect(early.code).toBe(400);
    expect(early.message).toContain('chunk 1 is missing');
    expect(existsSync(path.join(root, 'big.bin'))).toBe(false);
    // A chunk of the wrong length is refused.
    expect((await chunk(id, 1, slice(data, 1).subarray(1))).code).toBe(400);
    // Resuming: init again with the same path and size answers the same upload.
    const again = await init('/u/big.bin', data.length);
    expect(again.data).toMatchObject({ upload_id: id, resumed: true, received: [[0, 0], [2, 3]] });
    const st = (await req('GET', `/api/fs/multipart/status?upload_id=${id}`)).json();
    expect(st.data).toMatchObject({ state: 'receiving', frontier: 1 });
    await chunk(id, 1, slice(data, 1));
    // Every chunk is in one staging file at its offset; completion renames that file into place.
    const staged = path.join(staging(), id, 'data');
    expect(statSync(staged).size).toBe(data.length);
    const inode = statSync(staged).ino;
    const done = await complete(id);
    expect(done.code, done.message).toBe(200);
    expect(done.data).toMatchObject({ state: 'completed', received_bytes: data.length, storage_progress: 100 });
    expect(sha256(readFileSync(path.join(root, 'big.bin')))).toBe(sha256(data));
    expect(statSync(path.join(root, 'big.bin')).ino).toBe(inode);
    expect(stagedIds()).not.toContain(id);
  });

  it('received ranges are kept with the upload: a chunk sent again, and a row from before they were kept', async () => {
    const data = randomBytes(CHUNK * 5);
    const id = (await init('/u/ranges.bin', data.length)).data.upload_id as string;
    const stored = async () => (await s.core.db.db.selectFrom('uploads').select('ranges').where('id', '=', id).executeTakeFirstOrThrow()).ranges;
    for (const i of [0, 1, 3]) await chunk(id, i, slice(data, i));
    expect(JSON.parse((await stored())!)).toEqual([
      [0, 2 * CHUNK],
      [3 * CHUNK, 4 * CHUNK],
    ]);
    // A chunk sent again counts as missing while it is being received, then is back in its range.
    expect((await chunk(id, 1, slice(data, 1))).data).toMatchObject({ received: [[0, 1], [3, 3]], received_bytes: 3 * CHUNK });
    // A row from before migration 12 has no ranges: they are read from its parts, then kept.
    await s.core.db.db.updateTable('uploads').set({ ranges: null }).where('id', '=', id).execute();
    const st = (await req('GET', `/api/fs/multipart/status?upload_id=${id}`)).json();
    expect(st.data).toMatchObject({ received: [[0, 1], [3, 3]], frontier: 2 });
    expect((await chunk(id, 4, slice(data, 4))).data.received).toEqual([
      [0, 1],
      [3, 4],
    ]);
    expect(JSON.parse((await stored())!)).toEqual([
      [0, 2 * CHUNK],
      [3 * CHUNK, 5 * CHUNK],
    ]);
    expect((await chunk(id, 2, slice(data, 2))).data.received).toEqual([[0, 4]]);
    expect((await complete(id)).code).toBe(200);
    expect(sha256(readFileSync(path.join(root, 'ranges.bin')))).toBe(sha256(data));
  });

  it('a hash that does not match fails the upload for good and stores nothing', async () => {
    const data = randomBytes(CHUNK + 10);
    const id = (await init('/u/bad.bin', data.length, { 'x-file-md5': 'a'.repeat(32) })).data.upload_id;
    await chunk(id, 0, slice(data, 0));
    await chunk(id, 1, slice(data, 1));
    const r = await complete(id);
    expect(r.code).not.toBe(200);
    expect(r.message).toContain('md5 mismatch');
    expect(existsSync(path.join(root, 'bad.bin'))).toBe(false);
    expect((await req('GET', `/api/fs/multipart/status?upload_id=${id}`)).json().data.state).toBe('failed_permanent');
    expect(stagedIds()).not.toContain(id);
  });

  it('the view decides at init and again at complete: overwrite off, a file arriving meanwhile is not replaced', async () => {
    expect((await init('/u/old.bin', 10, { overwrite: 'false' })).code).toBe(403);
    const data = randomBytes(100);
    const id = (await init('/u/late.bin', data.length, { overwrite: 'false' })).data.upload_id;
    await chunk(id, 0, data);
    const put = await req('PUT', '/api/fs/put', { 'file-path': '/u/late.bin', 'content-type': 'application/octet-stream' }, Buffer.from('first'));
    expect(put.json().code).toBe(200);
    const r = await complete(id);
    expect(r.code).toBe(403);
    expect(readFileSync(path.join(root, 'late.bin'), 'utf8')).toBe('first');
    // Outside the user's rules: a guest-like user without the write bit can not start one.
    await s.api('POST', '/api/admin/user/create', { token, body: { username: 'reader', password: 'reader-pass-1', base_path: '/', role: 0, permission: 0 } });
    const readerToken = await s.login('reader', 'reader-pass-1');
    const denied = await s.inject({ method: 'POST', url: '/api/fs/multipart/init', headers: { authorization: readerToken, 'file-path': '/u/x.bin', 'x-file-size': '5' } });
    expect(JSON.parse(denied.body).code).toBe(403);
    // …and can not see or touch another user's upload.
    const other = await s.inject({ method: 'GET', url: `/api/fs/multipart/status?upload_id=${id}`, headers: { authorization: readerToken } });
    expect(JSON.parse(other.body).code).toBe(404);
  });

  it('abort and expiry leave no staging files', async () => {
    const id = (await init('/u/aborted.bin', CHUNK * 2)).data.upload_id;
    await chunk(id, 0, randomBytes(CHUNK));
    expect(stagedIds()).toContain(id);
    expect((await req('POST', '/api/fs/multipart/abort', { 'x-upload-id': id })).json().code).toBe(200);
    expect(stagedIds()).not.toContain(id);
    expect((await req('GET', `/api/fs/multipart/status?upload_id=${id}`)).json().code).toBe(404);

    const idle = (await init('/u/idle.bin', CHUNK * 2)).data.upload_id;
    await chunk(idle, 0, randomBytes(CHUNK));
    // An hour without a chunk; the setting says one hour.
    await s.core.db.db.updateTable('uploads').set({ updated_at: Date.now() - 3_600_001 }).where('id', '=', idle).execute();
    await s.api('POST', '/api/admin/setting/save', { token, body: [{ key: 'upload_expire_hours', value: '1' }] });
    expect((await req('GET', `/api/fs/multipart/status?upload_id=${idle}`)).json().code).toBe(404);
    expect(await s.core.uploads.sweep()).toBeGreaterThanOrEqual(1);
    expect(stagedIds()).not.toContain(idle);
    expect(await s.core.repos.uploads.byId(idle)).toBeUndefined();
    await s.api('POST', '/api/admin/setting/save', { token, body: [{ key: 'upload_expire_hours', value: '24' }] });
  });

  it('the staging file opened ahead of a chunk\'s checks is closed whatever they decide, and never created by them', async () => {
    /** Descriptors of this process open on a staging file. */
    const openStaged = () =>
      readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`).startsWith(staging() + path.sep);
        } catch {
          return false;
        }
      }).length;
    const settled = async () => {
      for (let i = 0; i < 100 && openStaged() > 0; i++) await new Promise((r) => setTimeout(r, 10));
      return openStaged();
    };
    const data = randomBytes(CHUNK * 2);
    const id = (await init('/u/ahead.bin', data.length)).data.upload_id as string;
    expect((await chunk(id, 0, slice(data, 0))).code).toBe(200);
    expect(await settled()).toBe(0);

    // Another user's upload: as missing as an unknown one, and its staging file is not held open.
    await s.api('POST', '/api/admin/user/create', { token, body: { username: 'other', password: 'other-pass-1', base_path: '/', role: 0, permission: 0xffff } });
    const other = await s.login('other', 'other-pass-1');
    const foreign = await s.inject({ method: 'PUT', url: '/api/fs/multipart/chunk', headers: { authorization: other, 'x-upload-id': id, 'x-chunk-index': '1' }, payload: slice(data, 1) });
    expect(JSON.parse(foreign.body).code).toBe(404);
    // Refused by putChunk's own checks: an index out of range, a length that is not the chunk's.
    expect((await chunk(id, 7, slice(data, 1))).code).toBe(400);
    const short = await req('PUT', '/api/fs/multipart/chunk', { 'x-upload-id': id, 'x-chunk-index': '1', 'content-length': '5' }, Buffer.alloc(5));
    expect(short.json().code).toBe(400);
    // No token at all.
    const anonymous = await s.inject({ method: 'PUT', url: '/api/fs/multipart/chunk', headers: { 'x-upload-id': id, 'x-chunk-index': '1' }, payload: slice(data, 1) });
    expect(anonymous.statusCode === 401 || JSON.parse(anonymous.body).code === 401).toBe(true);
    expect(await settled()).toBe(0);

    // An id with no staging file yet (or none at all): nothing is created before the checks pass.
    const unknown = 'f'.repeat(32);
    expect((await chunk(unknown, 0, slice(data, 0))).code).toBe(404);
    expect(stagedIds()).not.toContain(unknown);
    expect((await chunk('../../etc', 0, slice(data, 0))).code).not.toBe(200);

    // The upload still completes to the right bytes through handles opened ahead.
    expect((await chunk(id, 1, slice(data, 1))).code).toBe(200);
    expect((await complete(id)).code).toBe(200);
    expect(readFileSync(path.join(root, 'ahead.bin')).equals(data)).toBe(true);
    expect(await settled()).toBe(0);
  });

  it('two clients sending the same chunk at once leave one whole copy, never a mix', async () => {
    const a = Buffer.alloc(CHUNK * 2, 0x61);
    const b = Buffer.alloc(CHUNK * 2, 0x62);
    const id = (await init('/u/race.bin', a.length)).data.upload_id;
    for (let round = 0; round < 3; round++) {
      const rs = await Promise.all([chunk(id, 0, slice(a, 0)), chunk(id, 0, slice(b, 0)), chunk(id, 1, slice(b, 1)), chunk(id, 1, slice(a, 1))]);
      for (const r of rs) expect(r.code, r.message).toBe(200);
    }
    expect((await complete(id)).code).toBe(200);
    const got = readFileSync(path.join(root, 'race.bin'));
    expect(got.length).toBe(a.length);
    for (const i of [0, 1]) {
      const part = slice(got, i);
      expect(part.equals(slice(a, i)) || part.equals(slice(b, i)), `chunk ${i} is one client's`).toBe(true);
    }
    expect(readdirSync(staging()).filter((f) => f === id)).toEqual([]);
  });

  it('a chunk another live request is writing (another node) is refused with 409, and so is complete; a dead writer does not block', async () => {
    const data = randomBytes(CHUNK * 2);
    const id = (await init('/u/claimed.bin', data.length)).data.upload_id as string;
    await chunk(id, 1, slice(data, 1));
    const claims = () => s.core.db.db.selectFrom('upload_claims').selectAll().where('upload_id', '=', id).execute();
    // A request on another host is writing chunk 0 and still alive.
    await s.core.db.db.insertInto('upload_claims').values({ upload_id: id, start: 0, token: 'f'.repeat(32), owner: 'other-node:4242', beat: Date.now() }).execute();
    const busy = await chunk(id, 0, slice(data, 0));
    expect(busy.code).toBe(409);
    expect(busy.message).toContain('being received by another request');
    expect((await complete(id)).code).toBe(409);
    expect((await claims()).map((c) => c.owner)).toEqual(['other-node:4242']);
    // That node died: without a sign of life for 30 s the claim is void and the chunk goes through.
    await s.core.db.db.updateTable('upload_claims').set({ beat: Date.now() - 31_000 }).where('upload_id', '=', id).execute();
    expect((await chunk(id, 0, slice(data, 0))).code).toBe(200);
    // A claim of a process of this host that is gone (kill -9) is void at once.
    await s.core.db.db.insertInto('upload_claims').values({ upload_id: id, start: CHUNK, token: 'e'.repeat(32), owner: `${os.hostname()}:${2 ** 22 + 12345}`, beat: Date.now() }).execute();
    const done = await complete(id);
    expect(done.code, done.message).toBe(200);
    expect(readFileSync(path.join(root, 'claimed.bin')).equals(data)).toBe(true);
    expect(await claims()).toEqual([]);
  });

  it('a complete cut short (its process killed) is taken over after 5 s without a sign of life; a live one is not', async () => {
    const data = randomBytes(CHUNK * 2);
    const id = (await init('/u/taken-over.bin', data.length)).data.upload_id as string;
    for (const i of [0, 1]) expect((await chunk(id, i, slice(data, i))).code).toBe(200);
    const cutOff = (ago: number) => s.core.db.db.updateTable('uploads').set({ state: 'completing', updated_at: Date.now() - ago }).where('id', '=', id).execute();
    await cutOff(1_000);
    const live = await complete(id);
    expect(live.code).toBe(409);
    expect(live.message).toBe('the upload is completing');
    expect(existsSync(path.join(root, 'taken-over.bin'))).toBe(false);
    await cutOff(5_500);
    const done = await complete(id);
    expect(done.code, done.message).toBe(200);
    expect(readFileSync(path.join(root, 'taken-over.bin')).equals(data)).toBe(true);
  });

  it('tus: two PATCHes at one offset: one wins, the other is a 409; the file is one client\'s bytes', async () => {
    const meta = `path ${Buffer.from('/u/tus-race.bin').toString('base64')}`;
    const created = await req('POST', '/api/fs/tus/', { 'tus-resumable': '1.0.0', 'upload-length': String(CHUNK), 'upload-metadata': meta });
    expect(created.status, created.body).toBe(201);
    const loc = created.headers.location as string;
    const patch = (fill: number) =>
      req('PATCH', loc, { 'tus-resumable': '1.0.0', 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }, Buffer.alloc(CHUNK, fill));
    const [x, y] = await Promise.all([patch(0x78), patch(0x79)]);
    expect([x.status, y.status].sort()).toEqual([204, 409]);
    const got = readFileSync(path.join(root, 'tus-race.bin'));
    expect(got.equals(Buffer.alloc(CHUNK, 0x78)) || got.equals(Buffer.alloc(CHUNK, 0x79))).toBe(true);
  });

  it('tus: protocol answers (OPTIONS, version, HEAD, checksum 460, offset 409, DELETE)', async () => {
    const opt = await req('OPTIONS', '/api/fs/tus/');
    expect(opt.status).toBe(204);
    expect(opt.headers['tus-extension']).toBe('creation,termination,checksum,expiration');
    expect((await req('POST', '/api/fs/tus/', { 'upload-length': '3' })).status).toBe(412);
    expect((await req('POST', '/api/fs/tus/', { 'tus-resumable': '1.0.0', 'upload-length': '3' })).status).toBe(400);
    const meta = `path ${Buffer.from('/u/t.txt').toString('base64')},filetype ${Buffer.from('text/plain').toString('base64')}`;
    const c = await req('POST', '/api/fs/tus/', { 'tus-resumable': '1.0.0', 'upload-length': String(CHUNK + 6), 'upload-metadata': meta });
    expect(c.status).toBe(201);
    expect(c.headers['upload-expires']).toBeTruthy();
    const loc = c.headers.location as string;
    const h = { 'tus-resumable': '1.0.0', 'content-type': 'application/offset+octet-stream' };
    const first = Buffer.alloc(CHUNK, 'a');
    const bad = await req('PATCH', loc, { ...h, 'upload-offset': '0', 'upload-checksum': `sha1 ${createHash('sha1').update('nope').digest('base64')}` }, first);
    expect(bad.status).toBe(460);
    const good = await req('PATCH', loc, { ...h, 'upload-offset': '0', 'upload-checksum': `sha1 ${createHash('sha1').update(first).digest('base64')}` }, first);
    expect(good.status).toBe(204);
    expect(good.headers['upload-offset']).toBe(String(CHUNK));
    expect((await req('PATCH', loc, { ...h, 'upload-offset': '0' }, first)).status).toBe(409);
    const head = await req('HEAD', loc, { 'tus-resumable': '1.0.0' });
    expect(head.headers).toMatchObject({ 'upload-offset': String(CHUNK), 'upload-length': String(CHUNK + 6), 'cache-control': 'no-store', 'upload-metadata': meta });
    expect(existsSync(path.join(root, 't.txt'))).toBe(false);
    expect((await req('DELETE', loc, { 'tus-resumable': '1.0.0' })).status).toBe(204);
    expect((await req('HEAD', loc, { 'tus-resumable': '1.0.0' })).status).toBe(404);
    expect(stagedIds()).not.toContain(loc.split('/').pop());
    expect((await s.inject({ method: 'HEAD', url: loc, headers: { 'tus-resumable': '1.0.0' } })).statusCode).toBe(401);
  });

  it('a quota of unfinished uploads per user; multipart_enabled off refuses', async () => {
    await s.api('POST', '/api/admin/setting/save', { token, body: [{ key: 'upload_max_parallel', value: '2' }] });
    const open: string[] = [];
    for (const n of ['q1', 'q2']) open.push((await init(`/u/${n}.bin`, 10)).data.upload_id);
    const third = await init('/u/q3.bin', 10);
    expect(third.code).toBe(429);
    await req('POST', '/api/fs/multipart/abort', { 'x-upload-id': open[0]! });
    expect((await init('/u/q3.bin', 10)).code).toBe(200);
    await s.api('POST', '/api/admin/setting/save', { token, body: [{ key: 'upload_max_parallel', value: '8' }, { key: 'multipart_enabled', value: 'false' }] });
    const off = await init('/u/q4.bin', 10);
    expect(off).toMatchObject({ code: 403, message: 'multipart upload is disabled' });
    await s.api('POST', '/api/admin/setting/save', { token, body: [{ key: 'multipart_enabled', value: 'true' }] });
  });

  it('tus-js-client uploads a file resumably to the real listening server', async () => {
    await s.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (s.app.server.address() as AddressInfo).port;
    const data = randomBytes(CHUNK * 5 + 77);
    const upload = (stopAfter?: number) =>
      new Promise<tus.Upload>((resolve, reject) => {
        const u: tus.Upload = new tus.Upload(data, {
          endpoint: `http://127.0.0.1:${port}/api/fs/tus/`,
          headers: { Authorization: token },
          metadata: { path: '/u/tus-client.bin', filename: 'tus-client.bin' },
          chunkSize: CHUNK,
          retryDelays: [],
          storeFingerprintForResuming: false,
          onChunkComplete: (_c, sent) => {
            if (stopAfter !== undefined && sent >= stopAfter) void u.abort().then(() => resolve(u));
          },
          onSuccess: () => resolve(u),
          onError: reject,
        });
        u.start();
      });
    const first = await upload(CHUNK * 2);
    expect(existsSync(path.join(root, 'tus-client.bin'))).toBe(false);
    const url = first.url!;
    // A new client resumes from the URL: HEAD, then PATCH from the server's offset.
    await new Promise<void>((resolve, reject) => {
      const u = new tus.Upload(data, { uploadUrl: url, headers: { Authorization: token }, chunkSize: CHUNK, retryDelays: [], onSuccess: () => resolve(), onError: reject });
      u.start();
    });
    expect(sha256(readFileSync(path.join(root, 'tus-client.bin')))).toBe(sha256(data));
    expect(stagedIds()).not.toContain(url.split('/').pop());
  });
});

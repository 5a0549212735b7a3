import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import * as tus from 'tus-js-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { BUCKET, S3_KEY, type S3Peer, startS3rver } from './s3-peer.js';

const MiB = 1024 * 1024;
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/**
 * Resumable uploads to an S3 storage go straight into an S3 multipart upload of the target object
 * (against s3rver): one part per chunk, or chunks grouped into parts of at least 5 MiB; the object
 * appears only at complete; abort and expiry abort the multipart upload; a restart resumes.
 */
describe('resumable uploads straight into S3 (s3rver)', () => {
  let peer: S3Peer;
  let s: TestServer;
  let token: string;
  const staged = (id: string) => path.join(s.core.config.temp_dir, 'resumable', id);

  const req = async (method: string, url: string, headers: Record<string, string> = {}, payload?: Buffer) => {
    const r = await s.inject({ method: method as 'GET', url, headers: { authorization: token, ...headers }, payload });
    return { status: r.statusCode, headers: r.headers, body: r.body, json: () => JSON.parse(r.body) as { code: number; message: string; data: any } };
  };
  const init = async (file: string, size: number, chunk: number, extra: Record<string, string> = {}) =>
    (await req('POST', '/api/fs/multipart/init', { 'file-path': encodeURIComponent(file), 'x-file-size': String(size), 'x-chunk-size': String(chunk), ...extra })).json();
  const put = async (id: string, index: number, body: Buffer) =>
    (await req('PUT', '/api/fs/multipart/chunk', { 'x-upload-id': id, 'x-chunk-index': String(index), 'content-type': 'application/octet-stream' }, body)).json();
  const complete = async (id: string) => (await req('POST', '/api/fs/multipart/complete', { 'x-upload-id': id })).json();
  const slice = (b: Buffer, i: number, chunk: number) => b.subarray(i * chunk, (i + 1) * chunk);
  /** The S3 upload id the server began for an upload (kept in its options). */
  const s3UploadOf = async (id: string) => JSON.parse((await s.core.repos.uploads.byId(id))!.options).s3?.upload as string | undefined;

  beforeAll(async () => {
    peer = await startS3rver();
    s = await startServer(BACKENDS[0]!);
    token = await s.login();
    const addition = { bucket: BUCKET, endpoint: `http://127.0.0.1:${peer.port}`, access_key_id: S3_KEY, secret_access_key: S3_KEY, root_folder_path: '/root', region: 'us-east-1', force_path_style: true };
    expect((await s.api('POST', '/api/admin/storage/create', { token, body: { mount_path: '/s3', driver: 'S3', addition: JSON.stringify(addition) } })).code).toBe(200);
  });
  afterAll(async () => {
    await s.destroy();
    await peer.destroy();
  });

  it('one part per chunk, nothing staged locally, the object only at complete, resumed after a restart', async () => {
    const CHUNK = 5 * MiB;
    const data = randomBytes(2 * CHUNK + 12345);
    const r = await init('/s3/dir/direct.bin', data.length, CHUNK);
    expect(r.code, r.message).toBe(200);
    const id = r.data.upload_id as string;
    const upload = await s3UploadOf(id);
    expect(upload).toBeTruthy();
    expect(peer.pendingUploads()).toContain(upload);
    expect((await put(id, 2, slice(data, 2, CHUNK))).code).toBe(200);
    expect((await put(id, 0, slice(data, 0, CHUNK))).code).toBe(200);
    // The bytes are parts of the S3 upload; none are kept in temp_dir, and there is no object yet.
    expect(peer.pendingParts(upload!)).toEqual([1, 3]);
    expect(existsSync(path.join(staged(id), 'data'))).toBe(false);
    expect(await peer.read('root/dir/direct.bin')).toBeUndefined();
    // A chunk cut short is refused and leaves the chunk missing.
    expect((await put(id, 1, slice(data, 1, CHUNK).subarray(7))).code).toBe(400);

    // A restart: the state is in the database, the parts on the peer.
    s = await s.restart();
    const st = (await req('GET', `/api/fs/multipart/status?upload_id=${id}`)).json();
    expect(st.data).toMatchObject({ state: 'receiving', received: [[0, 0], [2, 2]], frontier: 1 });
    expect((await put(id, 1, slice(data, 1, CHUNK))).code).toBe(200);
    const done = await complete(id);
    expect(done.code, done.message).toBe(200);
    expect(done.data.state).toBe('completed');
    expect(sha256((await peer.read('root/dir/direct.bin'))!)).toBe(sha256(data));
    expect(peer.pendingUploads()).not.toContain(upload);
    const listed = await s.api('POST', '/api/fs/list', { token, body: { path: '/s3/dir', refresh: true } });
    expect(listed.data.content.map((o: { name: string; size: number }) => [o.name, o.size])).toContainEqual(['direct.bin', data.length]);
  });

  it('chunks under 5 MiB are grouped into parts of at least 5 MiB, each sent once its chunks are in', async () => {
    const CHUNK = 2 * MiB;
    const data = randomBytes(7 * CHUNK + 999);
    const id = (await init('/s3/grouped.bin', data.length, CHUNK)).data.upload_id as string;
    const upload = (await s3UploadOf(id))!;
    // Three chunks make a part (6 MiB): part 1 = chunks 0-2, part 2 = 3-5, part 3 = 6-7.
    for (const i of [1, 0, 4]) expect((await put(id, i, slice(data, i, CHUNK))).code).toBe(200);
    expect(peer.pendingParts(upload)).toEqual([]);
    expect((await put(id, 2, slice(data, 2, CHUNK))).code).toBe(200);
    expect(peer.pendingParts(upload)).toEqual([1]);
    for (const i of [3, 5, 6, 7]) expect((await put(id, i, slice(data, i, CHUNK))).code).toBe(200);
    expect(peer.pendingParts(upload)).toEqual([1, 2, 3]);
    // A chunk sent again after its part went out: the part is sent again with the new bytes.
    expect((await put(id, 4, slice(data, 4, CHUNK))).code).toBe(200);
    const done = await complete(id);
    expect(done.code, done.message).toBe(200);
    expect(sha256((await peer.read('root/grouped.bin'))!)).toBe(sha256(data));
    expect(existsSync(staged(id))).toBe(false);
  });

  it('abort and expiry abort the S3 multipart upload; a declared hash stages locally and is checked', async () => {
    const CHUNK = 5 * MiB;
    const a = (await init('/s3/aborted.bin', CHUNK + 10, CHUNK)).data.upload_id as string;
    const aUpload = (await s3UploadOf(a))!;
    await put(a, 0, randomBytes(CHUNK));
    expect(peer.pendingParts(aUpload)).toEqual([1]);
    expect((await req('POST', '/api/fs/multipart/abort', { 'x-upload-id': a })).json().code).toBe(200);
    expect(peer.pendingUploads()).not.toContain(aUpload);

    const idle = (await init('/s3/idle.bin', CHUNK + 10, CHUNK)).data.upload_id as string;
    const idleUpload = (await s3UploadOf(idle))!;
    await put(idle, 0, randomBytes(CHUNK));
    await s.core.db.db.updateTable('uploads').set({ updated_at: Date.now() - 3_600_001 }).where('id', '=', idle).execute();
    await s.api('POST', '/api/admin/setting/save', { token, body: [{ key: 'upload_expire_hours', value: '1' }] });
    expect(await s.core.uploads.sweep()).toBeGreaterThanOrEqual(1);
    expect(peer.pendingUploads()).not.toContain(idleUpload);
    await s.api('POST', '/api/admin/setting/save', { token, body: [{ key: 'upload_expire_hours', value: '24' }] });

    const data = randomBytes(CHUNK + 4321);
    const bad = (await init('/s3/hashed-bad.bin', data.length, CHUNK, { 'x-file-sha256': 'a'.repeat(64) })).data.upload_id as string;
    expect(await s3UploadOf(bad)).toBeUndefined();
    for (const i of [0, 1]) await put(bad, i, slice(data, i, CHUNK));
    expect((await complete(bad)).message).toContain('sha256 mismatch');
    expect(await peer.read('root/hashed-bad.bin')).toBeUndefined();
    const good = (await init('/s3/hashed.bin', data.length, CHUNK, { 'x-file-sha256': sha256(data) })).data.upload_id as string;
    for (const i of [0, 1]) await put(good, i, slice(data, i, CHUNK));
    expect((await complete(good)).code).toBe(200);
    expect(sha256((await peer.read('root/hashed.bin'))!)).toBe(sha256(data));
  });

  it('tus-js-client to an S3 storage: PATCHes are grouped into parts, resumed by a new client', async () => {
    await s.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (s.app.server.address() as AddressInfo).port;
    const data = randomBytes(13 * MiB + 77);
    const upload = (opts: Partial<tus.UploadOptions>) =>
      new Promise<tus.Upload>((resolve, reject) => {
        const u: tus.Upload = new tus.Upload(data, {
          endpoint: `http://127.0.0.1:${port}/api/fs/tus/`,
          headers: { Authorization: token },
          metadata: { path: '/s3/tus/client.bin' },
          chunkSize: 3 * MiB,
          retryDelays: [],
          storeFingerprintForResuming: false,
          onSuccess: () => resolve(u),
          onError: reject,
          ...opts,
          onChunkComplete: (_c, sent) => {
            if (sent >= 7 * MiB && !opts.uploadUrl) void u.abort().then(() => resolve(u));
          },
        });
        u.start();
      });
    const first = await upload({});
    const id = first.url!.split('/').pop()!;
    const s3Upload = (await s3UploadOf(id))!;
    // 9 MiB are in; parts of 10 MiB (the 10 MB default chunk): none full yet.
    expect(peer.pendingParts(s3Upload)).toEqual([]);
    expect(await peer.read('root/tus/client.bin')).toBeUndefined();
    await upload({ uploadUrl: first.url! });
    expect(sha256((await peer.read('root/tus/client.bin'))!)).toBe(sha256(data));
    expect(peer.pendingUploads()).not.toContain(s3Upload);
    expect(readdirSync(path.join(s.core.config.temp_dir, 'resumable'))).not.toContain(id);
  });
});

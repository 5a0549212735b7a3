import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  ListPartsCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ProtocolListener } from '../../src/protocols/listeners.js';
import { MSG_MOVED } from '../../src/uploads/decide.js';
import { BACKENDS, ONE_BACKEND } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { client, signedRequest, startS3 } from '../s3/s3-helpers.js';

/**
 * Resumable uploads are decided at every request on the account as it is then: each change an
 * admin can make between the start of an upload and its next chunk or completion, on each
 * protocol that carries one, is refused, and nothing lands on disk, neither in the old area nor
 * in the new one.
 */
const CHUNK = 64 * 1024;
const DATA = randomBytes(CHUNK + 100);
const WRITE = 8;
const CHANGES = ['disable', 'delete', 'password', 'narrow', 'write', 'hide', 'folder-password'] as const;
type Change = (typeof CHANGES)[number];
const FRONTS = ['multipart', 'tus', 's3'] as const;
type Front = (typeof FRONTS)[number];
const CASES = [...CHANGES.flatMap((c) => FRONTS.map((f) => ({ change: c as Change | 'none', front: f }))), ...FRONTS.map((f) => ({ change: 'none' as const, front: f }))];
/** The API envelope's code (and the tus status) each change is refused with. */
const API_CODE: Record<Change, number> = { disable: 401, delete: 401, password: 401, narrow: 403, write: 403, hide: 403, 'folder-password': 403 };
const S3_CODE: Record<Change, string> = {
  disable: 'InvalidAccessKeyId',
  delete: 'InvalidAccessKeyId',
  password: 'AccessDenied',
  narrow: 'NoSuchBucket',
  write: 'AccessDenied',
  hide: 'AccessDenied',
  'folder-password': 'AccessDenied',
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(ONE_BACKEND)('resumable uploads decided at every request ($name)', (backend) => {
  let s: TestServer;
  let root: string;
  let admin: string;
  let endpoint: string;
  let listener: ProtocolListener;

  interface Account {
    id: number;
    name: string;
    token: string;
    s3: S3Client;
    folder: string;
    bucket: string;
  }
  const accounts: Account[] = [];

  const inject = async (token: string, method: string, url: string, headers: Record<string, string>, payload?: Buffer) => {
    const r = await s.inject({ method: method as 'GET', url, headers: { authorization: token, ...headers }, payload });
    return { status: r.statusCode, headers: r.headers, env: () => JSON.parse(r.body) as { code: number; message: string; data: any }, body: r.body };
  };
  const init = async (token: string, file: string, size = DATA.length, extra: Record<string, string> = {}) =>
    (await inject(token, 'POST', '/api/fs/multipart/init', { 'file-path': encodeURIComponent(file), 'x-file-size': String(size), 'x-chunk-size': String(CHUNK), ...extra })).env();
  const chunk = async (token: string, id: string, i: number) =>
    (await inject(token, 'PUT', '/api/fs/multipart/chunk', { 'x-upload-id': id, 'x-chunk-index': String(i), 'content-type': 'application/octet-stream' }, DATA.subarray(i * CHUNK, (i + 1) * CHUNK))).env();
  const complete = async (token: string, id: string) => (await inject(token, 'POST', '/api/fs/multipart/complete', { 'x-upload-id': id })).env();
  const tusCreate = async (token: string, file: string, length = DATA.length) => {
    const r = await inject(token, 'POST', '/api/fs/tus/', { 'tus-resumable': '1.0.0', 'upload-length': String(length), 'upload-metadata': `path ${Buffer.from(file).toString('base64')}` });
    return { status: r.status, body: r.body, loc: r.headers.location as string };
  };
  const tusPatch = (token: string, loc: string, offset: number, body: Buffer) =>
    inject(token, 'PATCH', loc, { 'tus-resumable': '1.0.0', 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' }, body);
  const onDisk = (a: Account, rel: string) => path.join(root, a.folder, rel);

  const makeAccount = async (i: number): Promise<Account> => {
    const name = `live${i}`;
    const folder = `c${i}`;
    const created = await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: name, password: 'first pass 1', base_path: `/disk/${folder}`, permission: WRITE } });
    expect(created.code, created.message).toBe(200);
    const token = await s.login(name, 'first pass 1');
    const me = await s.api('GET', '/api/me', { token });
    const key = await s.api('POST', '/api/me/s3key/create', { token, body: { title: 'k' } });
    expect(key.code, key.message).toBe(200);
    const s3 = client(endpoint, { keyId: key.data.access_key_id, secret: key.data.secret_access_key });
    return { id: me.data.id, name, token, s3, folder, bucket: `case${i}` };
  };

  /** The admin's change; answers the token the user has afterwards (a new login after a password change). */
  const apply = async (a: Account, change: Change | 'none'): Promise<string> => {
    const update = (body: Record<string, unknown>) => s.api('POST', '/api/admin/user/update', { token: admin, body: { id: a.id, username: a.name, ...body } });
    const meta = (body: Record<string, unknown>) => s.api('POST', '/api/admin/meta/create', { token: admin, body: { path: `/disk/${a.folder}/dir`, ...body } });
    let r: { code: number; message: string } | undefined;
    switch (change) {
      case 'none':
        return a.token;
      case 'disable':
        r = await update({ disabled: true });
        break;
      case 'delete':
        r = await s.api('POST', '/api/admin/user/delete', { token: admin, query: { id: String(a.id) } });
        break;
      case 'password': {
        // Password stamps are seconds: the change must fall in a later second than the account's.
        await sleep(1100);
        r = await update({ password: 'second pass 2' });
        expect(r.code, r.message).toBe(200);
        return s.login(a.name, 'second pass 2');
      }
      case 'narrow':
        mkdirSync(path.join(root, a.folder, 'sub/dir'), { recursive: true });
        r = await update({ base_path: `/disk/${a.folder}/sub` });
        break;
      case 'write':
        r = await update({ permission: 0 });
        break;
      case 'hide':
        r = await meta({ hide: '^late', h_sub: true });
        break;
      case 'folder-password':
        r = await meta({ password: 'folder pw', p_sub: true });
        break;
    }
    expect(r!.code, r!.message).toBe(200);
    return a.token;
  };

  beforeAll(async () => {
    s = await startServer(backend);
    const tree: Record<string, string> = {};
    CASES.forEach((_, i) => (tree[`c${i}/dir/keep.txt`] = 'keep'));
    tree['bounds/dir/keep.txt'] = 'keep';
    root = makeTree(tree);
    admin = await s.login();
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/disk', root) })).code).toBe(200);
    const buckets = CASES.map((_, i) => ({ name: `case${i}`, path: `/disk/c${i}` }));
    ({ listener, endpoint } = await startS3(s, [...buckets, { name: 'bounds', path: '/disk/bounds' }]));
    for (let i = 0; i < CASES.length; i++) accounts.push(await makeAccount(i));
  });
  afterAll(async () => {
    for (const a of accounts) a.s3.destroy();
    await listener?.close();
    await s?.destroy();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  /** Nothing of the upload under `name` on disk: not in the old area, not below a new base path. */
  const nothingLanded = (a: Account, name: string) => {
    expect(existsSync(onDisk(a, `dir/${name}`)), `${name} in the old area`).toBe(false);
    expect(existsSync(onDisk(a, `sub/dir/${name}`)), `${name} below the new base path`).toBe(false);
  };

  const multipartCase = async (a: Account, change: Change | 'none') => {
    // One upload waits for its last chunk, the other for its completion.
    const open = await init(a.token, '/dir/late-a.txt');
    expect(open.code, open.message).toBe(200);
    expect((await chunk(a.token, open.data.upload_id, 0)).code).toBe(200);
    const full = await init(a.token, '/dir/late-b.txt');
    for (const i of [0, 1]) expect((await chunk(a.token, full.data.upload_id, i)).code).toBe(200);
    const token = await apply(a, change);
    const next = await chunk(token, open.data.upload_id, 1);
    const done = await complete(token, full.data.upload_id);
    if (change === 'none') {
      expect(next.code, next.message).toBe(200);
      expect(done.code, done.message).toBe(200);
      // The snapshot's path is the client's path, whole.
      expect(done.data).toMatchObject({ state: 'completed', path: '/dir/late-b.txt' });
      const last = await complete(token, open.data.upload_id);
      expect(last.data.path).toBe('/dir/late-a.txt');
      expect(readFileSync(onDisk(a, 'dir/late-a.txt')).equals(DATA)).toBe(true);
      expect(readFileSync(onDisk(a, 'dir/late-b.txt')).equals(DATA)).toBe(true);
      return;
    }
    expect(next.code, next.message).toBe(API_CODE[change]);
    expect(done.code, done.message).toBe(API_CODE[change]);
    if (change === 'narrow') expect(done.message).toBe(MSG_MOVED);
    nothingLanded(a, 'late-a.txt');
    nothingLanded(a, 'late-b.txt');
    if (change === 'disable' || change === 'delete') return;
    // A refused completion fails the upload for good and deletes its bytes; so does any request
    // after a password change, and a new init starts afresh rather than resuming it.
    const failed = change === 'password' ? [open.data.upload_id, full.data.upload_id] : [full.data.upload_id];
    for (const id of failed) {
      expect((await s.core.repos.uploads.byId(id))?.state).toBe('failed_permanent');
      expect(existsSync(path.join(s.core.config.temp_dir, 'resumable', id))).toBe(false);
    }
    if (change === 'password') {
      const again = await init(token, '/dir/late-a.txt');
      expect(again.code, again.message).toBe(200);
      expect(again.data).toMatchObject({ resumed: false, received: [] });
    }
  };

  const tusCase = async (a: Account, change: Change | 'none') => {
    const created = await tusCreate(a.token, '/dir/late-t.txt');
    expect(created.status, created.body).toBe(201);
    expect((await tusPatch(a.token, created.loc, 0, DATA.subarray(0, CHUNK))).status).toBe(204);
    const token = await apply(a, change);
    // The last PATCH is the completion.
    const last = await tusPatch(token, created.loc, CHUNK, DATA.subarray(CHUNK));
    if (change === 'none') {
      expect(last.status, last.body).toBe(204);
      expect(readFileSync(onDisk(a, 'dir/late-t.txt')).equals(DATA)).toBe(true);
      return;
    }
    expect(last.status, last.body).toBe(API_CODE[change]);
    if (change === 'narrow') expect(last.body).toBe(MSG_MOVED);
    nothingLanded(a, 'late-t.txt');
  };

  const s3Case = async (a: Account, change: Change | 'none') => {
    const Bucket = a.bucket;
    const Key = 'dir/late-s.txt';
    const { UploadId } = await a.s3.send(new CreateMultipartUploadCommand({ Bucket, Key }));
    const part = await a.s3.send(new UploadPartCommand({ Bucket, Key, UploadId, PartNumber: 1, Body: DATA }));
    await apply(a, change);
    const parts = { Parts: [{ PartNumber: 1, ETag: part.ETag }] };
    if (change === 'none') {
      await a.s3.send(new UploadPartCommand({ Bucket, Key, UploadId, PartNumber: 2, Body: DATA }));
      await a.s3.send(new CompleteMultipartUploadCommand({ Bucket, Key, UploadId, MultipartUpload: parts }));
      expect(readFileSync(onDisk(a, Key)).equals(DATA)).toBe(true);
      return;
    }
    await expect(a.s3.send(new UploadPartCommand({ Bucket, Key, UploadId, PartNumber: 2, Body: DATA }))).rejects.toMatchObject({ name: S3_CODE[change] });
    await expect(a.s3.send(new CompleteMultipartUploadCommand({ Bucket, Key, UploadId, MultipartUpload: parts }))).rejects.toMatchObject({ name: S3_CODE[change] });
    // Refused keys count against the address as failed logins do; the next case starts clean.
    s.core.limiter.succeed('127.0.0.1');
    nothingLanded(a, 'late-s.txt');
  };

  const run: Record<Front, (a: Account, change: Change | 'none') => Promise<void>> = { multipart: multipartCase, tus: tusCase, s3: s3Case };

  it.each(CASES.map((c, i) => ({ ...c, i })))('$change, then the next request of a $front upload', async ({ change, front, i }) => {
    await run[front](accounts[i]!, change);
  });
});

describe.each(BACKENDS)('bounds and keys of resumable uploads ($name)', (backend) => {
  let s: TestServer;
  let root: string;
  let admin: string;
  let endpoint: string;
  let listener: ProtocolListener;
  let s3: S3Client;

  const inject = async (method: string, url: string, headers: Record<string, string>, payload?: Buffer) => {
    const r = await s.inject({ method: method as 'GET', url, headers: { authorization: admin, ...headers }, payload });
    return { status: r.statusCode, body: r.body, headers: r.headers, env: () => JSON.parse(r.body) as { code: number; message: string; data: any } };
  };
  const init = async (file: string, size: number, chunkSize?: number) =>
    (await inject('POST', '/api/fs/multipart/init', { 'file-path': encodeURIComponent(file), 'x-file-size': String(size), ...(chunkSize ? { 'x-chunk-size': String(chunkSize) } : {}) })).env();
  const tusCreate = (file: string, length: number) =>
    inject('POST', '/api/fs/tus/', { 'tus-resumable': '1.0.0', 'upload-length': String(length), 'upload-metadata': `path ${Buffer.from(file).toString('base64')}` });
  const tusPatch = (loc: string, offset: number, body: Buffer) =>
    inject('PATCH', loc, { 'tus-resumable': '1.0.0', 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' }, body);

  beforeAll(async () => {
    s = await startServer(backend);
    root = makeTree({ 'keep.txt': 'keep' });
    admin = await s.login();
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/disk', root) })).code).toBe(200);
    ({ listener, endpoint } = await startS3(s, [{ name: 'bkt', path: '/disk' }]));
    s3 = client(endpoint);
  });
  afterAll(async () => {
    s3?.destroy();
    await listener?.close();
    await s?.destroy();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('a size that can not fit on the storage is refused at init (multipart, tus), nothing is staged', async () => {
    const huge = 2 ** 50;
    const r = await init('/disk/huge.bin', huge);
    expect(r).toMatchObject({ code: 400, message: `not enough free space on the storage for ${huge} bytes` });
    const t = await tusCreate('/disk/huge.bin', huge);
    expect(t.status).toBe(413);
    expect(t.body).toBe(`not enough free space on the storage for ${huge} bytes`);
    expect(await s.core.repos.uploads.countReceiving(1)).toBe(0);
  });

  it('chunks below 64 KiB are refused unless one holds the whole file; tus keeps bytes in steps of 64 KiB', async () => {
    expect(await init('/disk/tiny.bin', 1024 * 1024, 1)).toMatchObject({ code: 400 });
    expect((await init('/disk/tiny.bin', 1024 * 1024, 1)).message).toContain('between 65536');
    expect((await init('/disk/tiny.bin', 1024 * 1024, 64 * 1024 - 1)).code).toBe(400);
    expect((await init('/disk/small.bin', 1000, 1000)).code).toBe(200);
    const ok = await init('/disk/ok.bin', 1024 * 1024, 64 * 1024);
    expect(ok.code, ok.message).toBe(200);
    expect(ok.data.total_chunks).toBe(16);

    const data = randomBytes(CHUNK * 2 + 10);
    const created = await tusCreate('/disk/steps.bin', data.length);
    const loc = created.headers.location as string;
    const short = await tusPatch(loc, 0, data.subarray(0, 1000));
    expect(short.status).toBe(400);
    expect(short.body).toBe('a PATCH body must hold at least 65536 bytes, unless it ends the upload');
    expect((await inject('HEAD', loc, { 'tus-resumable': '1.0.0' })).headers['upload-offset']).toBe('0');
    expect((await tusPatch(loc, 0, data.subarray(0, CHUNK))).status).toBe(204);
    expect((await tusPatch(loc, CHUNK, data.subarray(CHUNK, CHUNK * 2))).status).toBe(204);
    // The last body may be short: it ends the upload.
    expect((await tusPatch(loc, CHUNK * 2, data.subarray(CHUNK * 2))).status).toBe(204);
    expect(readFileSync(path.join(root, 'steps.bin')).equals(data)).toBe(true);
  });

  it('S3: UploadPart, ListParts, Complete and Abort addressed to another key than the upload\'s answer NoSuchUpload', async () => {
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'bkt', Key: 'mine.bin' }));
    const other = { Bucket: 'bkt', Key: 'other.bin', UploadId };
    await expect(s3.send(new UploadPartCommand({ ...other, PartNumber: 1, Body: DATA }))).rejects.toMatchObject({ name: 'NoSuchUpload' });
    await expect(s3.send(new ListPartsCommand(other))).rejects.toMatchObject({ name: 'NoSuchUpload' });
    await expect(s3.send(new CompleteMultipartUploadCommand({ ...other, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: '"x"' }] } }))).rejects.toMatchObject({ name: 'NoSuchUpload' });
    await expect(s3.send(new AbortMultipartUploadCommand(other))).rejects.toMatchObject({ name: 'NoSuchUpload' });
    expect(existsSync(path.join(root, 'other.bin'))).toBe(false);
    // The upload itself is untouched and completes.
    const part = await s3.send(new UploadPartCommand({ Bucket: 'bkt', Key: 'mine.bin', UploadId, PartNumber: 1, Body: DATA }));
    await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'bkt', Key: 'mine.bin', UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] } }));
    expect(readFileSync(path.join(root, 'mine.bin')).equals(DATA)).toBe(true);
  });

  it('S3: a part over 5 GiB, or larger than the free space, is refused before its body is read (EntityTooLarge)', async () => {
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'bkt', Key: 'big.bin' }));
    const r = await signedRequest(endpoint, 'PUT', `/bkt/big.bin?partNumber=1&uploadId=${UploadId}`, {
      headers: { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' },
      tamper: (h) => (h['content-length'] = String(5 * 1024 ** 3 + 1)),
      sendBody: '',
    });
    expect(r.status).toBe(400);
    expect(r.body).toContain('<Code>EntityTooLarge</Code><Message>Your proposed upload exceeds the maximum allowed size.</Message>');
    // The storage reports less free space than the parts staged so far and this one.
    const free = vi.spyOn(s.core.writer, 'freeSpace').mockResolvedValue(DATA.length + 10);
    try {
      await s3.send(new UploadPartCommand({ Bucket: 'bkt', Key: 'big.bin', UploadId, PartNumber: 1, Body: DATA }));
      await expect(s3.send(new UploadPartCommand({ Bucket: 'bkt', Key: 'big.bin', UploadId, PartNumber: 2, Body: DATA }))).rejects.toMatchObject({
        name: 'EntityTooLarge',
        message: `not enough free space on the storage for ${DATA.length * 2} bytes`,
      });
      // Sending part 1 again replaces it: it still fits.
      await s3.send(new UploadPartCommand({ Bucket: 'bkt', Key: 'big.bin', UploadId, PartNumber: 1, Body: DATA }));
    } finally {
      free.mockRestore();
    }
    const listed = await s3.send(new ListPartsCommand({ Bucket: 'bkt', Key: 'big.bin', UploadId }));
    expect(listed.Parts?.map((p) => p.PartNumber)).toEqual([1]);
  });

  it('an upload row from before the client path was kept (a virtual path) still completes, and is refused once the base path moved', async () => {
    const created = await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'older', password: 'older pass 1', base_path: '/disk/home', permission: WRITE } });
    expect(created.code).toBe(200);
    mkdirSync(path.join(root, 'home/sub'), { recursive: true });
    const token = await s.login('older', 'older pass 1');
    const call = async (method: string, url: string, headers: Record<string, string>, payload?: Buffer) =>
      JSON.parse((await s.inject({ method: method as 'GET', url, headers: { authorization: token, ...headers }, payload })).body) as { code: number; message: string; data: any };
    const start = async (file: string) => {
      const r = await call('POST', '/api/fs/multipart/init', { 'file-path': encodeURIComponent(file), 'x-file-size': String(DATA.length), 'x-chunk-size': String(CHUNK) });
      expect(r.code, r.message).toBe(200);
      const id = r.data.upload_id as string;
      // As rows were written before: the virtual path, no base path or password stamp.
      const row = (await s.core.repos.uploads.byId(id))!;
      const { base: _b, pwdTs: _p, ...options } = JSON.parse(row.options) as Record<string, unknown>;
      await s.core.db.db.updateTable('uploads').set({ path: `/disk/home${file}`, options: JSON.stringify(options) }).where('id', '=', id).execute();
      return id;
    };
    const chunkOf = (id: string, i: number) =>
      call('PUT', '/api/fs/multipart/chunk', { 'x-upload-id': id, 'x-chunk-index': String(i), 'content-type': 'application/octet-stream' }, DATA.subarray(i * CHUNK, (i + 1) * CHUNK));
    const before = await start('/old.bin');
    const moved = await start('/moved.bin');
    for (const i of [0, 1]) expect((await chunkOf(before, i)).code).toBe(200);
    const done = await call('POST', '/api/fs/multipart/complete', { 'x-upload-id': before });
    expect(done.code, done.message).toBe(200);
    expect(done.data.path).toBe('/old.bin');
    expect(readFileSync(path.join(root, 'home/old.bin')).equals(DATA)).toBe(true);

    expect((await chunkOf(moved, 0)).code).toBe(200);
    const me = await s.api('GET', '/api/me', { token });
    expect((await s.api('POST', '/api/admin/user/update', { token: admin, body: { id: me.data.id, username: 'older', base_path: '/disk/home/sub' } })).code).toBe(200);
    const next = await chunkOf(moved, 1);
    expect(next).toMatchObject({ code: 403, message: MSG_MOVED });
    expect(existsSync(path.join(root, 'home/moved.bin'))).toBe(false);
    expect(existsSync(path.join(root, 'home/sub/moved.bin'))).toBe(false);
  });
});

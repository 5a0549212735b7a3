import { rmSync, existsSync } from 'node:fs';
import path from 'node:path';
import { ListBucketsCommand, ListObjectsV2Command, PutObjectCommand, GetObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProtocolListener } from '../../src/protocols/listeners.js';
import { ONE_BACKEND } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { client, startS3 } from './s3-helpers.js';

describe.each(ONE_BACKEND)('per-user S3 access keys ($name)', (backend) => {
  let s: TestServer;
  let root: string;
  let listener: ProtocolListener;
  let endpoint: string;
  let admin: string;

  const makeUser = async (username: string, permission: number, basePath: string) => {
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: { username, password: 'pass word 1', permission, base_path: basePath } })).code).toBe(200);
    const token = await s.login(username, 'pass word 1');
    const made = await s.api('POST', '/api/me/s3key/create', { token, body: { title: 'laptop' } });
    expect(made.code).toBe(200);
    return { token, id: made.data.id as number, keyId: made.data.access_key_id as string, secret: made.data.secret_access_key as string };
  };

  beforeAll(async () => {
    s = await startServer(backend);
    root = makeTree({ 'pub/a.txt': 'alpha', 'pub/private/p.txt': 'private', 'other/o.txt': 'other' });
    admin = await s.login();
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/disk', root) })).code).toBe(200);
    expect((await s.api('POST', '/api/admin/meta/create', { token: admin, body: { path: '/disk/pub', hide: '^private$', h_sub: true, password: '', readme: '', header: '' } })).code).toBe(200);
    ({ listener, endpoint } = await startS3(s, [{ name: 'pub', path: '/disk/pub' }, { name: 'other', path: '/disk/other' }]));
  });
  afterAll(async () => {
    await listener?.close();
    await s?.destroy();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("a user's own key acts with that user's rules: buckets under the base path, hide rules, no write bit", async () => {
    const reader = await makeUser('reader', 0, '/disk/pub');
    const s3 = client(endpoint, { keyId: reader.keyId, secret: reader.secret });
    expect((await s3.send(new ListBucketsCommand({}))).Buckets?.map((b) => b.Name)).toEqual(['pub']);
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'pub' }));
    expect(listed.Contents?.map((c) => c.Key)).toEqual(['a.txt']);
    await expect(s3.send(new GetObjectCommand({ Bucket: 'pub', Key: 'private/p.txt' }))).rejects.toMatchObject({ name: 'NoSuchKey' });
    await expect(s3.send(new ListObjectsV2Command({ Bucket: 'other' }))).rejects.toMatchObject({ name: 'NoSuchBucket' });
    await expect(s3.send(new PutObjectCommand({ Bucket: 'pub', Key: 'new.txt', Body: 'x' }))).rejects.toMatchObject({ name: 'AccessDenied' });
    expect(existsSync(path.join(root, 'pub/new.txt'))).toBe(false);
    const keys = await s.api('GET', '/api/me/s3key/list', { token: reader.token });
    expect(keys.data.content.map((k: { access_key_id: string }) => k.access_key_id)).toEqual([reader.keyId]);
    expect(JSON.stringify(keys.data)).not.toContain(reader.secret);
    s3.destroy();
  });

  it('a writer writes; a revoked key is refused at once', async () => {
    const writer = await makeUser('writer', 8, '/disk');
    const s3 = client(endpoint, { keyId: writer.keyId, secret: writer.secret });
    await s3.send(new PutObjectCommand({ Bucket: 'other', Key: 'w.txt', Body: 'written' }));
    expect(existsSync(path.join(root, 'other/w.txt'))).toBe(true);
    expect((await s.api('POST', '/api/me/s3key/delete', { token: writer.token, query: { id: String(writer.id) } })).code).toBe(200);
    await expect(s3.send(new ListBucketsCommand({}))).rejects.toMatchObject({ name: 'InvalidAccessKeyId' });
    s.core.limiter.succeed('127.0.0.1');
    s3.destroy();
  });
});

import { createHash, randomBytes } from 'node:crypto';
import { rmSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProtocolListener } from '../../src/protocols/listeners.js';
import { MD5_ON_READ_MAX } from '../../src/protocols/s3/digests.js';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { client, startS3 } from './s3-helpers.js';

const md5 = (b: Buffer | string) => createHash('md5').update(b).digest('hex');

describe('S3 ETags are the MD5 of the content on a storage without hashes', () => {
  let s: TestServer;
  let root: string;
  let listener: ProtocolListener;
  let s3: S3Client;
  const big = randomBytes(MD5_ON_READ_MAX + 1);

  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
    root = makeTree({ 'b/disk.txt': 'written on the disk', 'b/big.bin': big });
    const admin = await s.login();
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/disk', root) })).code).toBe(200);
    let endpoint: string;
    ({ listener, endpoint } = await startS3(s, [{ name: 'bkt', path: '/disk/b' }]));
    s3 = client(endpoint);
  });
  afterAll(async () => {
    s3?.destroy();
    await listener?.close();
    await s?.destroy();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('PutObject answers the MD5 it computed, and HeadObject and GetObject answer it after', async () => {
    const body = randomBytes(100_000);
    const put = await s3.send(new PutObjectCommand({ Bucket: 'bkt', Key: 'put.bin', Body: body }));
    expect(put.ETag).toBe(`"${md5(body)}"`);
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'bkt', Key: 'put.bin' }))).ETag).toBe(`"${md5(body)}"`);
    expect((await s3.send(new GetObjectCommand({ Bucket: 'bkt', Key: 'put.bin' }))).ETag).toBe(`"${md5(body)}"`);
  });

  it('a file written by another front: its MD5 is learnt on the first read and forgotten when the file changes', async () => {
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'bkt', Key: 'disk.txt' }))).ETag).toBe(`"${md5('written on the disk')}"`);
    expect(await s.core.repos.objectDigests.get('/disk/b/disk.txt')).toMatchObject({ md5: md5('written on the disk') });
    writeFileSync(path.join(root, 'b/disk.txt'), 'changed by another front');
    utimesSync(path.join(root, 'b/disk.txt'), 1_800_000_000, 1_800_000_000);
    s.core.fs.invalidate('/disk/b', false);
    expect((await s3.send(new HeadObjectCommand({ Bucket: 'bkt', Key: 'disk.txt' }))).ETag).toBe(`"${md5('changed by another front')}"`);
    // Above the bound the file is not read for a HEAD: a stamp with a '-', never taken for an MD5.
    const etag = (await s3.send(new HeadObjectCommand({ Bucket: 'bkt', Key: 'big.bin' }))).ETag;
    expect(etag).toMatch(/^"[0-9a-f]{32}-1"$/);
    expect(etag).not.toBe(`"${md5(big)}"`);
    // Listings keep their one rendered buffer per folder: what they say of a file is stable.
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'bkt' }));
    expect(listed.Contents?.map((c) => c.Key).sort()).toEqual(['big.bin', 'disk.txt', 'put.bin']);
  });
});

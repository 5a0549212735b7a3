import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  ListMultipartUploadsCommand,
  ListObjectsCommand,
  ListObjectsV2Command,
  type ListObjectsV2CommandOutput,
  ListPartsCommand,
  PutObjectCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProtocolListener } from '../../src/protocols/listeners.js';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { client, presign, SECRET, saveSettings, startS3 } from './s3-helpers.js';

const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

describe('S3 server with @aws-sdk/client-s3', () => {
  let s: TestServer;
  let root: string;
  let listener: ProtocolListener;
  let endpoint: string;
  let admin: string;
  let s3: S3Client;

  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
    root = makeTree({ 'pub/a.txt': 'alpha', 'pub/dir/b.txt': 'bravo', 'pub/dir/sub/c.txt': 'charlie', 'other/secret.txt': 'top secret' });
    admin = await s.login();
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/disk', root) })).code).toBe(200);
    ({ listener, endpoint } = await startS3(s, [{ name: 'pub', path: '/disk/pub' }]));
    s3 = client(endpoint);
  });
  afterAll(async () => {
    s3?.destroy();
    await listener?.close();
    await s?.destroy();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('lists buckets and heads one; an unknown bucket is NoSuchBucket', async () => {
    const r = await s3.send(new ListBucketsCommand({}));
    expect(r.Buckets?.map((b) => b.Name)).toEqual(['pub']);
    await s3.send(new HeadBucketCommand({ Bucket: 'pub' }));
    await expect(s3.send(new ListObjectsV2Command({ Bucket: 'nope' }))).rejects.toMatchObject({ name: 'NoSuchBucket' });
  });

  it('ListObjectsV2 with prefix, delimiter, max-keys and continuation; v1 with marker', async () => {
    const all = await s3.send(new ListObjectsV2Command({ Bucket: 'pub' }));
    expect(all.Contents?.map((c) => c.Key)).toEqual(['a.txt', 'dir/b.txt', 'dir/sub/c.txt']);
    expect(all.Contents?.[0]?.Size).toBe(5);
    const top = await s3.send(new ListObjectsV2Command({ Bucket: 'pub', Delimiter: '/' }));
    expect(top.Contents?.map((c) => c.Key)).toEqual(['a.txt']);
    expect(top.CommonPrefixes?.map((c) => c.Prefix)).toEqual(['dir/']);
    const inDir = await s3.send(new ListObjectsV2Command({ Bucket: 'pub', Prefix: 'dir/', Delimiter: '/' }));
    expect(inDir.Contents?.map((c) => c.Key)).toEqual(['dir/b.txt']);
    expect(inDir.CommonPrefixes?.map((c) => c.Prefix)).toEqual(['dir/sub/']);
    const partial = await s3.send(new ListObjectsV2Command({ Bucket: 'pub', Prefix: 'dir/s' }));
    expect(partial.Contents?.map((c) => c.Key)).toEqual(['dir/sub/c.txt']);
    const p1 = await s3.send(new ListObjectsV2Command({ Bucket: 'pub', MaxKeys: 2 }));
    expect(p1.IsTruncated).toBe(true);
    expect(p1.KeyCount).toBe(2);
    const p2 = await s3.send(new ListObjectsV2Command({ Bucket: 'pub', MaxKeys: 2, ContinuationToken: p1.NextContinuationToken }));
    expect(p2.Contents?.map((c) => c.Key)).toEqual(['dir/sub/c.txt']);
    expect(p2.IsTruncated).toBe(false);
    const after = await s3.send(new ListObjectsV2Command({ Bucket: 'pub', StartAfter: 'dir/b.txt' }));
    expect(after.Contents?.map((c) => c.Key)).toEqual(['dir/sub/c.txt']);
    const v1 = await s3.send(new ListObjectsCommand({ Bucket: 'pub', Marker: 'a.txt' }));
    expect(v1.Contents?.map((c) => c.Key)).toEqual(['dir/b.txt', 'dir/sub/c.txt']);
  });

  it('lists in S3 key order (UTF-8 bytes) across folders, page by page, with any delimiter', async () => {
    const names = ['a-b.txt', 'a/x.txt', 'a/y/z.txt', 'a0.txt', 'b.txt', '\u00e9.txt', '\ue000.txt', '\u{1f600}.txt'];
    // Written in reverse: the listing order must not come from the folder's own order.
    for (const n of [...names].reverse()) makeTree({ [`order/${n}`]: n }, path.join(root, 'pub'));
    try {
      const keys = names.map((n) => `order/${n}`);
      // UTF-8 byte order: '-' < '/' < '0', and U+1F600 (a surrogate pair in UTF-16) after U+E000.
      const byBytes = [...keys].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
      expect(byBytes).toEqual(keys);
      const all = await s3.send(new ListObjectsV2Command({ Bucket: 'pub', Prefix: 'order/' }));
      expect(all.Contents?.map((c) => c.Key)).toEqual(keys);
      expect(all.Contents?.map((c) => c.Size)).toEqual(names.map((n) => Buffer.byteLength(n)));

      // One key per page, by continuation token and (v1) by marker: the same keys, each once.
      const paged: string[] = [];
      let token: string | undefined;
      do {
        const r: ListObjectsV2CommandOutput = await s3.send(new ListObjectsV2Command({ Bucket: 'pub', Prefix: 'order/', MaxKeys: 1, ContinuationToken: token }));
        paged.push(...(r.Contents ?? []).map((c) => c.Key!));
        token = r.NextContinuationToken;
      } while (token);
      expect(paged).toEqual(keys);
      const byMarker: string[] = [];
      let marker = '';
      for (;;) {
        const r = await s3.send(new ListObjectsCommand({ Bucket: 'pub', Prefix: 'order/', MaxKeys: 3, Marker: marker || undefined }));
        byMarker.push(...(r.Contents ?? []).map((c) => c.Key!));
        if (!r.IsTruncated) break;
        marker = r.Contents!.at(-1)!.Key!;
      }
      expect(byMarker).toEqual(keys);

      const after = await s3.send(new ListObjectsV2Command({ Bucket: 'pub', Prefix: 'order/', StartAfter: 'order/a/x.txt' }));
      expect(after.Contents?.map((c) => c.Key)).toEqual(keys.slice(2));
      const afterFolder = await s3.send(new ListObjectsV2Command({ Bucket: 'pub', Prefix: 'order/', StartAfter: 'order/a/' }));
      expect(afterFolder.Contents?.map((c) => c.Key)).toEqual(keys.slice(1));

      // Delimiter '/': the folder is one common prefix, in its place in the order, across pages.
      const rows: string[] = [];
      token = undefined;
      do {
        const r: ListObjectsV2CommandOutput = await s3.send(new ListObjectsV2Command({ Bucket: 'pub', Prefix: 'order/', Delimiter: '/', MaxKeys: 2, ContinuationToken: token }));
        expect((r.Contents?.length ?? 0) + (r.CommonPrefixes?.length ?? 0)).toBe(r.KeyCount);
        rows.push(...(r.Contents ?? []).map((c) => c.Key!), ...(r.CommonPrefixes ?? []).map((c) => c.Prefix!));
        token = r.NextContinuationToken;
      } while (token);
      expect(rows.sort()).toEqual(['order/a-b.txt', 'order/a/', ...keys.slice(3)].sort());

      // Any other delimiter rolls the keys that hold it into one prefix each, even across folders and pages.
      const dash = await s3.send(new ListObjectsV2Command({ Bucket: 'pub', Prefix: 'order/', Delimiter: '-' }));
      expect(dash.CommonPrefixes?.map((c) => c.Prefix)).toEqual(['order/a-']);
      expect(dash.Contents?.map((c) => c.Key)).toEqual(keys.slice(1));
      const dot: string[] = [];
      token = undefined;
      do {
        const r: ListObjectsV2CommandOutput = await s3.send(new ListObjectsV2Command({ Bucket: 'pub', Prefix: 'order/a', Delimiter: '.', MaxKeys: 1, ContinuationToken: token }));
        dot.push(...(r.Contents ?? []).map((c) => c.Key!), ...(r.CommonPrefixes ?? []).map((c) => c.Prefix!));
        token = r.NextContinuationToken;
      } while (token);
      expect(dot).toEqual(['order/a-b.', 'order/a/x.', 'order/a/y/z.', 'order/a0.']);
    } finally {
      rmSync(path.join(root, 'pub/order'), { recursive: true, force: true });
    }
  });

  it('GetObject whole, by range, with conditionals; HeadObject; missing key is NoSuchKey', async () => {
    const got = await s3.send(new GetObjectCommand({ Bucket: 'pub', Key: 'dir/b.txt' }));
    expect(await got.Body!.transformToString()).toBe('bravo');
    const etag = got.ETag!;
    const part = await s3.send(new GetObjectCommand({ Bucket: 'pub', Key: 'dir/b.txt', Range: 'bytes=1-3' }));
    expect(await part.Body!.transformToString()).toBe('rav');
    expect(part.ContentRange).toBe('bytes 1-3/5');
    const head = await s3.send(new HeadObjectCommand({ Bucket: 'pub', Key: 'dir/b.txt' }));
    expect(head.ContentLength).toBe(5);
    expect(head.ETag).toBe(etag);
    await expect(s3.send(new GetObjectCommand({ Bucket: 'pub', Key: 'dir/b.txt', IfNoneMatch: etag }))).rejects.toMatchObject({ $metadata: { httpStatusCode: 304 } });
    await expect(s3.send(new GetObjectCommand({ Bucket: 'pub', Key: 'dir/b.txt', IfMatch: '"other"' }))).rejects.toMatchObject({ $metadata: { httpStatusCode: 412 } });
    await expect(s3.send(new GetObjectCommand({ Bucket: 'pub', Key: 'dir/b.txt', Range: 'bytes=10-20' }))).rejects.toMatchObject({ name: 'InvalidRange' });
    await expect(s3.send(new GetObjectCommand({ Bucket: 'pub', Key: 'nothing.txt' }))).rejects.toMatchObject({ name: 'NoSuchKey' });
    await expect(s3.send(new HeadObjectCommand({ Bucket: 'pub', Key: 'nothing.txt' }))).rejects.toMatchObject({ $metadata: { httpStatusCode: 404 } });
  });

  it('PutObject stores the bytes (signed payload and the SDK’s aws-chunked trailer); no temporary file is left', async () => {
    const body = randomBytes(300_000);
    const r = await s3.send(new PutObjectCommand({ Bucket: 'pub', Key: 'up/new file é.bin', Body: body }));
    expect(r.ETag).toBeTruthy();
    expect(readFileSync(path.join(root, 'pub/up/new file é.bin')).equals(body)).toBe(true);
    const withMd5 = await s3.send(new PutObjectCommand({ Bucket: 'pub', Key: 'up/small.txt', Body: 'hello', ContentMD5: Buffer.from(md5(Buffer.from('hello')), 'hex').toString('base64') }));
    expect(withMd5.ETag).toBeTruthy();
    expect(readFileSync(path.join(root, 'pub/up/small.txt'), 'utf8')).toBe('hello');
    await expect(
      s3.send(new PutObjectCommand({ Bucket: 'pub', Key: 'up/bad.txt', Body: 'hello', ContentMD5: Buffer.from(md5(Buffer.from('other')), 'hex').toString('base64') })),
    ).rejects.toMatchObject({ $metadata: { httpStatusCode: 400 } });
    expect(existsSync(path.join(root, 'pub/up/bad.txt'))).toBe(false);
    const tmp = path.join(root, '.atrium-tmp');
    if (existsSync(tmp)) expect(readdirSync(tmp)).toEqual([]);
  });

  it('CopyObject within and across folders; DeleteObject and DeleteObjects', async () => {
    const c = await s3.send(new CopyObjectCommand({ Bucket: 'pub', Key: 'copies/a copy.txt', CopySource: 'pub/a.txt' }));
    expect(c.CopyObjectResult?.ETag).toBeTruthy();
    expect(readFileSync(path.join(root, 'pub/copies/a copy.txt'), 'utf8')).toBe('alpha');
    await s3.send(new DeleteObjectCommand({ Bucket: 'pub', Key: 'copies/a copy.txt' }));
    expect(existsSync(path.join(root, 'pub/copies/a copy.txt'))).toBe(false);
    await s3.send(new DeleteObjectCommand({ Bucket: 'pub', Key: 'never/was.txt' }));
    writeFileSync(path.join(root, 'pub/x1.txt'), '1');
    writeFileSync(path.join(root, 'pub/x2.txt'), '2');
    const d = await s3.send(new DeleteObjectsCommand({ Bucket: 'pub', Delete: { Objects: [{ Key: 'x1.txt' }, { Key: 'x2.txt' }, { Key: '../other/secret.txt' }] } }));
    expect(d.Deleted?.map((x) => x.Key).sort()).toEqual(['x1.txt', 'x2.txt']);
    expect(d.Errors?.map((x) => [x.Key, x.Code])).toEqual([['../other/secret.txt', 'AccessDenied']]);
    expect(existsSync(path.join(root, 'pub/x1.txt'))).toBe(false);
    expect(readFileSync(path.join(root, 'other/secret.txt'), 'utf8')).toBe('top secret');
  });

  it('multipart upload: parts staged, listed, completed in order into one file; abort drops the staging', async () => {
    const parts = [randomBytes(5 * 1024 * 1024), randomBytes(5 * 1024 * 1024), randomBytes(1234)];
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'pub', Key: 'big/joined.bin' }));
    const etags: string[] = [];
    for (const [i, p] of parts.entries()) {
      const r = await s3.send(new UploadPartCommand({ Bucket: 'pub', Key: 'big/joined.bin', UploadId, PartNumber: i + 1, Body: p }));
      expect(r.ETag).toBe(`"${md5(p)}"`);
      etags.push(r.ETag!);
    }
    const listed = await s3.send(new ListPartsCommand({ Bucket: 'pub', Key: 'big/joined.bin', UploadId }));
    expect(listed.Parts?.map((p) => [p.PartNumber, p.Size])).toEqual([[1, parts[0]!.length], [2, parts[1]!.length], [3, 1234]]);
    const uploads = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'pub' }));
    expect(uploads.Uploads?.map((u) => u.UploadId)).toContain(UploadId);
    expect(existsSync(path.join(root, 'pub/big/joined.bin'))).toBe(false);
    await s3.send(
      new CompleteMultipartUploadCommand({ Bucket: 'pub', Key: 'big/joined.bin', UploadId, MultipartUpload: { Parts: etags.map((ETag, i) => ({ ETag, PartNumber: i + 1 })) } }),
    );
    expect(readFileSync(path.join(root, 'pub/big/joined.bin')).equals(Buffer.concat(parts))).toBe(true);
    expect(existsSync(path.join(s.core.config.temp_dir, 's3-multipart', UploadId!))).toBe(false);

    const second = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'pub', Key: 'big/dropped.bin' }));
    await s3.send(new UploadPartCommand({ Bucket: 'pub', Key: 'big/dropped.bin', UploadId: second.UploadId, PartNumber: 1, Body: 'x' }));
    await s3.send(new AbortMultipartUploadCommand({ Bucket: 'pub', Key: 'big/dropped.bin', UploadId: second.UploadId }));
    expect(existsSync(path.join(s.core.config.temp_dir, 's3-multipart', second.UploadId!))).toBe(false);
    await expect(s3.send(new ListPartsCommand({ Bucket: 'pub', Key: 'big/dropped.bin', UploadId: second.UploadId }))).rejects.toMatchObject({ name: 'NoSuchUpload' });
  });

  it('staged uploads older than seven days are dropped, recent ones kept', async () => {
    const { Multipart, UPLOAD_MAX_AGE_MS } = await import('../../src/protocols/s3/multipart.js');
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'pub', Key: 'stale.bin' }));
    const mp = new Multipart(s.core);
    expect(await mp.dropStale()).toBe(0);
    expect(existsSync(path.join(s.core.config.temp_dir, 's3-multipart', UploadId!))).toBe(true);
    expect(await mp.dropStale(Date.now() + UPLOAD_MAX_AGE_MS + 1000)).toBe(1);
    expect(existsSync(path.join(s.core.config.temp_dir, 's3-multipart', UploadId!))).toBe(false);
  });

  it('a changed key pair and bucket list apply without a restart', async () => {
    await saveSettings(s, admin, { s3_buckets: JSON.stringify([{ name: 'pub', path: '/disk/pub' }, { name: 'other', path: '/disk/other' }]) });
    const names = (await s3.send(new ListBucketsCommand({}))).Buckets?.map((b) => b.Name);
    expect(names).toEqual(['pub', 'other']);
    await saveSettings(s, admin, { s3_secret_access_key: 'a-new-secret-0123456789' });
    await expect(s3.send(new ListBucketsCommand({}))).rejects.toMatchObject({ name: 'SignatureDoesNotMatch' });
    const fresh = client(endpoint, { secret: 'a-new-secret-0123456789' });
    expect((await fresh.send(new ListBucketsCommand({}))).Buckets?.length).toBe(2);
    fresh.destroy();
    s.core.limiter.succeed('127.0.0.1');
    await saveSettings(s, admin, { s3_secret_access_key: SECRET, s3_buckets: JSON.stringify([{ name: 'pub', path: '/disk/pub' }]) });
  });

  it('presigned GET works until it expires; a tampered one is refused', async () => {
    const url = await presign(endpoint, 'GET', 'pub/a.txt', { expiresIn: 60 });
    const ok = await fetch(url);
    expect(ok.status, await ok.clone().text()).toBe(200);
    expect(await ok.text()).toBe('alpha');
    const tampered = await fetch(url.replace('a.txt', 'dir/b.txt'));
    expect(tampered.status).toBe(403);
    expect(await tampered.text()).toContain('<Code>SignatureDoesNotMatch</Code>');
    const old = await presign(endpoint, 'GET', 'pub/a.txt', { expiresIn: 1, signingDate: new Date(Date.now() - 60_000) });
    const expired = await fetch(old);
    expect(expired.status).toBe(403);
    expect(await expired.text()).toContain('Request has expired');
    s.core.limiter.succeed('127.0.0.1');
  });
});

import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ListObjectsCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProtocolListener } from '../../src/protocols/listeners.js';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { rclone, remoteEnv } from '../helpers/rclone.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { requireProgram } from '../webdav/dav-helpers.js';
import { client, KEY_ID, SECRET, signedRequest, startS3 } from './s3-helpers.js';

// ListObjects pages above S3's default of 1 000 keys: max-keys up to 10 000 is honoured, more
// is clamped to 10 000, no max-keys is 1 000. Over one folder of 12 000 files.

const COUNT = 12_000;
const name = (i: number) => `f${String(i).padStart(5, '0')}.txt`;
const keys = Array.from({ length: COUNT }, (_, i) => `big/${name(i)}`);
const rclonePresent = requireProgram('rclone', "rclone's --s3-list-chunk listing");

describe('S3 ListObjects pages above 1 000 keys', () => {
  let s: TestServer;
  let root: string;
  let listener: ProtocolListener;
  let endpoint: string;
  let s3: S3Client;

  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
    root = makeTree({});
    const dir = path.join(root, 'bkt', 'big');
    mkdirSync(dir, { recursive: true });
    // Each file holds its own index: sizes tell the keys' objects apart.
    for (let i = 0; i < COUNT; i++) writeFileSync(path.join(dir, name(i)), String(i));
    const admin = await s.login();
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/disk', root) })).code).toBe(200);
    ({ listener, endpoint } = await startS3(s, [{ name: 'bkt', path: '/disk/bkt' }]));
    s3 = client(endpoint);
  }, 120_000);
  afterAll(async () => {
    s3?.destroy();
    await listener?.close();
    await s?.destroy();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('ListObjectsV2 with MaxKeys 5 000 gives exactly 5 000 keys, truncated, and its continuation the rest', async () => {
    const seen: string[] = [];
    const counts: number[] = [];
    let token: string | undefined;
    do {
      const r = await s3.send(new ListObjectsV2Command({ Bucket: 'bkt', Prefix: 'big/', MaxKeys: 5000, ContinuationToken: token }));
      expect(r.MaxKeys).toBe(5000);
      expect(r.KeyCount).toBe(r.Contents?.length);
      counts.push(r.Contents?.length ?? 0);
      for (const c of r.Contents ?? []) {
        seen.push(c.Key!);
        expect(c.Size).toBe(String(Number(c.Key!.slice(5, 10))).length);
      }
      expect(r.IsTruncated).toBe(seen.length < COUNT);
      expect(r.NextContinuationToken === undefined).toBe(!r.IsTruncated);
      token = r.NextContinuationToken;
    } while (token);
    expect(counts).toEqual([5000, 5000, 2000]);
    expect(seen).toEqual(keys);
  });

  it('MaxKeys 20 000 is clamped to 10 000; no MaxKeys is 1 000', async () => {
    const big = await s3.send(new ListObjectsV2Command({ Bucket: 'bkt', MaxKeys: 20_000 }));
    expect(big.MaxKeys).toBe(10_000);
    expect(big.KeyCount).toBe(10_000);
    expect(big.Contents?.map((c) => c.Key)).toEqual(keys.slice(0, 10_000));
    expect(big.IsTruncated).toBe(true);
    const rest = await s3.send(new ListObjectsV2Command({ Bucket: 'bkt', MaxKeys: 20_000, ContinuationToken: big.NextContinuationToken }));
    expect(rest.Contents?.map((c) => c.Key)).toEqual(keys.slice(10_000));
    expect(rest.IsTruncated).toBe(false);
    expect(rest.NextContinuationToken).toBeUndefined();

    const plain = await s3.send(new ListObjectsV2Command({ Bucket: 'bkt' }));
    expect(plain.MaxKeys).toBe(1000);
    expect(plain.Contents?.map((c) => c.Key)).toEqual(keys.slice(0, 1000));
    expect(plain.IsTruncated).toBe(true);
  });

  it('ListObjects v1: MaxKeys 5 000 with a delimiter gives NextMarker at the 5 000th key, and the marker the rest', async () => {
    const p1 = await s3.send(new ListObjectsCommand({ Bucket: 'bkt', Prefix: 'big/', Delimiter: '/', MaxKeys: 5000 }));
    expect(p1.MaxKeys).toBe(5000);
    expect(p1.Contents?.map((c) => c.Key)).toEqual(keys.slice(0, 5000));
    expect(p1.IsTruncated).toBe(true);
    expect(p1.NextMarker).toBe(keys[4999]);
    const p2 = await s3.send(new ListObjectsCommand({ Bucket: 'bkt', Prefix: 'big/', Delimiter: '/', MaxKeys: 99_999, Marker: p1.NextMarker }));
    expect(p2.MaxKeys).toBe(10_000);
    expect(p2.Contents?.map((c) => c.Key)).toEqual(keys.slice(5000));
    expect(p2.IsTruncated).toBe(false);
    expect(p2.NextMarker).toBeUndefined();
  });

  it('a max-keys that is negative or no number is InvalidArgument; one of 40 digits is clamped', async () => {
    for (const bad of ['-1', 'abc', '1e4', '']) {
      const r = await signedRequest(endpoint, 'GET', `/bkt?list-type=2&max-keys=${encodeURIComponent(bad)}`);
      expect(r.status, bad).toBe(400);
      expect(r.body).toContain('<Code>InvalidArgument</Code>');
    }
    const huge = await signedRequest(endpoint, 'GET', `/bkt?list-type=2&max-keys=${'9'.repeat(40)}`);
    expect(huge.status).toBe(200);
    expect(huge.body).toContain('<MaxKeys>10000</MaxKeys>');
    expect(huge.body.split('<Contents>').length - 1).toBe(10_000);
  });

  it.runIf(rclonePresent)('rclone with --s3-list-chunk 10000 lists the folder in two requests of 10 000 keys', async () => {
    const host = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_')));
    const env = remoteEnv({ TYPE: 's3', PROVIDER: 'Other', ENDPOINT: endpoint, ACCESS_KEY_ID: KEY_ID, SECRET_ACCESS_KEY: SECRET, FORCE_PATH_STYLE: 'true' }, host);
    const r = await rclone(env, ['lsf', '--s3-list-chunk', '10000', '--dump', 'headers', 'X:bkt/big'], 120_000);
    expect(r.stdout.trim().split('\n')).toEqual(keys.map((k) => k.slice(4)));
    // The listing requests rclone made (in --dump headers' log): two, each asking for 10 000.
    const lists = r.stderr.split('\n').filter((l) => /GET \/bkt\?\S*prefix=big/.test(l));
    expect(lists).toHaveLength(2);
    for (const l of lists) expect(l).toContain('max-keys=10000');
  }, 120_000);
});

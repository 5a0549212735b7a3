import { rmSync } from 'node:fs';
import {
  CreateMultipartUploadCommand,
  ListMultipartUploadsCommand,
  type ListMultipartUploadsCommandOutput,
  ListPartsCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProtocolListener } from '../../src/protocols/listeners.js';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { client, signedRequest, startS3 } from './s3-helpers.js';

// ListParts and ListMultipartUploads pages: max-parts / part-number-marker, and max-uploads /
// key-marker / upload-id-marker / prefix / delimiter, as S3 defines them; bad counts are
// InvalidArgument.

describe('S3 multipart listings in pages', () => {
  let s: TestServer;
  let root: string;
  let listener: ProtocolListener;
  let endpoint: string;
  let admin: string;
  let s3: S3Client;

  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
    root = makeTree({ 'bkt/keep.txt': 'kept', 'mpu/keep.txt': 'kept' });
    admin = await s.login();
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/disk', root) })).code).toBe(200);
    ({ listener, endpoint } = await startS3(s, [{ name: 'bkt', path: '/disk/bkt' }, { name: 'mpu', path: '/disk/mpu' }]));
    s3 = client(endpoint);
  });
  afterAll(async () => {
    s3?.destroy();
    await listener?.close();
    await s?.destroy();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  const create = async (Bucket: string, Key: string) => (await s3.send(new CreateMultipartUploadCommand({ Bucket, Key }))).UploadId!;
  const rawGet = (query: string) => signedRequest(endpoint, 'GET', `/bkt/${query}`);
  const expectInvalid = async (query: string, name: string) => {
    const r = await rawGet(query);
    expect(r.status, query).toBe(400);
    expect(r.body).toContain('<Code>InvalidArgument</Code>');
    expect(r.body).toContain(name);
  };

  it('ListParts pages with MaxParts and PartNumberMarker, over parts with gaps', async () => {
    const Key = 'parts.bin';
    const UploadId = await create('bkt', Key);
    const numbers = [1, 2, 3, 5, 8];
    for (const n of numbers) await s3.send(new UploadPartCommand({ Bucket: 'bkt', Key, UploadId, PartNumber: n, Body: `part ${n}`.repeat(n) }));

    const pages: Array<{ marker: string | undefined; next: string | undefined; parts: number[]; truncated: boolean | undefined; max: number | undefined }> = [];
    let marker: string | undefined;
    for (;;) {
      const r = await s3.send(new ListPartsCommand({ Bucket: 'bkt', Key, UploadId, MaxParts: 2, PartNumberMarker: marker }));
      pages.push({ marker: r.PartNumberMarker, next: r.NextPartNumberMarker, parts: r.Parts?.map((p) => p.PartNumber!) ?? [], truncated: r.IsTruncated, max: r.MaxParts });
      for (const p of r.Parts ?? []) expect(p.Size).toBe(`part ${p.PartNumber}`.length * p.PartNumber!);
      if (!r.IsTruncated) break;
      marker = r.NextPartNumberMarker;
      expect(pages.length).toBeLessThan(10);
    }
    expect(pages).toEqual([
      { marker: '0', next: '2', parts: [1, 2], truncated: true, max: 2 },
      { marker: '2', next: '5', parts: [3, 5], truncated: true, max: 2 },
      { marker: '5', next: '8', parts: [8], truncated: false, max: 2 },
    ]);

    // A marker between part numbers starts after it; past the last part the page is empty.
    const mid = await s3.send(new ListPartsCommand({ Bucket: 'bkt', Key, UploadId, PartNumberMarker: '4' }));
    expect(mid.Parts?.map((p) => p.PartNumber)).toEqual([5, 8]);
    expect(mid.IsTruncated).toBe(false);
    const past = await s3.send(new ListPartsCommand({ Bucket: 'bkt', Key, UploadId, PartNumberMarker: '8' }));
    expect(past.Parts ?? []).toEqual([]);
    expect(past.IsTruncated).toBe(false);

    // No MaxParts is 1 000; more than 1 000 is clamped to it.
    expect((await s3.send(new ListPartsCommand({ Bucket: 'bkt', Key, UploadId }))).MaxParts).toBe(1000);
    const big = await s3.send(new ListPartsCommand({ Bucket: 'bkt', Key, UploadId, MaxParts: 5000 }));
    expect(big.MaxParts).toBe(1000);
    expect(big.Parts?.map((p) => p.PartNumber)).toEqual(numbers);

    // Negative, fractional, non-numeric and oversized counts are InvalidArgument, not a 500 or a silent default.
    const base = `${Key}?uploadId=${UploadId}`;
    for (const bad of ['-5', '1.5', 'abc', '', '1e3', '99999999999']) await expectInvalid(`${base}&max-parts=${encodeURIComponent(bad)}`, 'max-parts');
    for (const bad of ['-1', 'x', '2.5']) await expectInvalid(`${base}&part-number-marker=${encodeURIComponent(bad)}`, 'part-number-marker');
    const ok = await rawGet(`${base}&max-parts=3&part-number-marker=1`);
    expect(ok.status).toBe(200);
    expect(ok.body).toContain('<PartNumberMarker>1</PartNumberMarker><NextPartNumberMarker>5</NextPartNumberMarker><MaxParts>3</MaxParts><IsTruncated>true</IsTruncated>');
  });

  describe('ListMultipartUploads', () => {
    // In S3's order: by key, then a key's uploads in the order they started.
    const keys = ['a.bin', 'a.bin', 'a.bin', 'b.bin', 'dir/c.bin', 'dir/d.bin', 'dir/sub/e.bin', 'z.bin'];
    let order: Array<{ key: string; id: string }>;

    beforeAll(async () => {
      // Started out of key order, so the answer's order is the server's doing.
      const made: Array<{ key: string; id: string }> = [];
      for (const key of ['z.bin', 'a.bin', 'dir/sub/e.bin', 'a.bin', 'dir/d.bin', 'b.bin', 'a.bin', 'dir/c.bin']) made.push({ key, id: await create('mpu', key) });
      order = keys.map((k, i) => made.filter((m) => m.key === k)[keys.slice(0, i).filter((x) => x === k).length]!);
    });

    const pairs = (r: ListMultipartUploadsCommandOutput) => (r.Uploads ?? []).map((u) => ({ key: u.Key!, id: u.UploadId! }));

    it('pages with MaxUploads, KeyMarker and UploadIdMarker, splitting one key\'s uploads between pages', async () => {
      const seen: Array<{ key: string; id: string }> = [];
      const sizes: number[] = [];
      let KeyMarker: string | undefined;
      let UploadIdMarker: string | undefined;
      for (;;) {
        const r = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'mpu', MaxUploads: 2, KeyMarker, UploadIdMarker }));
        expect(r.MaxUploads).toBe(2);
        expect(r.KeyMarker ?? '').toBe(KeyMarker ?? '');
        sizes.push(r.Uploads?.length ?? 0);
        seen.push(...pairs(r));
        if (!r.IsTruncated) {
          expect(r.NextKeyMarker).toBeUndefined();
          break;
        }
        expect({ key: r.NextKeyMarker, id: r.NextUploadIdMarker }).toEqual(seen[seen.length - 1]);
        ({ NextKeyMarker: KeyMarker, NextUploadIdMarker: UploadIdMarker } = r);
        expect(sizes.length).toBeLessThan(10);
      }
      expect(sizes).toEqual([2, 2, 2, 2]);
      expect(seen).toEqual(order);
      // A key's uploads in the order they started.
      const a = order.filter((o) => o.key === 'a.bin').map((o) => o.id);
      expect([...a].sort()).toEqual(a);
    });

    it('KeyMarker alone skips the whole key; UploadIdMarker without KeyMarker is ignored', async () => {
      const afterA = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'mpu', KeyMarker: 'a.bin' }));
      expect(pairs(afterA)).toEqual(order.slice(3));
      const between = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'mpu', KeyMarker: 'c' }));
      expect(pairs(between)).toEqual(order.slice(4));
      const idOnly = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'mpu', UploadIdMarker: order[1]!.id }));
      expect(pairs(idOnly)).toEqual(order);
      const afterFirstA = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'mpu', KeyMarker: 'a.bin', UploadIdMarker: order[0]!.id }));
      expect(pairs(afterFirstA)).toEqual(order.slice(1));
    });

    it('Prefix narrows; Delimiter rolls keys up into CommonPrefixes that count against MaxUploads', async () => {
      const dir = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'mpu', Prefix: 'dir/' }));
      expect(dir.Prefix).toBe('dir/');
      expect(pairs(dir)).toEqual(order.slice(4, 7));

      const top = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'mpu', Delimiter: '/' }));
      expect(top.Delimiter).toBe('/');
      expect(pairs(top)).toEqual([...order.slice(0, 4), order[7]]);
      expect(top.CommonPrefixes?.map((p) => p.Prefix)).toEqual(['dir/']);

      const inDir = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'mpu', Prefix: 'dir/', Delimiter: '/' }));
      expect(pairs(inDir)).toEqual(order.slice(4, 6));
      expect(inDir.CommonPrefixes?.map((p) => p.Prefix)).toEqual(['dir/sub/']);

      // One row a page: the common prefix is a page of its own and the next page goes on after it.
      const rows: string[] = [];
      let KeyMarker: string | undefined;
      let UploadIdMarker: string | undefined;
      for (;;) {
        const r = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'mpu', Delimiter: '/', MaxUploads: 1, KeyMarker, UploadIdMarker }));
        const row = [...(r.Uploads ?? []).map((u) => u.Key!), ...(r.CommonPrefixes ?? []).map((p) => `prefix ${p.Prefix}`)];
        expect(row.length).toBe(1);
        rows.push(row[0]!);
        if (!r.IsTruncated) break;
        ({ NextKeyMarker: KeyMarker, NextUploadIdMarker: UploadIdMarker } = r);
        expect(rows.length).toBeLessThan(20);
      }
      expect(rows).toEqual(['a.bin', 'a.bin', 'a.bin', 'b.bin', 'prefix dir/', 'z.bin']);
    });

    it('MaxUploads: none is 1 000, more is clamped to 1 000; bad values are InvalidArgument', async () => {
      expect((await s3.send(new ListMultipartUploadsCommand({ Bucket: 'mpu' }))).MaxUploads).toBe(1000);
      const big = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'mpu', MaxUploads: 5000 }));
      expect(big.MaxUploads).toBe(1000);
      expect(pairs(big)).toEqual(order);
      for (const bad of ['-1', '2.5', 'many', '', '99999999999']) await expectInvalid(`?uploads&max-uploads=${encodeURIComponent(bad)}`, 'max-uploads');
    });

    it("another user's key sees its own uploads only, and the admin's listing leaves them out", async () => {
      expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'mpuser', password: 'pass word 1', permission: 8, base_path: '/' } })).code).toBe(200);
      const token = await s.login('mpuser', 'pass word 1');
      const made = await s.api('POST', '/api/me/s3key/create', { token, body: { title: 'laptop' } });
      expect(made.code).toBe(200);
      const other = client(endpoint, { keyId: made.data.access_key_id as string, secret: made.data.secret_access_key as string });
      try {
        const theirs = (await other.send(new CreateMultipartUploadCommand({ Bucket: 'mpu', Key: 'b.bin' }))).UploadId!;
        const listed = await other.send(new ListMultipartUploadsCommand({ Bucket: 'mpu' }));
        expect(pairs(listed)).toEqual([{ key: 'b.bin', id: theirs }]);
        const mine = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'mpu' }));
        expect(pairs(mine)).toEqual(order);
      } finally {
        other.destroy();
      }
    });
  });

  it("one key's uploads list in the order they started, whatever their random part", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push(await create('bkt', 'same/key.bin'));
    const r = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'bkt', Prefix: 'same/' }));
    expect(r.Uploads?.map((u) => u.UploadId)).toEqual(ids);
    const initiated = r.Uploads!.map((u) => u.Initiated!.getTime());
    expect([...initiated].sort((x, y) => x - y)).toEqual(initiated);
  });

  it('encoding-type=url encodes keys and prefixes in the uploads listing', async () => {
    const id = await create('bkt', 'enc/a b&c.bin');
    await create('bkt', 'enc/sub dir/x.bin');
    const r = await rawGet(`?uploads&prefix=enc%2F&delimiter=%2F&encoding-type=url`);
    expect(r.status).toBe(200);
    expect(r.body).toContain(`<Upload><Key>enc/a%20b%26c.bin</Key><UploadId>${id}</UploadId>`);
    expect(r.body).toContain('<CommonPrefixes><Prefix>enc/sub%20dir/</Prefix></CommonPrefixes>');
    expect(r.body).toContain('<EncodingType>url</EncodingType>');
    const plain = await rawGet(`?uploads&prefix=enc%2F&delimiter=%2F`);
    expect(plain.body).toContain('<Key>enc/a b&amp;c.bin</Key>');
  });

  it('more than 1 000 uploads: the first page holds 1 000 and the next the rest', async () => {
    const ids: string[] = [];
    const N = 1003;
    for (let i = 0; i < N; i += 20) {
      const batch = Array.from({ length: Math.min(20, N - i) }, (_, j) => create('bkt', `many/k${String(i + j).padStart(4, '0')}`));
      ids.push(...(await Promise.all(batch)));
    }
    const first = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'bkt', Prefix: 'many/' }));
    expect(first.Uploads?.length).toBe(1000);
    expect(first.IsTruncated).toBe(true);
    expect(first.NextKeyMarker).toBe('many/k0999');
    const rest = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'bkt', Prefix: 'many/', KeyMarker: first.NextKeyMarker, UploadIdMarker: first.NextUploadIdMarker }));
    expect(rest.IsTruncated).toBe(false);
    const all = [...(first.Uploads ?? []), ...(rest.Uploads ?? [])];
    expect(all.map((u) => u.UploadId)).toEqual(ids);
    expect(all.map((u) => u.Key)).toEqual(ids.map((_, i) => `many/k${String(i).padStart(4, '0')}`));
  }, 60_000);
});

import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import {
  type ChecksumAlgorithm,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  ListPartsCommand,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checksumBase64 } from '../../src/protocols/s3/checksums.js';
import type { ProtocolListener } from '../../src/protocols/listeners.js';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { chunkedPut, client, signedRequest, startS3 } from './s3-helpers.js';

const ALGORITHMS: Array<[ChecksumAlgorithm, 'crc32' | 'crc32c' | 'crc64nvme' | 'sha1' | 'sha256', 'ChecksumCRC32' | 'ChecksumCRC32C' | 'ChecksumCRC64NVME' | 'ChecksumSHA1' | 'ChecksumSHA256']> = [
  ['CRC32', 'crc32', 'ChecksumCRC32'],
  ['CRC32C', 'crc32c', 'ChecksumCRC32C'],
  ['CRC64NVME', 'crc64nvme', 'ChecksumCRC64NVME'],
  ['SHA1', 'sha1', 'ChecksumSHA1'],
  ['SHA256', 'sha256', 'ChecksumSHA256'],
];

describe('S3 flexible checksums: headers and aws-chunked trailers', () => {
  let s: TestServer;
  let root: string;
  let listener: ProtocolListener;
  let endpoint: string;
  let s3: S3Client;
  /** The headers of every request the SDK client sent, as it sent them. */
  const sent: Array<Record<string, string>> = [];

  /** The names in the bucket folder; the storage's temporary folder must be empty or gone. */
  const files = () => readdirSync(path.join(root, 'b')).filter((n) => n !== '.atrium-tmp').sort();
  const noTemporaries = () => {
    const tmp = path.join(root, 'b', '.atrium-tmp');
    if (existsSync(tmp)) expect(readdirSync(tmp)).toEqual([]);
  };

  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
    root = makeTree({ 'b/': '' });
    const admin = await s.login();
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/disk', root) })).code).toBe(200);
    ({ listener, endpoint } = await startS3(s, [{ name: 'bkt', path: '/disk/b' }]));
    // The SDK's defaults: checksums "when supported", which for PutObject means always.
    s3 = client(endpoint);
    s3.middlewareStack.add(
      (next) => async (args) => {
        sent.push({ ...((args.request as { headers: Record<string, string> }).headers ?? {}) });
        return next(args);
      },
      { step: 'finalizeRequest', name: 'recordHeaders', priority: 'low' },
    );
  });
  afterAll(async () => {
    s3?.destroy();
    await listener?.close();
    await s?.destroy();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('@aws-sdk/client-s3 streams with a trailing checksum of each algorithm; the server checks it and answers it', async () => {
    for (const [algorithm, alg, field] of ALGORITHMS) {
      const data = randomBytes(200_000 + algorithm.length);
      sent.length = 0;
      const r = await s3.send(new PutObjectCommand({ Bucket: 'bkt', Key: `stream-${alg}.bin`, Body: Readable.from([data.subarray(0, 70_000), data.subarray(70_000)]), ContentLength: data.length, ChecksumAlgorithm: algorithm }));
      // The SDK sent the body aws-chunked with the checksum as an unsigned trailer.
      expect(sent[0]?.['x-amz-content-sha256']).toBe('STREAMING-UNSIGNED-PAYLOAD-TRAILER');
      expect(sent[0]?.['x-amz-trailer']).toBe(`x-amz-checksum-${alg}`);
      expect(r[field]).toBe(checksumBase64(alg, data));
      expect(readFileSync(path.join(root, 'b', `stream-${alg}.bin`)).equals(data)).toBe(true);
    }
    // No algorithm named: the SDK's default, CRC32, as a trailer too.
    const data = randomBytes(100_000);
    sent.length = 0;
    const r = await s3.send(new PutObjectCommand({ Bucket: 'bkt', Key: 'stream-default.bin', Body: Readable.from([data]), ContentLength: data.length }));
    expect(sent[0]?.['x-amz-trailer']).toBe('x-amz-checksum-crc32');
    expect(r.ChecksumCRC32).toBe(checksumBase64('crc32', data));
    noTemporaries();
  });

  it('a checksum sent as a header (buffered body) is checked: the right one stores, a wrong one is BadDigest and stores nothing', async () => {
    const data = Buffer.from('buffered body, checksum in a header');
    sent.length = 0;
    const ok = await s3.send(new PutObjectCommand({ Bucket: 'bkt', Key: 'header.txt', Body: data, ChecksumAlgorithm: 'CRC32C' }));
    expect(sent[0]?.['x-amz-checksum-crc32c']).toBe(checksumBase64('crc32c', data));
    expect(sent[0]?.['x-amz-trailer']).toBeUndefined();
    expect(ok.ChecksumCRC32C).toBe(checksumBase64('crc32c', data));
    expect(readFileSync(path.join(root, 'b', 'header.txt'), 'utf8')).toBe(data.toString());

    // The caller's own (wrong) value goes out as the header.
    await expect(s3.send(new PutObjectCommand({ Bucket: 'bkt', Key: 'bad-header.txt', Body: data, ChecksumSHA256: checksumBase64('sha256', Buffer.from('other')) }))).rejects.toMatchObject({
      name: 'BadDigest',
      $metadata: { httpStatusCode: 400 },
    });
    await expect(s3.send(new PutObjectCommand({ Bucket: 'bkt', Key: 'bad-header.txt', Body: data, ChecksumCRC32: 'not-a-checksum' }))).rejects.toMatchObject({ name: 'InvalidRequest' });
    expect(existsSync(path.join(root, 'b', 'bad-header.txt'))).toBe(false);
    noTemporaries();
  });

  it('signed trailers (STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER): stored when right; a tampered trailer signature is SignatureDoesNotMatch, a wrong signed checksum BadDigest; nothing is kept', async () => {
    const data = randomBytes(150_000);
    const good = await chunkedPut(endpoint, '/bkt/signed.bin', data, { signed: true, trailer: [`x-amz-checksum-sha256:${checksumBase64('sha256', data)}`] });
    expect(good.status, good.body).toBe(200);
    expect(good.headers['x-amz-checksum-sha256']).toBe(checksumBase64('sha256', data));
    expect(readFileSync(path.join(root, 'b', 'signed.bin')).equals(data)).toBe(true);

    const forged = await chunkedPut(endpoint, '/bkt/forged.bin', data, {
      signed: true,
      trailer: [`x-amz-checksum-crc32:${checksumBase64('crc32', data)}`],
      tamperTrailerSignature: (sig) => `${sig.slice(0, -1)}${sig.endsWith('0') ? '1' : '0'}`,
    });
    expect(forged.status).toBe(403);
    expect(forged.body).toContain('<Code>SignatureDoesNotMatch</Code>');
    s.core.limiter.succeed('127.0.0.1');

    const wrong = await chunkedPut(endpoint, '/bkt/wrong.bin', data, { signed: true, trailer: [`x-amz-checksum-crc32:${checksumBase64('crc32', data.subarray(1))}`] });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toContain('<Code>BadDigest</Code>');
    expect(files()).toEqual(expect.not.arrayContaining(['forged.bin', 'wrong.bin']));
    noTemporaries();
  });

  it('hand-made unsigned trailers: a wrong value, a missing, undeclared or unknown trailer are refused with the S3 error and store nothing', async () => {
    const data = randomBytes(70_000);
    const crc = `x-amz-checksum-crc32c:${checksumBase64('crc32c', data)}`;
    const ok = await chunkedPut(endpoint, '/bkt/unsigned.bin', data, { signed: false, trailer: [crc], chunkSize: 8192 });
    expect(ok.status, ok.body).toBe(200);
    expect(readFileSync(path.join(root, 'b', 'unsigned.bin')).equals(data)).toBe(true);

    const cases: Array<[string, Parameters<typeof chunkedPut>[3], number, string]> = [
      ['wrong value', { signed: false, trailer: [`x-amz-checksum-crc32c:${checksumBase64('crc32c', Buffer.from('x'))}`] }, 400, 'BadDigest'],
      ['declared, not sent', { signed: false, trailer: [], declare: 'x-amz-checksum-crc32c' }, 400, 'MalformedTrailerError'],
      ['sent, not declared', { signed: false, trailer: [crc, `x-amz-checksum-sha1:${checksumBase64('sha1', data)}`], declare: 'x-amz-checksum-crc32c' }, 400, 'MalformedTrailerError'],
      ['unknown algorithm', { signed: false, trailer: ['x-amz-checksum-md4:AAAA'] }, 400, 'InvalidRequest'],
      ['two checksums', { signed: false, trailer: [crc, `x-amz-checksum-sha1:${checksumBase64('sha1', data)}`] }, 400, 'InvalidRequest'],
      ['not base64', { signed: false, trailer: ['x-amz-checksum-crc32c:%%%%'] }, 400, 'InvalidRequest'],
    ];
    for (const [what, opts, status, code] of cases) {
      const r = await chunkedPut(endpoint, '/bkt/refused.bin', data, opts);
      expect([what, r.status, /<Code>([^<]+)</.exec(r.body)?.[1]]).toEqual([what, status, code]);
    }
    // A trailer on a body that is not aws-chunked.
    const plain = await signedRequest(endpoint, 'PUT', '/bkt/refused.bin', { body: 'abc', headers: { 'x-amz-trailer': 'x-amz-checksum-crc32' } });
    expect([plain.status, /<Code>([^<]+)</.exec(plain.body)?.[1]]).toEqual([400, 'InvalidRequest']);
    expect(existsSync(path.join(root, 'b', 'refused.bin'))).toBe(false);
    noTemporaries();
  });

  it('UploadPart checks trailers and Content-MD5 too: a bad part is refused and not staged', async () => {
    const key = 'multi.bin';
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'bkt', Key: key }));
    const p1 = randomBytes(5 * 1024 * 1024);
    const p2 = randomBytes(4321);
    // Part 1 by the SDK (a streamed body: trailing CRC32), part 2 by hand with a signed trailer.
    const r1 = await s3.send(new UploadPartCommand({ Bucket: 'bkt', Key: key, UploadId, PartNumber: 1, Body: Readable.from([p1]), ContentLength: p1.length }));
    expect(r1.ChecksumCRC32).toBe(checksumBase64('crc32', p1));
    const query = { partNumber: '2', uploadId: UploadId! };
    const bad = await chunkedPut(endpoint, `/bkt/${key}`, p2, { signed: true, trailer: [`x-amz-checksum-crc32:${checksumBase64('crc32', p1)}`], query });
    expect(bad.status).toBe(400);
    expect(bad.body).toContain('<Code>BadDigest</Code>');
    const badMd5 = await signedRequest(endpoint, 'PUT', `/bkt/${key}?partNumber=2&uploadId=${UploadId}`, { body: 'abc', headers: { 'content-md5': Buffer.alloc(16).toString('base64') } });
    expect(badMd5.status).toBe(400);
    expect(badMd5.body).toContain('<Code>BadDigest</Code>');
    const listed = await s3.send(new ListPartsCommand({ Bucket: 'bkt', Key: key, UploadId }));
    expect(listed.Parts?.map((p) => p.PartNumber)).toEqual([1]);

    const good = await chunkedPut(endpoint, `/bkt/${key}`, p2, { signed: true, trailer: [`x-amz-checksum-crc32:${checksumBase64('crc32', p2)}`], query });
    expect(good.status, good.body).toBe(200);
    await s3.send(
      new CompleteMultipartUploadCommand({ Bucket: 'bkt', Key: key, UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: r1.ETag }, { PartNumber: 2, ETag: good.headers.etag as string }] } }),
    );
    expect(readFileSync(path.join(root, 'b', key)).equals(Buffer.concat([p1, p2]))).toBe(true);
  });
});

import { createHash, createHmac } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { ChecksumCheck, checksumBase64, newChecksum } from '../../src/protocols/s3/checksums.js';
import { S3Error } from '../../src/protocols/s3/errors.js';
import { AwsChunkedDecoder, type ChunkedOptions, type ChunkSigning, signingKey } from '../../src/protocols/s3/sigv4.js';

// The worked example of AWS's "Signature calculations for trailing headers (chunked uploads)"
// page: 66 560 bytes of "a" in chunks of 65 536, a CRC32C trailer, the example key pair, and the
// signatures that page publishes. The decoder must accept exactly these bytes. (That page's
// trailer signature is made with the chunk algorithm's name, AWS4-HMAC-SHA256-PAYLOAD, where
// the SDKs use AWS4-HMAC-SHA256-TRAILER; both are tested.)
const EXAMPLE = {
  secret: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  amzDate: '20130524T000000Z',
  scope: '20130524/us-east-1/s3/aws4_request',
  seed: '106e2a8a18243abcf37539882f36619c00e2dfc72633413f02d3b74544bfeb8e',
  chunks: [
    [65536, 'b474d8862b1487a5145d686f57f013e54db672cee1c953b3010fb58501ef5aa2'],
    [1024, '1c1344b170168f8e65b41376b44b20fe354e373826ccbbe2c1d40a8cae51e5c7'],
    [0, '2ca2aba2005185cf7159c6277faf83795951dd77a3a99e6e65d5c9f85863f992'],
  ] as const,
  trailer: 'x-amz-checksum-crc32c:sOO8/Q==',
  trailerSignature: '63bddb248ad2590c92712055f51b8e78ab024eead08276b24f010b0efd74843f',
};

function exampleSigning(): ChunkSigning {
  const key = signingKey(EXAMPLE.secret, { scope: EXAMPLE.scope } as Parameters<typeof signingKey>[1]);
  return { key, amzDate: EXAMPLE.amzDate, scope: EXAMPLE.scope, seedSignature: EXAMPLE.seed };
}

function exampleBody(opts: { trailer?: string; trailerSignature?: string; chunkSignature?: (i: number, sig: string) => string } = {}): Buffer {
  const parts: Buffer[] = [];
  EXAMPLE.chunks.forEach(([size, sig], i) => {
    parts.push(Buffer.from(`${size.toString(16)};chunk-signature=${opts.chunkSignature?.(i, sig) ?? sig}\r\n`));
    if (size > 0) parts.push(Buffer.alloc(size, 'a'), Buffer.from('\r\n'));
  });
  parts.push(Buffer.from(`${opts.trailer ?? EXAMPLE.trailer}\r\nx-amz-trailer-signature:${opts.trailerSignature ?? EXAMPLE.trailerSignature}\r\n\r\n`));
  return Buffer.concat(parts);
}

/** Runs a body through the decoder (and the checksum check), in pieces of `piece` bytes; the decoded bytes or the S3 error. */
async function decode(body: Buffer, signing: ChunkSigning | undefined, opts: ChunkedOptions, piece = 1000): Promise<{ bytes: Buffer } | { error: S3Error }> {
  const decoder = new AwsChunkedDecoder(signing, opts);
  const name = [...(opts.trailers ?? [])][0];
  const stages: NodeJS.ReadWriteStream[] = [decoder];
  if (name) stages.push(new ChecksumCheck({ algorithm: name.slice('x-amz-checksum-'.length) as 'crc32c', name, value: () => decoder.trailers.get(name) }));
  const out: Buffer[] = [];
  const pieces = Array.from({ length: Math.ceil(body.length / piece) }, (_, i) => body.subarray(i * piece, (i + 1) * piece));
  try {
    await pipeline(Readable.from(pieces), ...(stages as [NodeJS.ReadWriteStream]), new Writable({ write: (c: Buffer, _e, done) => (out.push(c), done()) }));
    return { bytes: Buffer.concat(out) };
  } catch (err) {
    if (err instanceof S3Error) return { error: err };
    throw err;
  }
}

const signedTrailer: ChunkedOptions = { trailers: new Set(['x-amz-checksum-crc32c']), signedTrailer: true, decodedLength: 66560 };

describe('aws-chunked bodies with trailers (AWS SigV4 streaming)', () => {
  it("accepts AWS's worked example: chunk signatures, CRC32C trailer and trailer signature", async () => {
    expect(checksumBase64('crc32c', Buffer.alloc(66560, 'a'))).toBe('sOO8/Q==');
    for (const piece of [1, 7, 1000, 1 << 20]) {
      const r = await decode(exampleBody(), exampleSigning(), signedTrailer, piece);
      if ("error" in r) throw r.error;
      expect(r.bytes.equals(Buffer.alloc(66560, "a")), `piece ${piece}`).toBe(true);
    }
  });

  it('a trailer signed as the SDKs sign it (AWS4-HMAC-SHA256-TRAILER), with or without blank lines around it', async () => {
    const signing = exampleSigning();
    const toSign = ['AWS4-HMAC-SHA256-TRAILER', EXAMPLE.amzDate, EXAMPLE.scope, EXAMPLE.chunks[2][1], createHash('sha256').update(`${EXAMPLE.trailer}\n`).digest('hex')].join('\n');
    const sig = createHmac('sha256', signing.key).update(toSign).digest('hex');
    const plain = exampleBody({ trailerSignature: sig });
    const text = plain.toString('latin1');
    const variants = [
      plain,
      // A blank line between the last chunk and the trailer, LF-only trailer lines, no final blank line.
      Buffer.from(text.replace(`${EXAMPLE.trailer}\r\n`, `\r\n${EXAMPLE.trailer}\n`).replace(/\r\n\r\n$/, '\r\n'), 'latin1'),
      // The checksum line ended by LF, then a blank line, then the signature.
      Buffer.from(text.replace(`${EXAMPLE.trailer}\r\n`, `${EXAMPLE.trailer}\n\r\n`), 'latin1'),
    ];
    for (const body of variants) {
      const r = await decode(body, signing, signedTrailer, 4096);
      if ('error' in r) throw r.error;
      expect(r.bytes.length).toBe(66560);
    }
  });

  it('the trailer signature chains to the last chunk and covers the trailer: every change is SignatureDoesNotMatch', async () => {
    const tampered = [
      exampleBody({ trailerSignature: EXAMPLE.trailerSignature.replace(/^6/, '7') }),
      exampleBody({ chunkSignature: (i, sig) => (i === 1 ? sig.replace(/^1/, '2') : sig) }),
    ];
    for (const body of tampered) {
      const r = await decode(body, exampleSigning(), signedTrailer);
      expect('error' in r && r.error.code).toBe('SignatureDoesNotMatch');
    }
    // A signed trailer without its signature line.
    const bare = Buffer.from(exampleBody().toString('latin1').replace(/x-amz-trailer-signature:[0-9a-f]+\r\n/, ''), 'latin1');
    const r = await decode(bare, exampleSigning(), signedTrailer);
    expect('error' in r && r.error.code).toBe('SignatureDoesNotMatch');
  });

  it('a checksum that does not match the bytes is BadDigest, even when its trailer is correctly signed', async () => {
    // Sign a wrong CRC32C the way a client would: the trailer signature is right, the checksum is not.
    const signing = exampleSigning();
    const wrong = 'x-amz-checksum-crc32c:AAAAAA==';
    const toSign = ['AWS4-HMAC-SHA256-TRAILER', EXAMPLE.amzDate, EXAMPLE.scope, EXAMPLE.chunks[2][1], createHash('sha256').update(`${wrong}\n`).digest('hex')].join('\n');
    const sig = createHmac('sha256', signing.key).update(toSign).digest('hex');
    const r = await decode(exampleBody({ trailer: wrong, trailerSignature: sig }), signing, signedTrailer);
    expect('error' in r && [r.error.status, r.error.code]).toEqual([400, 'BadDigest']);
  });

  it('unsigned trailers (STREAMING-UNSIGNED-PAYLOAD-TRAILER): the checksum decides; missing, undeclared or repeated trailers are refused', async () => {
    const data = Buffer.from('hello trailer');
    const unsigned = (trailer: string) => Buffer.from(`${data.length.toString(16)}\r\n${data.toString()}\r\n0\r\n${trailer}\r\n`);
    const opts: ChunkedOptions = { trailers: new Set(['x-amz-checksum-crc32']), decodedLength: data.length };
    const good = `x-amz-checksum-crc32:${checksumBase64('crc32', data)}\r\n`;
    const ok = await decode(unsigned(good), undefined, opts, 3);
    expect('bytes' in ok && ok.bytes.toString()).toBe('hello trailer');
    const cases: Array<[string, ChunkedOptions, string]> = [
      [`x-amz-checksum-crc32:${checksumBase64('crc32', Buffer.from('other'))}\r\n`, opts, 'BadDigest'],
      ['', opts, 'MalformedTrailerError'],
      [`x-amz-checksum-sha1:${checksumBase64('sha1', data)}\r\n`, opts, 'MalformedTrailerError'],
      [`${good}${good}`, opts, 'MalformedTrailerError'],
      ['x-amz-checksum-crc32:not base64!\r\n', opts, 'InvalidRequest'],
      [good, { ...opts, decodedLength: data.length + 1 }, 'IncompleteBody'],
      [`${good}x-amz-trailer-signature:${'0'.repeat(64)}\r\n`, opts, 'MalformedTrailerError'],
    ];
    for (const [trailer, o, code] of cases) {
      const r = await decode(unsigned(trailer), undefined, o);
      expect('error' in r && r.error.code, JSON.stringify(trailer)).toBe(code);
    }
  });

  it('CRC32, CRC32C, CRC64/NVME, SHA-1 and SHA-256 give the standard check values, in pieces or whole', () => {
    const nine = Buffer.from('123456789');
    const hex = (alg: Parameters<typeof newChecksum>[0], pieces: Buffer[]) => {
      const c = newChecksum(alg);
      for (const p of pieces) c.update(p);
      return c.digest().toString('hex');
    };
    expect(hex('crc32', [nine])).toBe('cbf43926');
    expect(hex('crc32c', [nine])).toBe('e3069283');
    expect(hex('crc64nvme', [nine])).toBe('ae8b14860a799888');
    expect(hex('sha1', [nine])).toBe(createHash('sha1').update(nine).digest('hex'));
    expect(hex('sha256', [nine])).toBe(createHash('sha256').update(nine).digest('hex'));
    const big = createHash('sha512').update('seed').digest();
    const data = Buffer.concat(Array.from({ length: 1000 }, () => big));
    for (const alg of ['crc32', 'crc32c', 'crc64nvme'] as const) {
      expect(hex(alg, [data.subarray(0, 3), data.subarray(3, 40_001), data.subarray(40_001)])).toBe(hex(alg, [data]));
    }
  });
});

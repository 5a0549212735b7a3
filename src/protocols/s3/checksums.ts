// The object checksums of S3's "flexible checksums" (`x-amz-checksum-<algorithm>`, sent as a
// request header or as a trailer of an aws-chunked body): CRC32, CRC32C, CRC64/NVME, SHA-1 and
// SHA-256, each the base64 of its big-endian digest.

import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { crc32 } from 'node:zlib';
import { S3Error } from './errors.js';

export const CHECKSUM_ALGORITHMS = ['crc32', 'crc32c', 'crc64nvme', 'sha1', 'sha256'] as const;
export type ChecksumAlgorithm = (typeof CHECKSUM_ALGORITHMS)[number];

/** The algorithm a `x-amz-checksum-*` header names, or undefined for any other name. */
export function checksumAlgorithmOf(header: string): ChecksumAlgorithm | undefined {
  const name = header.toLowerCase();
  if (!name.startsWith('x-amz-checksum-')) return undefined;
  const alg = name.slice('x-amz-checksum-'.length);
  return (CHECKSUM_ALGORITHMS as readonly string[]).includes(alg) ? (alg as ChecksumAlgorithm) : undefined;
}

/** How many bytes each algorithm's digest has (a declared value of another length is malformed). */
export const DIGEST_BYTES: Record<ChecksumAlgorithm, number> = { crc32: 4, crc32c: 4, crc64nvme: 8, sha1: 20, sha256: 32 };

export interface Checksum {
  update(data: Buffer): void;
  digest(): Buffer;
}

/**
 * Slice-by-8 tables of a reflected 32-bit CRC: table k maps a byte to its CRC after k further
 * zero bytes, so eight input bytes cost eight lookups and no per-byte loop.
 */
function tables32(poly: number): Uint32Array[] {
  const t = Array.from({ length: 8 }, () => new Uint32Array(256));
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ poly : c >>> 1;
    t[0]![n] = c >>> 0;
  }
  for (let n = 0; n < 256; n++) {
    for (let k = 1; k < 8; k++) t[k]![n] = (t[0]![t[k - 1]![n]! & 0xff]! ^ (t[k - 1]![n]! >>> 8)) >>> 0;
  }
  return t;
}

let crc32cTables: Uint32Array[] | undefined;

/** CRC-32C (Castagnoli, reflected polynomial 0x82F63B78). */
class Crc32c implements Checksum {
  private crc = 0xffffffff;
  private readonly t = (crc32cTables ??= tables32(0x82f63b78));

  update(data: Buffer): void {
    const [t0, t1, t2, t3, t4, t5, t6, t7] = this.t as [Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array];
    let c = this.crc;
    let i = 0;
    const n = data.length;
    for (; i + 8 <= n; i += 8) {
      const lo = (c ^ (data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24))) >>> 0;
      c =
        t7[lo & 0xff]! ^
        t6[(lo >>> 8) & 0xff]! ^
        t5[(lo >>> 16) & 0xff]! ^
        t4[lo >>> 24]! ^
        t3[data[i + 4]!]! ^
        t2[data[i + 5]!]! ^
        t1[data[i + 6]!]! ^
        t0[data[i + 7]!]!;
    }
    for (; i < n; i++) c = t0[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
    this.crc = c >>> 0;
  }

  digest(): Buffer {
    const out = Buffer.alloc(4);
    out.writeUInt32BE((this.crc ^ 0xffffffff) >>> 0);
    return out;
  }
}

/** CRC-32 (the zlib one), by Node's own zlib. */
class Crc32 implements Checksum {
  private crc = 0;
  update(data: Buffer): void {
    this.crc = crc32(data, this.crc);
  }
  digest(): Buffer {
    const out = Buffer.alloc(4);
    out.writeUInt32BE(this.crc >>> 0);
    return out;
  }
}

/** Byte tables of CRC-64/NVME (reflected polynomial 0x9A6C9329AC4BC9B5), as high and low 32-bit halves. */
let crc64Tables: { hi: Uint32Array; lo: Uint32Array } | undefined;

function tables64(): { hi: Uint32Array; lo: Uint32Array } {
  const POLY_HI = 0x9a6c9329;
  const POLY_LO = 0xac4bc9b5;
  const hi = new Uint32Array(256);
  const lo = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let h = 0;
    let l = n;
    for (let k = 0; k < 8; k++) {
      const carry = l & 1;
      l = ((l >>> 1) | ((h & 1) << 31)) >>> 0;
      h >>>= 1;
      if (carry) {
        h = (h ^ POLY_HI) >>> 0;
        l = (l ^ POLY_LO) >>> 0;
      }
    }
    hi[n] = h;
    lo[n] = l;
  }
  return { hi, lo };
}

/** CRC-64/NVME (init and final XOR all ones), one byte at a time over two 32-bit halves. */
class Crc64Nvme implements Checksum {
  private h = 0xffffffff;
  private l = 0xffffffff;
  private readonly t = (crc64Tables ??= tables64());

  update(data: Buffer): void {
    const { hi, lo } = this.t;
    let h = this.h;
    let l = this.l;
    for (let i = 0; i < data.length; i++) {
      const idx = (l ^ data[i]!) & 0xff;
      // crc = table[idx] ^ (crc >>> 8), over 64 bits split in two.
      l = (lo[idx]! ^ ((l >>> 8) | (h << 24))) >>> 0;
      h = (hi[idx]! ^ (h >>> 8)) >>> 0;
    }
    this.h = h;
    this.l = l;
  }

  digest(): Buffer {
    const out = Buffer.alloc(8);
    out.writeUInt32BE((this.h ^ 0xffffffff) >>> 0, 0);
    out.writeUInt32BE((this.l ^ 0xffffffff) >>> 0, 4);
    return out;
  }
}

class Digest implements Checksum {
  private readonly hash: Hash;
  constructor(alg: 'sha1' | 'sha256') {
    this.hash = createHash(alg);
  }
  update(data: Buffer): void {
    this.hash.update(data);
  }
  digest(): Buffer {
    return this.hash.digest();
  }
}

export function newChecksum(alg: ChecksumAlgorithm): Checksum {
  switch (alg) {
    case 'crc32':
      return new Crc32();
    case 'crc32c':
      return new Crc32c();
    case 'crc64nvme':
      return new Crc64Nvme();
    case 'sha1':
    case 'sha256':
      return new Digest(alg);
  }
}

/** The base64 checksum of a whole buffer. */
export function checksumBase64(alg: ChecksumAlgorithm, data: Buffer): string {
  const c = newChecksum(alg);
  c.update(data);
  return c.digest().toString('base64');
}

/** A declared checksum the body is checked against; `value` is read at the body's end (a trailer comes last). */
export interface DeclaredChecksum {
  algorithm: ChecksumAlgorithm;
  /** `x-amz-checksum-<algorithm>`. */
  name: string;
  value: () => string | undefined;
}

const badDigest = (alg: ChecksumAlgorithm) => new S3Error(400, 'BadDigest', `The ${alg.toUpperCase()} you specified did not match the calculated checksum.`);
export const invalidChecksum = (name: string) => new S3Error(400, 'InvalidRequest', `Value for ${name} header is invalid.`);

/** Whether a declared value is a well-formed digest of its algorithm (base64 of the right length). */
export function wellFormed(alg: ChecksumAlgorithm, value: string): boolean {
  return /^[A-Za-z0-9+/]+={0,2}$/.test(value) && value.length % 4 === 0 && Buffer.from(value, 'base64').length === DIGEST_BYTES[alg];
}

/**
 * Passes a body through while computing its checksum; at its end, before the body ends
 * downstream, compares it with the declared value and fails the stream with BadDigest on a
 * mismatch, so the object is never stored.
 */
export class ChecksumCheck extends Transform {
  private readonly sum: Checksum;
  /** The verified value, once the body has ended. */
  verified: string | undefined;

  constructor(private readonly declared: DeclaredChecksum) {
    super();
    this.sum = newChecksum(declared.algorithm);
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.sum.update(chunk);
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    const { algorithm, name } = this.declared;
    const expected = this.declared.value();
    if (expected === undefined || !wellFormed(algorithm, expected)) {
      done(invalidChecksum(name));
      return;
    }
    const actual = this.sum.digest().toString('base64');
    if (actual !== expected) {
      done(badDigest(algorithm));
      return;
    }
    this.verified = actual;
    done();
  }
}

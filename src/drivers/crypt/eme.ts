import { type Cipher, createCipheriv, createDecipheriv, type Decipher } from 'node:crypto';

// EME (ECB-Mix-ECB, Halevi and Rogaway), the wide-block mode rclone encrypts names with:
// a tweakable cipher over 1..128 AES blocks where every output bit depends on every input bit.

const BLOCK = 16;

/** Multiplication by 2 in GF(2^128), little-endian bytes as EME defines it. */
function double(block: Buffer): Buffer {
  const out = Buffer.alloc(BLOCK);
  out[0] = (block[0]! << 1) & 0xff;
  if (block[15]! >= 128) out[0] ^= 135;
  for (let j = 1; j < BLOCK; j++) {
    out[j] = (block[j]! << 1) & 0xff;
    if (block[j - 1]! >= 128) out[j] = out[j]! + 1;
  }
  return out;
}

function xor(a: Buffer, b: Buffer): Buffer {
  const out = Buffer.alloc(BLOCK);
  for (let i = 0; i < BLOCK; i++) out[i] = a[i]! ^ b[i]!;
  return out;
}

export class Eme {
  private readonly enc: Cipher;
  private readonly dec: Decipher;
  /** L_i = 2^(i+1) · E(0), for up to 128 blocks. */
  private readonly masks: Buffer[] = [];

  constructor(key: Buffer) {
    this.enc = createCipheriv(`aes-${key.length * 8}-ecb`, key, null).setAutoPadding(false);
    this.dec = createDecipheriv(`aes-${key.length * 8}-ecb`, key, null).setAutoPadding(false);
    let l: Buffer = this.enc.update(Buffer.alloc(BLOCK));
    for (let i = 0; i < 128; i++) {
      l = double(l);
      this.masks.push(l);
    }
  }

  encrypt(tweak: Buffer, data: Buffer): Buffer {
    return this.transform(tweak, data, true);
  }

  decrypt(tweak: Buffer, data: Buffer): Buffer {
    return this.transform(tweak, data, false);
  }

  private transform(tweak: Buffer, data: Buffer, encrypt: boolean): Buffer {
    if (tweak.length !== BLOCK) throw new Error('EME tweak must be 16 bytes');
    if (data.length === 0 || data.length % BLOCK !== 0) throw new Error('EME data must be a non-empty multiple of 16 bytes');
    const m = data.length / BLOCK;
    if (m > 128) throw new Error('EME data is longer than 128 blocks');
    // ECB is stateless: whole runs of blocks go through one update call.
    const aes = (buf: Buffer) => (encrypt ? this.enc.update(buf) : this.dec.update(buf));
    const masked = Buffer.alloc(data.length);
    for (let j = 0; j < m; j++) xor(data.subarray(j * BLOCK, (j + 1) * BLOCK), this.masks[j]!).copy(masked, j * BLOCK);
    const ppp = aes(masked);
    let mp = tweak;
    for (let j = 0; j < m; j++) mp = xor(mp, ppp.subarray(j * BLOCK, (j + 1) * BLOCK));
    const mc = aes(mp);
    let mask = xor(mp, mc);
    const ccc = Buffer.alloc(data.length);
    for (let j = 1; j < m; j++) {
      mask = double(mask);
      xor(ppp.subarray(j * BLOCK, (j + 1) * BLOCK), mask).copy(ccc, j * BLOCK);
    }
    let c0 = xor(mc, tweak);
    for (let j = 1; j < m; j++) c0 = xor(c0, ccc.subarray(j * BLOCK, (j + 1) * BLOCK));
    c0.copy(ccc, 0);
    const out = aes(ccc);
    for (let j = 0; j < m; j++) xor(out.subarray(j * BLOCK, (j + 1) * BLOCK), this.masks[j]!).copy(out, j * BLOCK);
    return out;
  }
}

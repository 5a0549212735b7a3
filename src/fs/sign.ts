import { createHash, hash, timingSafeEqual } from 'node:crypto';
import { Unauthorized } from '../errors.js';
import type { Settings } from '../settings/service.js';

/** Bytes after the inner pad for the signed data (a path and an expiry) written in place. */
const MAC_ROOM = 4096;

/**
 * Link signatures of the original (wire-api.md §8.1): base64url-with-padding of
 * HMAC-SHA256(key = the `token` setting, data = "<full virtual path>:<expire>"), then ":<expire>".
 * `expire` is 0 when `link_expiration` is 0 (never), else now + that many hours.
 */
export class Signer {
  constructor(private readonly settings: Settings) {}

  private pads?: { key: string; inner: Buffer; outer: Buffer };

  /**
   * HMAC-SHA256 from its definition, H(K^opad || H(K^ipad || data)), with the padded keys made
   * once per token: two one-shot hashes instead of an Hmac object per call, which a listing makes
   * for every file (about a quarter less time, and no native objects for the GC). `inner` holds
   * the inner pad followed by room for the data, which is written there rather than into new
   * buffers joined for each call; `outer` holds the outer pad followed by the inner hash. Both
   * are filled in by each call (synchronous, so never shared).
   */
  private mac(data: string): string {
    const key = this.settings.get('token');
    let pads = this.pads;
    if (pads?.key !== key) {
      const block = Buffer.alloc(64);
      (Buffer.byteLength(key) > 64 ? createHash('sha256').update(key).digest() : Buffer.from(key)).copy(block);
      pads = this.pads = {
        key,
        inner: Buffer.concat([Buffer.from(block.map((b) => b ^ 0x36)), Buffer.alloc(MAC_ROOM)]),
        outer: Buffer.concat([Buffer.from(block.map((b) => b ^ 0x5c)), Buffer.alloc(32)]),
      };
    }
    const { inner, outer } = pads;
    // At most 3 bytes of UTF-8 per UTF-16 unit: data that surely fits is written in place.
    const innerHash =
      data.length * 3 <= MAC_ROOM
        ? hash('sha256', inner.subarray(0, 64 + inner.write(data, 64, 'utf8')), 'buffer')
        : hash('sha256', Buffer.concat([inner.subarray(0, 64), Buffer.from(data)]), 'buffer');
    innerHash.copy(outer, 64);
    return hash('sha256', outer, 'base64url').padEnd(44, '=');
  }

  sign(virtualPath: string, now = Date.now()): string {
    const hours = this.settings.getNumber('link_expiration');
    const expire = hours > 0 ? Math.floor(now / 1000) + Math.floor(hours * 3600) : 0;
    return `${this.mac(`${virtualPath}:${expire}`)}:${expire}`;
  }

  /** Throws 401 with the original's messages. */
  verify(virtualPath: string, sign: string, now = Date.now()): void {
    const value = sign.replace(/\/+$/, '');
    const i = value.lastIndexOf(':');
    const expireText = i === -1 ? '' : value.slice(i + 1);
    if (expireText === '') throw new Unauthorized('expire missing');
    if (!/^-?\d+$/.test(expireText)) throw new Unauthorized('expire invalid');
    const expire = Number(expireText);
    if (expire !== 0 && expire < Math.floor(now / 1000)) throw new Unauthorized('sign expired');
    const want = Buffer.from(this.mac(`${virtualPath}:${expire}`));
    const got = Buffer.from(value.slice(0, i));
    if (want.length !== got.length || !timingSafeEqual(want, got)) throw new Unauthorized('sign invalid');
  }
}

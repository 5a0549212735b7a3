import { createHmac, timingSafeEqual } from 'node:crypto';
import { Unauthorized } from '../errors.js';
import type { Settings } from '../settings/service.js';

/**
 * Link signatures of the original (wire-api.md §8.1): base64url-with-padding of
 * HMAC-SHA256(key = the `token` setting, data = "<full virtual path>:<expire>"), then ":<expire>".
 * `expire` is 0 when `link_expiration` is 0 (never), else now + that many hours.
 */
export class Signer {
  constructor(private readonly settings: Settings) {}

  private mac(data: string): string {
    return createHmac('sha256', this.settings.get('token')).update(data).digest('base64url').padEnd(44, '=');
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

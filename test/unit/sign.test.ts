import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Signer } from '../../src/fs/sign.js';
import type { Settings } from '../../src/settings/service.js';

/** The wire's sign (wire-api.md §8.1) computed with Node's Hmac, as the original computes it. */
const reference = (key: string, data: string) => createHmac('sha256', key).update(data).digest('base64url').padEnd(44, '=');

function signerWith(settings: { token: string; hours: number }): Signer {
  return new Signer({ get: () => settings.token, getNumber: () => settings.hours } as unknown as Settings);
}

describe('Signer', () => {
  it('signs as HMAC-SHA256 for short, 64-byte, long and non-ASCII tokens and paths, and follows a token change', () => {
    const settings = { token: '', hours: 0 };
    const signer = signerWith(settings);
    for (const token of ['k', 'alist-token-0123456789', 'x'.repeat(64), 'y'.repeat(65), 'é'.repeat(40), 'z'.repeat(300)]) {
      settings.token = token;
      // Paths past the room kept for in-place data (4096 bytes) take the other way; a short one after a long one.
      for (const p of ['/a.txt', '/dir/sub/文件 name.mp4', `/${'long'.repeat(100)}`, `/${'长'.repeat(1400)}`, `/${'p'.repeat(5000)}`, '/b', '/lone-\ud800-surrogate']) {
        expect(signer.sign(p)).toBe(`${reference(token, `${p}:0`)}:0`);
        expect(() => signer.verify(p, signer.sign(p))).not.toThrow();
      }
    }
  });

  it('signs with an expiry when link_expiration is set, and refuses another path', () => {
    const signer = signerWith({ token: 'tok-1', hours: 2 });
    const now = 1_700_000_000_000;
    const expire = Math.floor(now / 1000) + 7200;
    expect(signer.sign('/f', now)).toBe(`${reference('tok-1', `/f:${expire}`)}:${expire}`);
    expect(() => signer.verify('/g', signer.sign('/f', now), now)).toThrow('sign invalid');
  });
});

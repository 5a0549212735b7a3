import { createHash, timingSafeEqual } from 'node:crypto';
import { randomAlnum } from '../util/random.js';

/** The constant the original's web UI appends before hashing; clients send this hash. */
export const STATIC_HASH_SALT = 'https://github.com/alist-org/alist';

const sha256hex = (s: string) => createHash('sha256').update(s).digest('hex');

/** What `/api/auth/login/hash` receives: hex(sha256(password + "-" + STATIC_HASH_SALT)). */
export function staticHash(password: string): string {
  return sha256hex(`${password}-${STATIC_HASH_SALT}`);
}

export function storedHash(staticHashed: string, salt: string): string {
  return sha256hex(`${staticHashed}-${salt}`);
}

/** New salt, hash and password timestamp for a plain-text password. */
export function hashPassword(plain: string): { pwdHash: string; salt: string; pwdTs: number } {
  const salt = randomAlnum(16);
  return { pwdHash: storedHash(staticHash(plain), salt), salt, pwdTs: Math.floor(Date.now() / 1000) };
}

/** Constant-time comparison of a client's static hash against the stored salted hash. */
export function verifyStaticHash(user: { pwdHash: string; salt: string }, staticHashed: string): boolean {
  const want = Buffer.from(user.pwdHash, 'utf8');
  const got = Buffer.from(storedHash(staticHashed, user.salt), 'utf8');
  return want.length === got.length && want.length > 0 && timingSafeEqual(want, got);
}

/** Constant-time string equality (digests first, so neither content nor length leaks). */
export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

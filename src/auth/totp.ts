import { Secret, TOTP } from 'otpauth';

export const TOTP_ISSUER = 'Alist';

function totp(secret: string, username: string): TOTP {
  return new TOTP({ issuer: TOTP_ISSUER, label: username, algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) });
}

export const TOTP_PERIOD = 30;

/**
 * The time step (Unix seconds / 30) that `code` is valid for, within now ±1 step (the original's
 * skew), or null. Callers keep the last step used so that a code cannot be replayed.
 */
export function totpStep(secret: string, code: string, now = Date.now()): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  try {
    const delta = totp(secret, '').validate({ token: code, window: 1, timestamp: now });
    return delta === null ? null : Math.floor(now / 1000 / TOTP_PERIOD) + delta;
  } catch {
    return null;
  }
}

/** A new 20-byte secret, base32 without padding, and its otpauth:// URI. */
export function newTotpSecret(username: string): { secret: string; uri: string } {
  const secret = new Secret({ size: 20 }).base32.replace(/=+$/, '');
  return { secret, uri: totp(secret, username).toString() };
}

export function totpNow(secret: string, now = Date.now()): string {
  return totp(secret, '').generate({ timestamp: now });
}

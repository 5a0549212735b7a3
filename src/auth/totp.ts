import { Secret, TOTP } from 'otpauth';

export const TOTP_ISSUER = 'Alist';

function totp(secret: string, username: string): TOTP {
  return new TOTP({ issuer: TOTP_ISSUER, label: username, algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) });
}

/** True when `code` is valid for the base32 secret at now ±1 step (the original's skew). */
export function verifyTotp(secret: string, code: string, username = ''): boolean {
  if (!/^\d{6}$/.test(code)) return false;
  try {
    return totp(secret, username).validate({ token: code, window: 1 }) !== null;
  } catch {
    return false;
  }
}

/** A new 20-byte secret, base32 without padding, and its otpauth:// URI. */
export function newTotpSecret(username: string): { secret: string; uri: string } {
  const secret = new Secret({ size: 20 }).base32.replace(/=+$/, '');
  return { secret, uri: totp(secret, username).toString() };
}

export function totpNow(secret: string): string {
  return totp(secret, '').generate();
}

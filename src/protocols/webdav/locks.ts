export { type Lock, LockSet } from '../../fs/locks.js';

/** Longest lock Atrium grants, whatever the client asks ("Infinite" included). */
const MAX_TIMEOUT_S = 7 * 24 * 3600;
const DEFAULT_TIMEOUT_S = 3600;

/** `Timeout: Second-600, Infinite` → seconds (the first value Atrium can honour). */
export function parseTimeout(header: string | undefined): number {
  for (const part of (header ?? '').split(',').map((s) => s.trim())) {
    if (/^infinite$/i.test(part)) return MAX_TIMEOUT_S;
    const m = /^second-(\d+)$/i.exec(part);
    if (m) return Math.max(1, Math.min(Number(m[1]), MAX_TIMEOUT_S));
  }
  return DEFAULT_TIMEOUT_S;
}

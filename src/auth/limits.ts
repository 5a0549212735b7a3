import { type AccountLimits, NO_LIMITS } from '../db/groups.js';
import type { User } from '../db/users.js';
import { BadRequest } from '../errors.js';

/** The wire's names of an account's limits (on user and group objects; 0 means none). */
export interface LimitFields {
  upload_rate?: number;
  download_rate?: number;
  max_transfers?: number;
  max_sessions?: number;
}

const FIELDS = { upload_rate: 'uploadRate', download_rate: 'downloadRate', max_transfers: 'maxTransfers', max_sessions: 'maxSessions' } as const;

/** The limits as the wire shows them. */
export function limitsJson(l: AccountLimits | undefined): Required<LimitFields> {
  const v = l ?? NO_LIMITS;
  return { upload_rate: v.uploadRate, download_rate: v.downloadRate, max_transfers: v.maxTransfers, max_sessions: v.maxSessions };
}

/** The limits a save asks for, each a whole number from 0 (what it leaves out stays as `old` has it). */
export function checkedLimits(input: LimitFields, old: AccountLimits | undefined): AccountLimits {
  const out = { ...(old ?? NO_LIMITS) };
  for (const [wire, field] of Object.entries(FIELDS) as Array<[keyof LimitFields, keyof AccountLimits]>) {
    const n = input[wire];
    if (n === undefined) continue;
    if (!Number.isSafeInteger(n) || n < 0) throw new BadRequest(`${wire} must be a whole number from 0 (no limit) up`);
    out[field] = n;
  }
  return out;
}

/**
 * The limits that apply to a user (docs/access-and-security.md, effective rights): for each, the
 * smallest non-zero one of the user's own and their groups'; 0 when none sets it. The admin role
 * is limited too when its record or a group says so (it is a setting the admin makes).
 */
export function effectiveLimits(user: Pick<User, 'limits' | 'groups'>): AccountLimits {
  const all = [user.limits ?? NO_LIMITS, ...(user.groups ?? []).map((g) => g.limits ?? NO_LIMITS)];
  const least = (f: keyof AccountLimits) => all.reduce((m, l) => (l[f] > 0 && (m === 0 || l[f] < m) ? l[f] : m), 0);
  return { uploadRate: least('uploadRate'), downloadRate: least('downloadRate'), maxTransfers: least('maxTransfers'), maxSessions: least('maxSessions') };
}

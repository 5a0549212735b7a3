import { ROLE_ADMIN, ROLE_GUEST, type User } from '../db/users.js';
import { Unauthorized } from '../errors.js';

/** Permission bits of wire-api.md §3.3. */
export const PERM = {
  SEE_HIDES: 1 << 0,
  ACCESS_WITHOUT_PASSWORD: 1 << 1,
  OFFLINE_DOWNLOAD: 1 << 2,
  WRITE: 1 << 3,
  RENAME: 1 << 4,
  MOVE: 1 << 5,
  COPY: 1 << 6,
  REMOVE: 1 << 7,
  WEBDAV_READ: 1 << 8,
  WEBDAV_MANAGE: 1 << 9,
  FTP_READ: 1 << 10,
  FTP_WRITE: 1 << 11,
  READ_ARCHIVES: 1 << 12,
  DECOMPRESS: 1 << 13,
  SHARE: 1 << 14,
  CUSTOM_SHARE_ID: 1 << 15,
} as const;

export const ALL_PERMISSIONS = 0xffff;

export const isAdmin = (u: User): boolean => u.role === ROLE_ADMIN;
export const isGuest = (u: User): boolean => u.role === ROLE_GUEST;

/** The user, for routes about one's own account (keys): the guest has none (`user invalid`, as the original). */
export function ownAccount(user: User): User {
  if (isGuest(user)) throw new Unauthorized('user invalid');
  return user;
}

/** The bits a user holds: their own and every group's (docs/access-and-security.md, effective rights). */
export function effectiveBits(user: Pick<User, 'permission' | 'groups'>): number {
  let bits = user.permission;
  for (const g of user.groups ?? []) bits |= g.permission;
  return bits;
}

/** As the original (AList): the admin role holds every permission whatever its bits. */
export function can(user: User, bit: number): boolean {
  return isAdmin(user) || (effectiveBits(user) & bit) !== 0;
}

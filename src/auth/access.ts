import type { User } from '../db/users.js';
import { Forbidden } from '../errors.js';
import { can } from './permissions.js';

/**
 * The one place that says whether a user may do something at a virtual path. Today it checks
 * the user's permission bits (the admin holds them all); path rules (metas) plug in here, so
 * every front — HTTP API, raw links, WebDAV, SFTP — obeys the same answer.
 */
export function requirePermission(user: User, bit: number, _virtualPath: string): void {
  if (!can(user, bit)) throw new Forbidden('permission denied');
}

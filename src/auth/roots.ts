import type { RootSpec } from '../db/groups.js';
import type { User } from '../db/users.js';
import { BadRequest } from '../errors.js';
import { cleanPath } from '../util/paths.js';

/** Roots one user or group may list (each is a folder of every member's tree). */
export const MAX_ROOTS = 64;
const MAX_ROOT_NAME_BYTES = 255;

/** A root of a principal's tree, with where it comes from (the user's own list, or a group's). */
export interface NamedRoot extends RootSpec {
  /** `user`, or the group's id. */
  from: 'user' | number;
}

/** A root's name is one folder name at the top of the member's tree. */
function checkRootName(name: string): void {
  if (name.trim() === '') throw new BadRequest('roots: a root needs a name');
  if (name === '.' || name === '..') throw new BadRequest(`roots: name ${name} is not allowed`);
  if (/[/\\\0]/.test(name)) throw new BadRequest(`roots: name ${JSON.stringify(name)} must not contain /, \\ or NUL`);
  if (Buffer.byteLength(name) > MAX_ROOT_NAME_BYTES) throw new BadRequest(`roots: name is longer than ${MAX_ROOT_NAME_BYTES} bytes`);
}

/** A roots list as it is stored: names checked and unique, paths cleaned; refused with the field named. */
export function checkRoots(input: unknown): RootSpec[] {
  if (!Array.isArray(input)) throw new BadRequest('roots must be a list of {path, name}');
  if (input.length > MAX_ROOTS) throw new BadRequest(`roots: at most ${MAX_ROOTS}`);
  const out: RootSpec[] = [];
  for (const r of input) {
    if (typeof r !== 'object' || r === null || typeof r.path !== 'string' || typeof r.name !== 'string') throw new BadRequest('roots must be a list of {path, name}');
    checkRootName(r.name);
    if (r.path.includes('\0') || Buffer.byteLength(r.path) > 4096) throw new BadRequest('roots: a path is not valid');
    if (out.some((o) => o.name === r.name)) throw new BadRequest(`roots: the name ${r.name} is used twice`);
    out.push({ path: cleanPath(r.path), name: r.name });
  }
  return out;
}

/** A quota as it is stored: a whole number from 0 (none) up. */
export function checkQuota(field: string, n: number): number {
  if (!Number.isSafeInteger(n) || n < 0) throw new BadRequest(`${field} must be a whole number from 0 (no quota) up`);
  return n;
}

/** Every named root of a user's tree: their own, then each group's in group order. */
export function namedRoots(user: Pick<User, 'roots' | 'groups'>): NamedRoot[] {
  const own = (user.roots ?? []).map((r): NamedRoot => ({ ...r, from: 'user' }));
  const ofGroups = (user.groups ?? []).flatMap((g) => g.roots.map((r): NamedRoot => ({ ...r, from: g.id })));
  return [...own, ...ofGroups];
}

/** Refuses a tree where two roots share a name (checked when the admin saves a user or a group). */
export function checkTree(username: string, user: Pick<User, 'roots' | 'groups'>): void {
  const seen = new Map<string, NamedRoot>();
  const label = (r: NamedRoot) => (r.from === 'user' ? 'the user\'s own roots' : `group ${(user.groups ?? []).find((g) => g.id === r.from)?.name ?? r.from}`);
  for (const r of namedRoots(user)) {
    const before = seen.get(r.name);
    if (before) throw new BadRequest(`roots: the name ${r.name} is in both ${label(before)} and ${label(r)} of user ${username}`);
    seen.set(r.name, r);
  }
}

// Which of the targets holding an alias path a read, a write or an upload goes to: OpenList's
// read_conflict_policy, write_conflict_policy and put_conflict_policy, and AList v3's
// protect_same_name read as those policies when they are not set.

import { PermissionDenied } from '../peer.js';
import { type Obj, StorageError } from '../types.js';
import { PUT_POLICIES, READ_POLICIES, WRITE_POLICIES } from './info.js';

export type ReadPolicy = (typeof READ_POLICIES)[number];
export type WritePolicy = (typeof WRITE_POLICIES)[number];
export type PutPolicy = (typeof PUT_POLICIES)[number];

export interface AliasPolicies {
  read: ReadPolicy;
  /** rename, remove and mkdir (on the parent folder); the copies a move takes away. */
  write: WritePolicy;
  /** uploads, and the destination folders of copies and moves. */
  put: PutPolicy;
  /** Only copies of a file alike to the first target's (size, and every hash both report) count as the same file. */
  consistency: boolean;
  /**
   * write_conflict_policy is not set (an AList v3 client's storage): a copy takes its source as a
   * write does, so protect_same_name still refuses to copy an object several targets hold.
   */
  copyLikeWrite: boolean;
}

const oneOf = <T extends string>(list: readonly T[], v: unknown): T | undefined => (list.includes(v as T) ? (v as T) : undefined);

/**
 * The policies of an Alias addition. An unset write or put policy follows protect_same_name:
 * on (AList v3's default) it is `deterministic` (an object several targets hold is not changed),
 * off it is `first` (the first target holding it is changed), as AList v3 did.
 */
export function readPolicies(opts: Record<string, unknown>): AliasPolicies {
  const legacy: WritePolicy = opts.protect_same_name === false ? 'first' : 'deterministic';
  const write = oneOf(WRITE_POLICIES, opts.write_conflict_policy);
  return {
    read: oneOf(READ_POLICIES, opts.read_conflict_policy) ?? 'first',
    write: write ?? legacy,
    put: oneOf(PUT_POLICIES, opts.put_conflict_policy) ?? legacy,
    consistency: opts.file_consistency_check === true,
    copyLikeWrite: write === undefined,
  };
}

/** One target path of an alias path, and what it holds there. */
export interface Probe {
  target: string;
  obj?: Obj;
  /** Why the object could not be read (other than missing). */
  failure?: unknown;
}

/** Whether `other` is the same file as `ref`: the same size, and no hash both report differs. */
export function alike(ref: Obj, other: Obj): boolean {
  if (ref.size !== other.size) return false;
  for (const [name, value] of Object.entries(ref.hash ?? {})) {
    const theirs = other.hash?.[name];
    if (theirs && value && theirs.toLowerCase() !== value.toLowerCase()) return false;
  }
  return true;
}

/**
 * Whether each probe holds the object the alias path stands for. The first object found is the
 * reference: another target holds it when it has an object of the same kind (a folder, where a
 * parent folder is asked for) and, with the consistency check, a file alike to the reference.
 */
export function holding(probes: Probe[], opts: { folder?: boolean; consistency: boolean }): boolean[] {
  const ref = probes.find((p) => p.obj && (!opts.folder || p.obj.isDir))?.obj;
  return probes.map(({ obj }) => {
    if (!obj || !ref || obj.isDir !== ref.isDir) return false;
    return obj.isDir || !opts.consistency || alike(ref, obj);
  });
}

export const pathConflict = (name: string) => new StorageError('Conflict', `path conflict: ${name} exists in several alias paths`);
export const samePathLeak = (name: string) => new StorageError('Conflict', `leak some of same-name dirs: ${name} is missing from some alias paths`);
export const noEnoughSpace = (name: string) => new StorageError('TooLarge', `none of same-name dirs has enough space for ${name}`);

/** Refuses a disabled policy before any target is looked at. */
export function refuseDisabled(option: 'write_conflict_policy' | 'put_conflict_policy', policy: PutPolicy): void {
  if (policy === 'disabled') throw new PermissionDenied(`the alias ${option} is disabled`);
}

/**
 * The targets a write or put policy picks among `probes` (in the order of `paths`), `held` telling
 * which hold the object; `name` names it in refusals. random and the quota policies are narrowed
 * to one target afterwards (pickOne, pickByQuota). Nothing held: the first failure, else not found.
 */
export function chooseTargets(policy: PutPolicy, probes: Probe[], held: boolean[], name: string, notFound: () => Error): string[] {
  const holders = probes.filter((_, i) => held[i]).map((p) => p.target);
  if (holders.length === 0) throw probes.find((p) => p.failure)?.failure ?? notFound();
  const everywhere = holders.length === probes.length;
  switch (policy) {
    case 'disabled':
      throw new PermissionDenied('the alias policy is disabled');
    case 'first':
      return holders.slice(0, 1);
    case 'deterministic':
      if (holders.length > 1) throw pathConflict(name);
      return holders;
    case 'deterministic_or_all':
      if (holders.length > 1 && !everywhere) throw samePathLeak(name);
      return holders;
    case 'all_strict':
      if (!everywhere) throw samePathLeak(name);
      return holders;
    case 'all':
    case 'random':
    case 'quota':
    case 'quota_strict':
      return holders;
  }
}

/** One of `list` at random. */
export function pickOne<T>(list: T[], random: () => number = Math.random): T {
  return list[Math.min(list.length - 1, Math.floor(random() * list.length))]!;
}

/**
 * quota and quota_strict: one target at random, weighted by its free space, among those whose
 * storage reports at least `size` free bytes. None does: quota takes one at random of those whose
 * storage can not tell its space; quota_strict (or no such target) refuses.
 */
export async function pickByQuota(
  targets: string[],
  size: number,
  strict: boolean,
  freeSpace: (target: string) => Promise<number | undefined>,
  name: string,
  random: () => number = Math.random,
): Promise<string> {
  const free = await Promise.all(targets.map((t) => freeSpace(t).catch(() => undefined)));
  const need = Math.max(0, size);
  const weights = free.map((f) => (f !== undefined && f >= need && f > 0 ? f : 0));
  const total = weights.reduce((a, b) => a + b, 0);
  if (total > 0) {
    let r = random() * total;
    let last = 0;
    for (let i = 0; i < targets.length; i++) {
      if (weights[i]! === 0) continue;
      if (r < weights[i]!) return targets[i]!;
      r -= weights[i]!;
      last = i;
    }
    return targets[last]!;
  }
  const unknown = targets.filter((_, i) => free[i] === undefined);
  if (strict || unknown.length === 0) throw noEnoughSpace(name);
  return pickOne(unknown, random);
}

import type { Selectable } from 'kysely';
import { type DbHandle, insertReturningId } from './index.js';
import type { AccessGroupsTable } from './schema.js';

/** A virtual path shown at `/<name>` of a principal's tree (a group's or a user's own extra root). */
export interface RootSpec {
  path: string;
  name: string;
}

/**
 * Limits of an account (migration 31; 0 means none): upload and download rate in bytes per second
 * shared by all of one user's transfers, concurrent transfers, concurrent sessions. A user's
 * effective limit is the smallest non-zero one of their own and their groups' (view/limits.ts).
 */
export interface AccountLimits {
  uploadRate: number;
  downloadRate: number;
  maxTransfers: number;
  maxSessions: number;
}

export const NO_LIMITS: AccountLimits = { uploadRate: 0, downloadRate: 0, maxTransfers: 0, maxSessions: 0 };

/** The limits of a users or access_groups row. */
export function limitsOf(r: { upload_rate?: number | null; download_rate?: number | null; max_transfers?: number | null; max_sessions?: number | null }): AccountLimits {
  return { uploadRate: Number(r.upload_rate ?? 0), downloadRate: Number(r.download_rate ?? 0), maxTransfers: Number(r.max_transfers ?? 0), maxSessions: Number(r.max_sessions ?? 0) };
}

/** The columns of `limits`. */
export function limitColumns(l: AccountLimits) {
  return { upload_rate: l.uploadRate, download_rate: l.downloadRate, max_transfers: l.maxTransfers, max_sessions: l.maxSessions };
}

/** A group of users (migration 26): the bits and roots each member gains. */
export interface Group {
  id: number;
  name: string;
  permission: number;
  roots: RootSpec[];
  /** Bytes and files its members' writes into its roots may use together (0: no quota). */
  quotaBytes: number;
  quotaFiles: number;
  limits: AccountLimits;
}

export type NewGroup = Omit<Group, 'id'>;

/** Roots stored as JSON; anything malformed reads as no root (never a crash on a hand-edited row). */
export function parseRoots(text: string | null | undefined): RootSpec[] {
  if (!text) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return [];
  }
  if (!Array.isArray(parsed)) return [];
  return parsed
    .filter((r): r is RootSpec => typeof r === 'object' && r !== null && typeof r.path === 'string' && typeof r.name === 'string')
    .map((r) => ({ path: r.path, name: r.name }));
}

function fromRow(r: Selectable<AccessGroupsTable>): Group {
  return { id: Number(r.id), name: r.name, permission: Number(r.permission), roots: parseRoots(r.roots), quotaBytes: Number(r.quota_bytes ?? 0), quotaFiles: Number(r.quota_files ?? 0), limits: limitsOf(r) };
}

const toRow = (g: NewGroup) => ({ name: g.name, permission: g.permission, roots: JSON.stringify(g.roots), quota_bytes: g.quotaBytes, quota_files: g.quotaFiles, ...limitColumns(g.limits) });

/** Groups (`access_groups`) and who belongs to them (`group_members`). */
export class GroupsRepo {
  constructor(private readonly h: DbHandle) {}

  async list(): Promise<Group[]> {
    return (await this.h.db.selectFrom('access_groups').selectAll().orderBy('id').execute()).map(fromRow);
  }

  async byId(id: number): Promise<Group | undefined> {
    const r = await this.h.db.selectFrom('access_groups').selectAll().where('id', '=', id).executeTakeFirst();
    return r && fromRow(r);
  }

  async byName(name: string): Promise<Group | undefined> {
    const r = await this.h.db.selectFrom('access_groups').selectAll().where('name', '=', name).executeTakeFirst();
    return r && fromRow(r);
  }

  /** The groups with a quota. */
  async withQuota(): Promise<Group[]> {
    return (await this.h.db.selectFrom('access_groups').selectAll().where((eb) => eb.or([eb('quota_bytes', '>', 0), eb('quota_files', '>', 0)])).orderBy('id').execute()).map(fromRow);
  }

  async byIds(ids: number[]): Promise<Group[]> {
    if (ids.length === 0) return [];
    return (await this.h.db.selectFrom('access_groups').selectAll().where('id', 'in', ids).orderBy('id').execute()).map(fromRow);
  }

  async create(g: NewGroup): Promise<number> {
    return insertReturningId(this.h, this.h.db.insertInto('access_groups').values(toRow(g)));
  }

  async update(g: Group): Promise<void> {
    await this.h.db.updateTable('access_groups').set(toRow(g)).where('id', '=', g.id).execute();
  }

  /**
   * Deletes a group, its memberships and its path rules, in one transaction (a rule left behind
   * would apply to no one, and could name no group in a backup).
   */
  async delete(id: number): Promise<void> {
    await this.h.db.transaction().execute(async (tx) => {
      await tx.deleteFrom('meta').where('group_id', '=', id).execute();
      await tx.deleteFrom('group_members').where('group_id', '=', id).execute();
      await tx.deleteFrom('access_groups').where('id', '=', id).execute();
    });
  }

  /** The ids of a group's members. */
  async members(groupId: number): Promise<number[]> {
    const rows = await this.h.db.selectFrom('group_members').select('user_id').where('group_id', '=', groupId).orderBy('user_id').execute();
    return rows.map((r) => Number(r.user_id));
  }

  /** The group ids of each of `userIds` (one query). */
  async groupIdsOf(userIds: number[]): Promise<Map<number, number[]>> {
    const out = new Map<number, number[]>(userIds.map((id) => [id, []]));
    if (userIds.length === 0) return out;
    const rows = await this.h.db.selectFrom('group_members').select(['user_id', 'group_id']).where('user_id', 'in', userIds).orderBy('group_id').execute();
    for (const r of rows) out.get(Number(r.user_id))?.push(Number(r.group_id));
    return out;
  }

  /** Makes `groupIds` the user's groups exactly. */
  async setMembership(userId: number, groupIds: number[]): Promise<void> {
    await this.h.db.transaction().execute(async (tx) => {
      await tx.deleteFrom('group_members').where('user_id', '=', userId).execute();
      const ids = [...new Set(groupIds)];
      if (ids.length > 0) await tx.insertInto('group_members').values(ids.map((group_id) => ({ user_id: userId, group_id }))).execute();
    });
  }

  /** Drops a deleted user's memberships. */
  async removeUser(userId: number): Promise<void> {
    await this.h.db.deleteFrom('group_members').where('user_id', '=', userId).execute();
  }
}

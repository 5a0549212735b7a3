import type { EventOp, OpEvents } from '../audit/events.js';
import { Recorder } from '../audit/record.js';
import type { Group, GroupsRepo, RootSpec } from '../db/groups.js';
import type { UsersRepo } from '../db/users.js';
import { BadRequest, NotFound } from '../errors.js';
import type { Actor } from './accounts.js';
import { ALL_PERMISSIONS } from './permissions.js';
import { checkedLimits, type LimitFields, limitsJson } from './limits.js';
import { checkQuota, checkRoots, checkTree } from './roots.js';

const MAX_GROUP_NAME = 255;

/** What a create or update of a group asks for (the wire's group object). */
export interface GroupInput extends LimitFields {
  id?: number;
  name: string;
  permission?: number;
  roots?: RootSpec[];
  quota_bytes?: number;
  quota_files?: number;
}

/** The group object of the wire. */
export function groupJson(g: Group) {
  return { id: g.id, name: g.name, permission: g.permission, roots: g.roots.map((r) => ({ path: r.path, name: r.name })), quota_bytes: g.quotaBytes, quota_files: g.quotaFiles, ...limitsJson(g.limits) };
}

/**
 * Groups of users: bits and roots their members gain (docs/access-and-security.md, effective
 * rights). Every change drops the auth cache, so each member's next operation on every front is
 * decided with the groups as they are now.
 */
export class Groups {
  constructor(
    private readonly repo: GroupsRepo,
    private readonly users: UsersRepo,
    private readonly events: OpEvents,
    /** Called once a deleted group's path rules are gone with it (the metas service reloads them). */
    private readonly rulesDropped: () => Promise<void> = async () => undefined,
  ) {}

  list(): Promise<Group[]> {
    return this.repo.list();
  }

  async get(id: number): Promise<Group> {
    const g = await this.repo.byId(id);
    if (!g) throw new NotFound('group not found');
    return g;
  }

  private change<T>(actor: Actor | undefined, op: EventOp, name: string, fn: () => Promise<T>): Promise<T> {
    return new Recorder(this.events, actor?.user ?? '', actor?.origin ?? { front: 'cli' }).run(op, name, fn);
  }

  private async checked(input: GroupInput, old?: Group): Promise<Omit<Group, 'id'>> {
    const name = input.name.trim();
    if (name === '') throw new BadRequest('name is required');
    if (Buffer.byteLength(name) > MAX_GROUP_NAME) throw new BadRequest(`name is longer than ${MAX_GROUP_NAME} bytes`);
    const other = await this.repo.byName(name);
    if (other && other.id !== old?.id) throw new BadRequest(`group ${name} already exists`);
    const permission = input.permission ?? old?.permission ?? 0;
    if (!Number.isInteger(permission) || permission < 0 || permission > ALL_PERMISSIONS) throw new BadRequest(`permission must be a number of bits from 0 to ${ALL_PERMISSIONS}`);
    return {
      name,
      permission,
      roots: input.roots === undefined ? (old?.roots ?? []) : checkRoots(input.roots),
      quotaBytes: checkQuota('quota_bytes', input.quota_bytes ?? old?.quotaBytes ?? 0),
      quotaFiles: checkQuota('quota_files', input.quota_files ?? old?.quotaFiles ?? 0),
      limits: checkedLimits(input, old?.limits),
    };
  }

  async create(input: GroupInput, actor?: Actor): Promise<number> {
    return this.change(actor, 'group_create', input.name.trim(), async () => this.repo.create(await this.checked(input)));
  }

  /** Saves a group; refused when one of its roots' names clashes with another root of a member. */
  async update(input: GroupInput & { id: number }, actor?: Actor): Promise<void> {
    await this.change(actor, 'group_update', input.name.trim() || String(input.id), async () => {
      const old = await this.get(input.id);
      const next = { ...(await this.checked(input, old)), id: old.id };
      for (const id of await this.repo.members(old.id)) {
        const member = await this.users.byId(id);
        if (member) checkTree(member.username, { ...member, groups: (member.groups ?? []).map((g) => (g.id === next.id ? next : g)) });
      }
      await this.repo.update(next);
    });
  }

  async delete(id: number, actor?: Actor): Promise<void> {
    const name = (await this.repo.byId(id))?.name ?? String(id);
    await this.change(actor, 'group_delete', name, async () => {
      await this.get(id);
      await this.repo.delete(id);
      await this.rulesDropped();
    });
  }

  /** The groups of `ids`, every one existing (a user's `group_ids` as the admin saves them). */
  async existing(ids: number[]): Promise<Group[]> {
    const unique = [...new Set(ids)];
    const found = await this.repo.byIds(unique);
    const missing = unique.filter((id) => !found.some((g) => g.id === id));
    if (missing.length > 0) throw new BadRequest(`group_ids: no group ${missing.join(', ')}`);
    return found;
  }
}

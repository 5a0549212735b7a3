import type { Selectable } from 'kysely';
import { type DbHandle, bit, bool, insertReturningId } from './index.js';
import { type AccountLimits, type Group, GroupsRepo, limitColumns, limitsOf, NO_LIMITS, parseRoots, type RootSpec } from './groups.js';
import type { UsersTable } from './schema.js';

export const ROLE_GENERAL = 0;
export const ROLE_GUEST = 1;
export const ROLE_ADMIN = 2;

export interface User {
  id: number;
  username: string;
  pwdHash: string;
  salt: string;
  /** Unix seconds of the last password change; copied into tokens as `pwd_ts`. */
  pwdTs: number;
  basePath: string;
  role: number;
  permission: number;
  otpSecret: string;
  otpLastStep: number;
  disabled: boolean;
  ssoId: string;
  authn: string;
  /** May sign in with the LDAP directory's password (OpenList's `allow_ldap`). */
  allowLdap: boolean;
  /** The user's own extra roots, each shown at `/<name>` of their tree (base_path stays their own root). */
  roots?: RootSpec[];
  /** Bytes and files the user's own root may hold (0: no quota). */
  quotaBytes?: number;
  quotaFiles?: number;
  /** The user's own limits (rates, transfers, sessions; 0: none). */
  limits?: AccountLimits;
  /** The groups the user belongs to, as they are now (read with the user; a synthetic principal has none). */
  groups?: Group[];
}

export type NewUser = Omit<User, 'id'>;

function fromRow(r: Selectable<UsersTable>): User {
  return {
    id: Number(r.id),
    username: r.username,
    pwdHash: r.pwd_hash,
    salt: r.salt,
    pwdTs: Number(r.pwd_ts),
    basePath: r.base_path,
    role: Number(r.role),
    permission: Number(r.permission),
    otpSecret: r.otp_secret,
    otpLastStep: Number(r.otp_last_step),
    disabled: bool(r.disabled),
    ssoId: r.sso_id,
    authn: r.authn,
    allowLdap: bool(r.allow_ldap),
    roots: parseRoots(r.roots),
    quotaBytes: Number(r.quota_bytes ?? 0),
    quotaFiles: Number(r.quota_files ?? 0),
    limits: limitsOf(r),
    groups: [],
  };
}

function toRow(u: NewUser) {
  return {
    username: u.username,
    pwd_hash: u.pwdHash,
    salt: u.salt,
    pwd_ts: u.pwdTs,
    base_path: u.basePath,
    role: u.role,
    permission: u.permission,
    otp_secret: u.otpSecret,
    otp_last_step: u.otpLastStep,
    disabled: bit(u.disabled),
    sso_id: u.ssoId,
    authn: u.authn,
    allow_ldap: bit(u.allowLdap),
    roots: JSON.stringify(u.roots ?? []),
    quota_bytes: u.quotaBytes ?? 0,
    quota_files: u.quotaFiles ?? 0,
    ...limitColumns(u.limits ?? NO_LIMITS),
  };
}

export class UsersRepo {
  private readonly groupsRepo: GroupsRepo;

  constructor(private readonly h: DbHandle) {
    this.groupsRepo = new GroupsRepo(h);
  }

  /** The users with their groups as they are now (two queries for any number of users). */
  private async withGroups(users: User[]): Promise<User[]> {
    if (users.length === 0) return users;
    const ids = await this.groupsRepo.groupIdsOf(users.map((u) => u.id));
    const groups = new Map((await this.groupsRepo.byIds([...new Set([...ids.values()].flat())])).map((g) => [g.id, g]));
    return users.map((u) => ({ ...u, groups: (ids.get(u.id) ?? []).flatMap((id) => groups.get(id) ?? []) }));
  }

  private async one(r: Selectable<UsersTable> | undefined): Promise<User | undefined> {
    return r && (await this.withGroups([fromRow(r)]))[0];
  }

  async byId(id: number): Promise<User | undefined> {
    const r = await this.h.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
    return this.one(r);
  }

  async byUsername(username: string): Promise<User | undefined> {
    const r = await this.h.db.selectFrom('users').selectAll().where('username', '=', username).executeTakeFirst();
    return this.one(r);
  }

  /**
   * The user whose name equals `username` regardless of case (lower() on both sides: every ASCII
   * letter on SQLite, Unicode on PostgreSQL and MariaDB), so no name gets a case variant.
   */
  async byUsernameFolded(username: string): Promise<User | undefined> {
    const r = await this.h.db
      .selectFrom('users')
      .selectAll()
      .where((eb) => eb(eb.fn('lower', ['username']), '=', eb.fn('lower', [eb.val(username)])))
      .orderBy('id')
      .executeTakeFirst();
    return this.one(r);
  }

  /** Every user's id and name (the look-alike check of a new name compares their folded forms). */
  async names(): Promise<Array<{ id: number; username: string }>> {
    return (await this.h.db.selectFrom('users').select(['id', 'username']).execute()).map((r) => ({ id: Number(r.id), username: r.username }));
  }

  /** The users bound to a single sign-on identity (more than one is a misconfiguration the caller refuses). */
  async bySsoId(ssoId: string): Promise<User[]> {
    if (ssoId === '') return [];
    return this.withGroups((await this.h.db.selectFrom('users').selectAll().where('sso_id', '=', ssoId).orderBy('id').limit(2).execute()).map(fromRow));
  }

  async byRole(role: number): Promise<User | undefined> {
    const r = await this.h.db.selectFrom('users').selectAll().where('role', '=', role).orderBy('id').executeTakeFirst();
    return this.one(r);
  }

  async count(): Promise<number> {
    const r = await this.h.db.selectFrom('users').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /** `perPage` < 1 lists everything, as the original's PageReq. */
  async list(page: number, perPage: number): Promise<{ users: User[]; total: number }> {
    let q = this.h.db.selectFrom('users').selectAll().orderBy('id');
    if (perPage > 0) q = q.limit(perPage).offset((page - 1) * perPage);
    const [rows, total] = await Promise.all([q.execute(), this.count()]);
    return { users: await this.withGroups(rows.map(fromRow)), total };
  }

  async create(u: NewUser): Promise<number> {
    return insertReturningId(this.h, this.h.db.insertInto('users').values(toRow(u)));
  }

  async update(u: User): Promise<void> {
    await this.h.db.updateTable('users').set(toRow(u)).where('id', '=', u.id).execute();
  }

  /** The users with a quota (the quota service's background scans). */
  async withQuota(): Promise<User[]> {
    const rows = await this.h.db.selectFrom('users').selectAll().where((eb) => eb.or([eb('quota_bytes', '>', 0), eb('quota_files', '>', 0)])).orderBy('id').execute();
    return this.withGroups(rows.map(fromRow));
  }

  /** Makes `groupIds` the user's groups exactly. */
  async setGroups(id: number, groupIds: number[]): Promise<void> {
    await this.groupsRepo.setMembership(id, groupIds);
  }

  async delete(id: number): Promise<void> {
    await this.groupsRepo.removeUser(id);
    await this.h.db.deleteFrom('users').where('id', '=', id).execute();
  }
}

import type { Selectable } from 'kysely';
import { type DbHandle, bit, bool, insertReturningId } from './index.js';
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
  };
}

export class UsersRepo {
  constructor(private readonly h: DbHandle) {}

  async byId(id: number): Promise<User | undefined> {
    const r = await this.h.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
    return r && fromRow(r);
  }

  async byUsername(username: string): Promise<User | undefined> {
    const r = await this.h.db.selectFrom('users').selectAll().where('username', '=', username).executeTakeFirst();
    return r && fromRow(r);
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
    return r && fromRow(r);
  }

  /** The users bound to a single sign-on identity (more than one is a misconfiguration the caller refuses). */
  async bySsoId(ssoId: string): Promise<User[]> {
    if (ssoId === '') return [];
    return (await this.h.db.selectFrom('users').selectAll().where('sso_id', '=', ssoId).orderBy('id').limit(2).execute()).map(fromRow);
  }

  async byRole(role: number): Promise<User | undefined> {
    const r = await this.h.db.selectFrom('users').selectAll().where('role', '=', role).orderBy('id').executeTakeFirst();
    return r && fromRow(r);
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
    return { users: rows.map(fromRow), total };
  }

  async create(u: NewUser): Promise<number> {
    return insertReturningId(this.h, this.h.db.insertInto('users').values(toRow(u)));
  }

  async update(u: User): Promise<void> {
    await this.h.db.updateTable('users').set(toRow(u)).where('id', '=', u.id).execute();
  }

  async delete(id: number): Promise<void> {
    await this.h.db.deleteFrom('users').where('id', '=', id).execute();
  }
}

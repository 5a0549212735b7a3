// The repositories of the credentials a user adds to an account: app passwords, SSH public keys
// and S3 access keys. One table each, of the same shape: id, user_id, the key's own text columns,
// added_time and last_used_time; one repository class, given the table and its own columns.

import type { Generated, Kysely } from 'kysely';
import { type DbHandle, insertReturningId } from './index.js';
import type { Database } from './schema.js';

/** The fields every user key has. */
export interface UserKey {
  id: number;
  userId: number;
  addedTime: number;
  /** 0 until first used (an SSH key added through the API starts at its added time). */
  lastUsedTime: number;
}

export interface AppPassword extends UserKey {
  name: string;
  secretHash: string;
}

export interface SshKey extends UserKey {
  title: string;
  fingerprint: string;
  keyStr: string;
}

export interface S3Key extends UserKey {
  accessKey: string;
  title: string;
  secret: string;
}

/** The columns every key table has. */
interface KeyColumns {
  id: Generated<number>;
  user_id: number;
  added_time: number;
  last_used_time: number;
}

type KeyTable = 'app_passwords' | 'ssh_public_keys' | 's3_keys';
type OwnField<K extends UserKey> = Exclude<keyof K, keyof UserKey> & string;
type OwnColumn<T extends KeyTable> = T extends KeyTable ? Exclude<keyof Database[T], keyof KeyColumns> & string : never;

/** One kind of user key: its table and, for each of its own fields (all text), the column holding it. */
export interface KeyKind<K extends UserKey, T extends KeyTable = KeyTable> {
  table: T;
  columns: { [F in OwnField<K>]: OwnColumn<T> };
  /** The field a user names a key by (unique per user). */
  name: OwnField<K>;
}

/** Named secrets for WebDAV, SFTP and FTP; only the secret's hash is kept. */
export const APP_PASSWORDS: KeyKind<AppPassword, 'app_passwords'> = {
  table: 'app_passwords',
  columns: { name: 'name', secretHash: 'secret_hash' },
  name: 'name',
};

export const SSH_KEYS: KeyKind<SshKey, 'ssh_public_keys'> = {
  table: 'ssh_public_keys',
  columns: { title: 'title', fingerprint: 'fingerprint', keyStr: 'key_str' },
  name: 'title',
};

/** Per-user S3 access keys; the secret is kept as given (SigV4 needs it to check a signature). */
export const S3_KEYS: KeyKind<S3Key, 's3_keys'> = {
  table: 's3_keys',
  columns: { accessKey: 'access_key', title: 'title', secret: 'secret' },
  name: 'title',
};

/** The keys of one kind, each belonging to one user. */
export class UserKeysRepo<K extends UserKey> {
  private readonly own: Array<[OwnField<K>, string]>;

  constructor(
    private readonly h: DbHandle,
    private readonly kind: KeyKind<K>,
  ) {
    this.own = Object.entries(kind.columns) as Array<[OwnField<K>, string]>;
  }

  /** The database as this repository sees its table: the common columns typed, its own ones named at run time. */
  private get db(): Kysely<Record<KeyTable, KeyColumns>> {
    return this.h.db as unknown as Kysely<Record<KeyTable, KeyColumns>>;
  }

  private rows() {
    return this.db.selectFrom(this.kind.table).selectAll();
  }

  private column(field: OwnField<K>) {
    return this.db.dynamic.ref<string>(this.kind.columns[field]);
  }

  private from(r: { id: number; user_id: number; added_time: number; last_used_time: number }): K {
    const row = r as typeof r & Record<string, string>;
    const key: Record<string, unknown> = { id: Number(r.id), userId: Number(r.user_id) };
    for (const [field, column] of this.own) key[field] = row[column];
    key.addedTime = Number(r.added_time);
    key.lastUsedTime = Number(r.last_used_time);
    return key as unknown as K;
  }

  /** All of a user's keys, oldest first. */
  async ofUser(userId: number): Promise<K[]> {
    return (await this.rows().where('user_id', '=', userId).orderBy('id').execute()).map((r) => this.from(r));
  }

  /** A page of a user's keys, oldest first (`perPage` 0: all of them), and how many there are. */
  async pageOfUser(userId: number, page: number, perPage: number): Promise<{ keys: K[]; total: number }> {
    let q = this.rows().where('user_id', '=', userId).orderBy('id');
    if (perPage > 0) q = q.limit(perPage).offset((page - 1) * perPage);
    const count = await this.db
      .selectFrom(this.kind.table)
      .select((eb) => eb.fn.countAll().as('n'))
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    return { keys: (await q.execute()).map((r) => this.from(r)), total: Number(count.n) };
  }

  /** Every user's keys that were used at least once, last used first (at most 10 000). */
  async used(): Promise<K[]> {
    return (await this.rows().where('last_used_time', '>', 0).orderBy('last_used_time', 'desc').limit(10_000).execute()).map((r) => this.from(r));
  }

  async byId(id: number): Promise<K | undefined> {
    const r = await this.rows().where('id', '=', id).executeTakeFirst();
    return r && this.from(r);
  }

  /** The user's key of that name (the kind's `name` field). */
  async byName(userId: number, name: string): Promise<K | undefined> {
    const r = await this.rows().where('user_id', '=', userId).where(this.column(this.kind.name), '=', name).executeTakeFirst();
    return r && this.from(r);
  }

  /** The first key (by any user) whose `field` is `value`. */
  async byField(field: OwnField<K>, value: string): Promise<K | undefined> {
    const r = await this.rows().where(this.column(field), '=', value).executeTakeFirst();
    return r && this.from(r);
  }

  async create(k: Omit<K, 'id'>): Promise<number> {
    const values: Record<string, unknown> = { user_id: k.userId };
    for (const [field, column] of this.own) values[column] = (k as Record<string, unknown>)[field];
    values.added_time = k.addedTime;
    values.last_used_time = k.lastUsedTime;
    return insertReturningId(this.h, this.h.db.insertInto(this.kind.table).values(values as never));
  }

  async touch(id: number, when: number): Promise<void> {
    await this.db.updateTable(this.kind.table).set({ last_used_time: when }).where('id', '=', id).execute();
  }

  async delete(id: number): Promise<void> {
    await this.db.deleteFrom(this.kind.table).where('id', '=', id).execute();
  }

  async deleteOfUser(userId: number): Promise<void> {
    await this.db.deleteFrom(this.kind.table).where('user_id', '=', userId).execute();
  }
}

export type AppPasswordsRepo = UserKeysRepo<AppPassword>;
export type SshKeysRepo = UserKeysRepo<SshKey>;
export type S3KeysRepo = UserKeysRepo<S3Key>;

import type { DbHandle } from '../db/index.js';
import { type NewUser, type User, UsersRepo } from '../db/users.js';
import { SessionsRepo } from '../db/sessions.js';
import { type Group, GroupsRepo, type NewGroup } from '../db/groups.js';

/**
 * How long a cached user or session is used without asking the database. Changes made through
 * this process, or announced by another one on the cluster bus, drop the cache at once; this
 * bounds how long a change made around them (the CLI's `admin set` on a running server's
 * database) takes to be seen.
 */
export const AUTH_CACHE_TTL_MS = 2000;
const TTL_MS = AUTH_CACHE_TTL_MS;
/** Entries kept at most; past it the cache starts over (only ever a burst of new logins). */
const MAX_ENTRIES = 10_000;

interface Entry<T> {
  value: T;
  until: number;
}

/**
 * The users and sessions every request resolves (`Accounts.resolve`: one session and one user
 * per request), kept in memory so that steady-state requests touch no database. Every write of
 * a user or a session goes through the repos below, which drop the whole cache and announce
 * the change (`onChange`, wired to the cluster bus in cluster mode).
 */
export class AuthCache {
  readonly users = new Map<string, Entry<User>>();
  readonly sessions = new Map<string, Entry<true>>();
  /** Times the cache was dropped: a read that overlapped a drop is not stored. */
  drops = 0;
  /** Reads in flight by key: concurrent misses (many requests when an entry expires) share one query. */
  private readonly pending = new Map<string, Promise<unknown>>();
  /** Announces a change to the other processes; resolves once it is sent. */
  onChange?: () => Promise<void>;

  get<T>(map: Map<string, Entry<T>>, key: string): T | undefined {
    const e = map.get(key);
    if (!e) return undefined;
    if (e.until > Date.now()) return e.value;
    map.delete(key);
    return undefined;
  }

  set<T>(map: Map<string, Entry<T>>, key: string, value: T): void {
    if (map.size >= MAX_ENTRIES) map.clear();
    map.set(key, { value, until: Date.now() + TTL_MS });
  }

  /** One read per key at a time: callers that miss while it runs get its result. */
  shared<T>(key: string, read: () => Promise<T>): Promise<T> {
    let p = this.pending.get(key) as Promise<T> | undefined;
    if (!p) {
      const mine: Promise<T> = read().finally(() => {
        if (this.pending.get(key) === mine) this.pending.delete(key);
      });
      this.pending.set(key, mine);
      p = mine;
    }
    return p;
  }

  /** Drops everything (a change here or in another process). */
  drop(): void {
    this.drops++;
    // reads started before the change must not answer requests made after it
    this.pending.clear();
    this.users.clear();
    this.sessions.clear();
  }

  /** After a write: drop, then tell the other processes before the change is answered. */
  async changed(): Promise<void> {
    this.drop();
    await this.onChange?.();
  }
}

/** Users by name and by role from the cache; every write drops it. */
export class CachedUsersRepo extends UsersRepo {
  constructor(
    h: DbHandle,
    private readonly cache: AuthCache,
  ) {
    super(h);
  }

  private async cached(key: string, read: () => Promise<User | undefined>): Promise<User | undefined> {
    const hit = this.cache.get(this.cache.users, key);
    if (hit) return { ...hit };
    const user = await this.cache.shared(`u:${key}`, async () => {
      const drops = this.cache.drops;
      const row = await read();
      // Not stored when a write dropped the cache meanwhile: the row read may be the old one.
      if (row && drops === this.cache.drops) this.cache.set(this.cache.users, key, { ...row });
      return row;
    });
    return user && { ...user };
  }

  override byUsername(username: string): Promise<User | undefined> {
    return this.cached(`n:${username}`, () => super.byUsername(username));
  }

  override byRole(role: number): Promise<User | undefined> {
    return this.cached(`r:${role}`, () => super.byRole(role));
  }

  /** Long-lived fronts (SFTP/FTP sessions, tasks) re-read their principal by id before each operation. */
  override byId(id: number): Promise<User | undefined> {
    return this.cached(`i:${id}`, () => super.byId(id));
  }

  override async create(u: NewUser): Promise<number> {
    const id = await super.create(u);
    await this.cache.changed();
    return id;
  }

  override async update(u: User): Promise<void> {
    await super.update(u);
    await this.cache.changed();
  }

  override async setGroups(id: number, groupIds: number[]): Promise<void> {
    await super.setGroups(id, groupIds);
    await this.cache.changed();
  }

  override async delete(id: number): Promise<void> {
    await super.delete(id);
    await this.cache.changed();
  }
}

/** Groups: every write drops the cached users (they carry their groups) and announces it. */
export class CachedGroupsRepo extends GroupsRepo {
  constructor(
    h: DbHandle,
    private readonly cache: AuthCache,
  ) {
    super(h);
  }

  override async create(g: NewGroup): Promise<number> {
    const id = await super.create(g);
    await this.cache.changed();
    return id;
  }

  override async update(g: Group): Promise<void> {
    await super.update(g);
    await this.cache.changed();
  }

  override async delete(id: number): Promise<void> {
    await super.delete(id);
    await this.cache.changed();
  }

  override async setMembership(userId: number, groupIds: number[]): Promise<void> {
    await super.setMembership(userId, groupIds);
    await this.cache.changed();
  }

  override async removeUser(userId: number): Promise<void> {
    await super.removeUser(userId);
    await this.cache.changed();
  }
}

/** Live sessions from the cache (a missing or expired one is always read again); every removal drops it. */
export class CachedSessionsRepo extends SessionsRepo {
  constructor(
    h: DbHandle,
    private readonly cache: AuthCache,
  ) {
    super(h);
  }

  override async exists(id: string, now: number): Promise<boolean> {
    if (this.cache.get(this.cache.sessions, id)) return true;
    return this.cache.shared(`s:${id}`, async () => {
      const drops = this.cache.drops;
      const live = await super.exists(id, now);
      if (live && drops === this.cache.drops) this.cache.set(this.cache.sessions, id, true);
      return live;
    });
  }

  override async delete(id: string): Promise<void> {
    await super.delete(id);
    await this.cache.changed();
  }

  override async deleteForUser(userId: number): Promise<void> {
    await super.deleteForUser(userId);
    await this.cache.changed();
  }
}

import { randomBytes } from 'node:crypto';
import type { AppPasswordsRepo } from '../db/user-keys.js';
import type { SessionsRepo } from '../db/sessions.js';
import type { User } from '../db/users.js';
import { NotFound, TooManyRequests } from '../errors.js';
import { effectiveLimits } from './limits.js';

/** What a session is: a web sign-in (a token), an open SFTP or FTP connection, an app password that was used. */
export type SessionKind = 'web' | 'sftp' | 'ftp' | 'app_password';

/**
 * A session as `GET /api/me/sessions` and `/api/admin/session/list` answer it: AlistGo's fields
 * (`session_id`, `user_id`, `username`, `last_active`, `status`, `ua`, `ip`) and Atrium's
 * `kind`, `created_at` and `current` (the caller's own web session).
 */
export interface SessionInfo {
  session_id: string;
  user_id: number;
  username: string;
  kind: SessionKind;
  ip: string;
  ua: string;
  created_at: number;
  last_active: number;
  /** 1: active (AlistGo's status; a session ended here is gone, not kept inactive). */
  status: number;
  current: boolean;
}

/** An open SFTP or FTP connection, registered for as long as it is open (this process's). */
interface OpenConnection {
  id: string;
  userId: number;
  username: string;
  kind: 'sftp' | 'ftp';
  ip: string;
  ua: string;
  createdAt: number;
  lastActive: number;
  end: () => void;
}

/** A registered connection: `touch` at each operation, `close` when it ends. */
export interface ConnectionHandle {
  readonly id: string;
  touch(): void;
  close(): void;
}

export const MSG_SESSION_NOT_FOUND = 'session not found';
export const tooManySessions = (max: number) => `too many sessions: this account may have ${max} at a time (end one under Sessions, or sign out elsewhere)`;

const APP_PASSWORD_PREFIX = 'app-';

/**
 * Everything a user is signed in with, and `max_sessions` (docs/access-and-security.md,
 * limits): web sign-ins (the sessions table: every process sees them) plus this process's open
 * SFTP and FTP connections are counted before a new one is admitted; app passwords are listed
 * with their last use (WebDAV and S3 sign in per request, so they hold no session) and ending
 * one revokes it.
 */
export class AccountSessions {
  private readonly open = new Map<string, OpenConnection>();

  constructor(
    private readonly web: SessionsRepo,
    private readonly appPasswords: AppPasswordsRepo,
    private readonly usernameOf: (id: number) => Promise<string | undefined>,
  ) {}

  /** Refuses a new session of `user` when it already holds its `max_sessions`. */
  async admit(user: User): Promise<void> {
    const max = effectiveLimits(user).maxSessions;
    if (max <= 0) return;
    const held = (await this.web.countLive(user.id, Date.now())) + this.connectionsOf(user.id).length;
    if (held >= max) throw new TooManyRequests(tooManySessions(max));
  }

  /** Admits and registers an SFTP or FTP connection; `end` closes it (when a user or admin ends it). */
  async connect(user: User, kind: 'sftp' | 'ftp', client: { ip: string; ua?: string }, end: () => void): Promise<ConnectionHandle> {
    await this.admit(user);
    const now = Date.now();
    const c: OpenConnection = { id: `${kind}-${randomBytes(12).toString('base64url')}`, userId: user.id, username: user.username, kind, ip: client.ip, ua: client.ua ?? '', createdAt: now, lastActive: now, end };
    this.open.set(c.id, c);
    return {
      id: c.id,
      touch: () => (c.lastActive = Date.now()),
      close: () => this.open.delete(c.id),
    };
  }

  private connectionsOf(userId?: number): OpenConnection[] {
    return [...this.open.values()].filter((c) => userId === undefined || c.userId === userId);
  }

  /** The sessions of one user, or of every user (`userId` undefined: the admin's list). */
  async list(userId: number | undefined, currentId?: string): Promise<SessionInfo[]> {
    const now = Date.now();
    const names = new Map<number, string>();
    const nameOf = async (id: number) => {
      if (!names.has(id)) names.set(id, (await this.usernameOf(id)) ?? '');
      return names.get(id)!;
    };
    const out: SessionInfo[] = [];
    for (const s of await this.web.live(now, userId)) {
      out.push({ session_id: s.id, user_id: s.userId, username: await nameOf(s.userId), kind: 'web', ip: s.ip, ua: s.userAgent, created_at: s.createdAt, last_active: s.createdAt, status: 1, current: s.id === currentId });
    }
    for (const c of this.connectionsOf(userId)) {
      out.push({ session_id: c.id, user_id: c.userId, username: c.username, kind: c.kind, ip: c.ip, ua: c.ua, created_at: c.createdAt, last_active: c.lastActive, status: 1, current: false });
    }
    const keys = userId === undefined ? await this.appPasswords.used() : (await this.appPasswords.ofUser(userId)).filter((k) => k.lastUsedTime > 0);
    for (const k of keys) {
      out.push({ session_id: `${APP_PASSWORD_PREFIX}${k.id}`, user_id: k.userId, username: await nameOf(k.userId), kind: 'app_password', ip: '', ua: k.name, created_at: k.addedTime, last_active: k.lastUsedTime, status: 1, current: false });
    }
    return out;
  }

  /**
   * Ends one session (`userId`: only one of that user's; undefined for the admin): a web
   * session's token stops working at its next request, a connection is closed, an app password
   * is revoked. An id of nobody's (or another user's) session is NotFound.
   */
  async end(sessionId: string, userId?: number): Promise<void> {
    const c = this.open.get(sessionId);
    if (c) {
      if (userId !== undefined && c.userId !== userId) throw new NotFound(MSG_SESSION_NOT_FOUND);
      this.open.delete(sessionId);
      c.end();
      return;
    }
    if (sessionId.startsWith(APP_PASSWORD_PREFIX)) {
      const id = Number(sessionId.slice(APP_PASSWORD_PREFIX.length));
      const key = Number.isSafeInteger(id) ? await this.appPasswords.byId(id) : undefined;
      if (!key || (userId !== undefined && key.userId !== userId)) throw new NotFound(MSG_SESSION_NOT_FOUND);
      await this.appPasswords.delete(id);
      return;
    }
    const s = (await this.web.live(Date.now(), userId)).find((w) => w.id === sessionId);
    if (!s) throw new NotFound(MSG_SESSION_NOT_FOUND);
    await this.web.delete(s.id);
  }

  /** Ends every session of a user but `keep` (the caller's own); answers how many ended. */
  async endAll(userId: number, keep?: string): Promise<number> {
    let n = 0;
    for (const s of await this.web.live(Date.now(), userId)) {
      if (s.id === keep) continue;
      await this.web.delete(s.id);
      n++;
    }
    for (const c of this.connectionsOf(userId)) {
      this.open.delete(c.id);
      c.end();
      n++;
    }
    return n;
  }
}

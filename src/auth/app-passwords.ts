import { createHash } from 'node:crypto';
import type { AppPassword, AppPasswordsRepo } from '../db/user-keys.js';
import { ROLE_GUEST, type User } from '../db/users.js';
import { BadRequest, Forbidden, NotFound } from '../errors.js';
import { randomAlnum } from '../util/random.js';
import { safeEqual } from './password.js';

/** 32 characters of [A-Za-z0-9]: about 190 bits, so a plain SHA-256 is a safe stored form. */
const SECRET_LENGTH = 32;
const hashSecret = (secret: string) => createHash('sha256').update(secret).digest('hex');

/**
 * Named secrets a user creates for WebDAV, SFTP and FTP, where no second factor can travel.
 * The secret is shown once at creation; only its hash is stored. Revoking one deletes it.
 */
export class AppPasswords {
  constructor(private readonly repo: AppPasswordsRepo) {}

  list(user: User): Promise<AppPassword[]> {
    return this.repo.ofUser(user.id);
  }

  async create(user: User, name: string): Promise<{ entry: AppPassword; secret: string }> {
    if (user.role === ROLE_GUEST) throw new Forbidden('Guest user can not create app passwords');
    const trimmed = name.trim();
    if (!trimmed) throw new BadRequest('name is required');
    if (await this.repo.byName(user.id, trimmed)) throw new BadRequest(`app password ${trimmed} already exists`);
    const secret = randomAlnum(SECRET_LENGTH);
    const fields = { userId: user.id, name: trimmed, secretHash: hashSecret(secret), addedTime: Date.now(), lastUsedTime: 0 };
    const id = await this.repo.create(fields);
    return { entry: { id, ...fields }, secret };
  }

  /** Another user's entry is answered like a missing one. */
  async revoke(user: User, id: number): Promise<void> {
    const entry = await this.repo.byId(id);
    if (!entry || entry.userId !== user.id) throw new NotFound('app password not found');
    await this.repo.delete(id);
  }

  /** Whether `plain` is one of the user's app passwords; records the use when it is. */
  async match(user: User, plain: string): Promise<boolean> {
    const entry = await this.find(user, plain);
    if (!entry) return false;
    await this.repo.touch(entry.id, Date.now());
    return true;
  }

  /** The user's app password `plain` is, if any (a session signed in with it ends when it is revoked). */
  async find(user: User, plain: string): Promise<AppPassword | undefined> {
    if (plain.length !== SECRET_LENGTH) return undefined;
    const hash = hashSecret(plain);
    return (await this.repo.ofUser(user.id)).find((entry) => safeEqual(entry.secretHash, hash));
  }

  removeAllOf(userId: number): Promise<void> {
    return this.repo.deleteOfUser(userId);
  }
}

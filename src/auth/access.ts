import path from 'node:path';
import type { User } from '../db/users.js';
import type { Obj } from '../drivers/types.js';
import { Forbidden } from '../errors.js';
import type { Metas } from '../fs/metas.js';
import { can, PERM } from './permissions.js';
import { safeEqual } from './password.js';

export const MSG_NO_ACCESS = 'password is incorrect or you have no permission';
export const MSG_DENIED = 'permission denied';

const applies = (metaPath: string, p: string, sub: boolean) => sub || metaPath === p;

/**
 * The one place that decides who may see and do what at a virtual path: permission bits, the
 * hide / password / write / readme / header parts of path rules. The HTTP API, raw links,
 * WebDAV, SFTP and search all ask here, so they give the same answer.
 */
export class Access {
  constructor(private readonly metas: Metas) {}

  /** True when `name` in folder `dir` is hidden from this user. */
  private hiddenIn(user: User, dir: string, name: string): boolean {
    if (can(user, PERM.SEE_HIDES)) return false;
    const rule = this.metas.nearest(dir);
    if (!rule || rule.hides.length === 0 || !applies(rule.meta.path, dir, rule.meta.h_sub)) return false;
    return rule.hides.some((r) => r.test(name));
  }

  /** True when the path or any folder on the way to it is hidden from this user. */
  isHidden(user: User, virtualPath: string): boolean {
    if (can(user, PERM.SEE_HIDES)) return false;
    let dir = '/';
    for (const segment of virtualPath.split('/').filter(Boolean)) {
      if (this.hiddenIn(user, dir, segment)) return true;
      dir = path.posix.join(dir, segment);
    }
    return false;
  }

  /** The password rule covering a path, if any. */
  private passwordRule(virtualPath: string) {
    const rule = this.metas.nearest(virtualPath);
    if (!rule || rule.meta.password === '' || !applies(rule.meta.path, virtualPath, rule.meta.p_sub)) return undefined;
    return rule.meta;
  }

  /**
   * May this user read the path (list, get, dirs, other, search)? Hidden entries and a wrong or
   * missing path password answer alike: 403 with the original's message, revealing nothing.
   */
  check(user: User, virtualPath: string, password: string): void {
    if (this.isHidden(user, virtualPath)) throw new Forbidden(MSG_NO_ACCESS);
    if (can(user, PERM.ACCESS_WITHOUT_PASSWORD)) return;
    const rule = this.passwordRule(virtualPath);
    if (rule && !safeEqual(password, rule.password)) throw new Forbidden(MSG_NO_ACCESS);
  }

  /** A folder's entries without those hidden from this user. */
  visible(user: User, dir: string, objs: Obj[]): Obj[] {
    if (can(user, PERM.SEE_HIDES)) return objs;
    const rule = this.metas.nearest(dir);
    if (!rule || rule.hides.length === 0 || !applies(rule.meta.path, dir, rule.meta.h_sub)) return objs;
    return objs.filter((o) => !rule.hides.some((r) => r.test(o.name)));
  }

  /** The hide rule that applies to the entries of `dir`, whoever asks. */
  private hideRule(dir: string) {
    const rule = this.metas.nearest(dir);
    return rule && rule.hides.length > 0 && applies(rule.meta.path, dir, rule.meta.h_sub) ? rule : undefined;
  }

  /**
   * Raw links of protected entries need a sign even when `sign_all` is off: entries in a folder
   * under a password rule, with a rule of their own, or hidden (or below a hidden folder). Returns
   * the test for the entries of one folder, so a listing evaluates the folder once.
   */
  signRule(dir: string): (name: string) => boolean {
    let protectedFolder = this.passwordRule(dir) !== undefined;
    let cur = '/';
    for (const segment of dir.split('/').filter(Boolean)) {
      if (protectedFolder) break;
      if (this.hideRule(cur)?.hides.some((r) => r.test(segment))) protectedFolder = true;
      cur = path.posix.join(cur, segment);
    }
    if (protectedFolder) return () => true;
    const hide = this.hideRule(dir);
    return (name) => {
      const own = this.metas.exact(path.posix.join(dir, name));
      if (own && own.meta.password !== '') return true;
      return hide !== undefined && hide.hides.some((r) => r.test(name));
    };
  }

  needsSign(virtualPath: string): boolean {
    return this.signRule(path.posix.dirname(virtualPath))(path.posix.basename(virtualPath));
  }

  /** Write bit, or a `write` rule covering the folder (mkdir and uploads). */
  canWrite(user: User, dir: string): boolean {
    if (can(user, PERM.WRITE)) return true;
    const rule = this.metas.nearest(dir);
    return Boolean(rule && rule.meta.write && applies(rule.meta.path, dir, rule.meta.w_sub));
  }

  /** Refuses a change unless the user holds `bit` and the target is not hidden from them. */
  requireChange(user: User, bit: number, ...virtualPaths: string[]): void {
    if (!can(user, bit)) throw new Forbidden(MSG_DENIED);
    for (const p of virtualPaths) if (this.isHidden(user, p)) throw new Forbidden(MSG_DENIED);
  }

  /**
   * mkdir and uploads: the write bit or a write rule at the folder, a target not hidden from
   * the user and, when a path password is given (uploads), the folder readable with it.
   */
  requireWrite(user: User, dir: string, target: string, password?: string): void {
    if (!this.canWrite(user, dir)) throw new Forbidden(MSG_DENIED);
    if (this.isHidden(user, target)) throw new Forbidden(MSG_DENIED);
    if (password !== undefined) this.check(user, dir, password);
  }

  readme(virtualPath: string): string {
    const rule = this.metas.nearest(virtualPath);
    return rule && applies(rule.meta.path, virtualPath, rule.meta.r_sub) ? rule.meta.readme : '';
  }

  header(virtualPath: string): string {
    const rule = this.metas.nearest(virtualPath);
    return rule && applies(rule.meta.path, virtualPath, rule.meta.header_sub) ? rule.meta.header : '';
  }
}

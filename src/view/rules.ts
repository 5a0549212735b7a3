import path from 'node:path';
import { safeEqual } from '../auth/password.js';
import { can, PERM } from '../auth/permissions.js';
import type { User } from '../db/users.js';
import type { Obj } from '../drivers/types.js';
import type { Loaded, Metas } from '../fs/metas.js';
import { isSubPath } from '../util/paths.js';

const applies = (metaPath: string, p: string, sub: boolean) => sub || metaPath === p;
const parentOf = (p: string) => (p === '/' ? '/' : p.slice(0, p.lastIndexOf('/')) || '/');
/** Memoised nearest-rule lookups kept per principal before the memo starts over. */
const MEMO_LIMIT = 20_000;

/** The ids of a principal's groups in ascending order, as Metas.exact takes them. */
const groupIdsOf = (user: User): number[] => (user.groups ?? []).map((g) => g.id).sort((a, b) => a - b);

/**
 * The nearest rule of each path, found once and remembered: checking every ancestor of a path
 * is linear in its depth. Rules reloaded by the admin take effect at once (the memo follows the
 * rules' version). `groups`: the principal's groups (ascending), whose rules apply besides
 * everyone's and, at the same path, instead of them.
 */
export class RuleIndex {
  private memo = new Map<string, Loaded | null>();
  private version = -1;

  constructor(
    readonly metas: Metas,
    readonly groups: readonly number[] = [],
  ) {}

  /** The rule of `p` itself or of its nearest ancestor (`p` cleaned). */
  nearest(p: string): Loaded | undefined {
    if (this.version !== this.metas.version || this.memo.size > MEMO_LIMIT) {
      this.memo.clear();
      this.version = this.metas.version;
    }
    const walked: string[] = [];
    let cur = p;
    let found: Loaded | null | undefined;
    for (;;) {
      found = this.memo.get(cur);
      if (found !== undefined) break;
      walked.push(cur);
      found = this.metas.exact(cur, this.groups) ?? null;
      if (found !== null || cur === '/') break;
      cur = parentOf(cur);
    }
    for (const w of walked) this.memo.set(w, found);
    return found ?? undefined;
  }
}

/**
 * The path rules (hide, password, write, readme, header) as one principal meets them: the rules
 * for everyone and those of the principal's groups (a view is made again when its groups change).
 */
export class Rules {
  private readonly index: RuleIndex;
  private readonly groups: readonly number[];

  constructor(
    private readonly metas: Metas,
    readonly user: User,
  ) {
    this.groups = groupIdsOf(user);
    this.index = new RuleIndex(metas, this.groups);
  }

  nearest(p: string): Loaded | undefined {
    return this.index.nearest(p);
  }

  get seesHidden(): boolean {
    return can(this.user, PERM.SEE_HIDES);
  }

  /** The hide patterns that apply to the entries of folder `dir`, for this principal. */
  private hidesIn(dir: string): RegExp[] | undefined {
    if (this.seesHidden) return undefined;
    const rule = this.nearest(dir);
    if (!rule || rule.hides.length === 0 || !applies(rule.meta.path, dir, rule.meta.h_sub)) return undefined;
    return rule.hides;
  }

  /** True when the path or a folder on the way to it is hidden from this principal. */
  isHidden(p: string): boolean {
    if (this.seesHidden || p === '/') return false;
    let dir = '/';
    for (const segment of p.split('/')) {
      if (segment === '') continue;
      if (this.hidesIn(dir)?.some((r) => r.test(segment))) return true;
      dir = dir === '/' ? `/${segment}` : `${dir}/${segment}`;
    }
    return false;
  }

  /** A folder's entries without those hidden from this principal. */
  visible(dir: string, objs: Obj[]): Obj[] {
    const hides = this.hidesIn(dir);
    return hides ? objs.filter((o) => !hides.some((r) => r.test(o.name))) : objs;
  }

  /** The password of the rule covering a path, or '' when none does. */
  private passwordOf(p: string): string {
    const rule = this.nearest(p);
    if (!rule || rule.meta.password === '' || !applies(rule.meta.path, p, rule.meta.p_sub)) return '';
    return rule.meta.password;
  }

  /** May this principal open the path with one of `passwords` (no rule, the bit, or the right password)? */
  passwordOk(p: string, passwords: string[]): boolean {
    if (can(this.user, PERM.ACCESS_WITHOUT_PASSWORD)) return true;
    const needed = this.passwordOf(p);
    return needed === '' || passwords.some((pw) => safeEqual(pw, needed));
  }

  /**
   * True when a password rule below `folder` (not covering it) asks a password this principal
   * lacks: moving or copying the folder would carry its protected contents out of the rule.
   */
  lockedInside(folder: string, passwords: string[]): boolean {
    if (can(this.user, PERM.ACCESS_WITHOUT_PASSWORD)) return false;
    for (const rule of this.metas.inEffect(this.groups)) {
      if (rule.meta.password === '' || rule.meta.path === folder || !isSubPath(folder, rule.meta.path)) continue;
      if (!passwords.some((pw) => safeEqual(pw, rule.meta.password))) return true;
    }
    return false;
  }

  /** True when some hide rule may hide entries somewhere below `folder` from this principal. */
  mayHideInside(folder: string): boolean {
    if (this.seesHidden) return false;
    const rule = this.nearest(folder);
    if (rule && rule.hides.length > 0 && (rule.meta.path === folder || rule.meta.h_sub)) return true;
    for (const r of this.metas.inEffect(this.groups)) {
      if (r.hides.length > 0 && r.meta.path !== folder && isSubPath(folder, r.meta.path)) return true;
    }
    return false;
  }

  /** Write bit, or a `write` rule covering the folder (mkdir and uploads). */
  canWrite(dir: string): boolean {
    return can(this.user, PERM.WRITE) || this.writeRuleApplies(dir);
  }

  /** A `write` rule lets anyone write in this folder, whatever their bits (OpenList's write_content_bypass). */
  writeRuleApplies(dir: string): boolean {
    const rule = this.nearest(dir);
    return Boolean(rule && rule.meta.write && applies(rule.meta.path, dir, rule.meta.w_sub));
  }

  readme(p: string): string {
    const rule = this.nearest(p);
    return rule && applies(rule.meta.path, p, rule.meta.r_sub) ? rule.meta.readme : '';
  }

  header(p: string): string {
    const rule = this.nearest(p);
    return rule && applies(rule.meta.path, p, rule.meta.header_sub) ? rule.meta.header : '';
  }
}

/**
 * Raw links of protected entries need a sign even when `sign_all` is off: entries in a folder
 * under a password rule, with a rule of their own, or hidden (or below a hidden folder), from
 * anyone — for everyone or for the members of any one group (a raw link names no user, and the
 * listing that hands it out and the link that checks it must agree). Returns the test for the
 * entries of one folder, so a listing evaluates the folder once.
 */
export function signRule(metas: Metas, dir: string): (name: string) => boolean {
  const tests = metas.audiences().map((groups) => signRuleOf(metas, dir, new RuleIndex(metas, groups)));
  return tests.length === 1 ? tests[0]! : (name) => tests.some((t) => t(name));
}

/** signRule for the principals of one audience (`index`: their nearest rules). */
function signRuleOf(metas: Metas, dir: string, index: RuleIndex): (name: string) => boolean {
  const hideRule = (d: string) => {
    const rule = index.nearest(d);
    return rule && rule.hides.length > 0 && applies(rule.meta.path, d, rule.meta.h_sub) ? rule : undefined;
  };
  const pw = index.nearest(dir);
  let protectedFolder = Boolean(pw && pw.meta.password !== '' && applies(pw.meta.path, dir, pw.meta.p_sub));
  let cur = '/';
  for (const segment of dir.split('/').filter(Boolean)) {
    if (protectedFolder) break;
    if (hideRule(cur)?.hides.some((r) => r.test(segment))) protectedFolder = true;
    cur = cur === '/' ? `/${segment}` : `${cur}/${segment}`;
  }
  if (protectedFolder) return () => true;
  const hide = hideRule(dir);
  return (name) => {
    const own = metas.exact(path.posix.join(dir, name), index.groups);
    if (own && own.meta.password !== '') return true;
    return hide !== undefined && hide.hides.some((r) => r.test(name));
  };
}

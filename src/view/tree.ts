import { type NamedRoot, namedRoots } from '../auth/roots.js';
import type { User } from '../db/users.js';
import { isSubPath } from '../util/paths.js';
import { cleanPath, type PathStyle, underRoot } from './paths.js';

/**
 * A principal's tree (docs/access-and-security.md, several roots): their own base path at `/`,
 * and each named root (their own `roots`, then their groups') at `/<name>`, the root's folder
 * standing in for a folder of that name in the base path. Client paths map to virtual paths
 * here, and back; nothing outside the base path and the roots can be named.
 */
export class Tree {
  readonly base: string;
  readonly named: NamedRoot[];

  constructor(user: Pick<User, 'basePath' | 'roots' | 'groups'>) {
    this.base = cleanPath(user.basePath);
    const seen = new Set<string>();
    // A clash is refused when the admin saves; a row edited by hand keeps the first of a name.
    this.named = namedRoots(user).filter((r) => !seen.has(r.name) && seen.add(r.name)).map((r) => ({ ...r, path: cleanPath(r.path) }));
  }

  /** A client path as a virtual path: bounded, cleaned, below the base path or one of the roots. */
  virtual(clientPath: string, style: PathStyle): string {
    if (this.named.length === 0) return underRoot(this.base, clientPath, style);
    const rel = underRoot('/', clientPath, style);
    const slash = rel.indexOf('/', 1);
    const first = slash === -1 ? rel.slice(1) : rel.slice(1, slash);
    const root = this.named.find((r) => r.name === first);
    if (!root) return underRoot(this.base, rel, 'strict');
    return underRoot(root.path, slash === -1 ? '/' : rel.slice(slash), 'strict');
  }

  /** A virtual path as the client sees it: through the root that holds it most closely (a named one on a tie). */
  client(virtualPath: string): string {
    let best: { at: string; prefix: string } | undefined;
    const consider = (path: string, at: string) => {
      if (!isSubPath(path, virtualPath)) return;
      if (!best || path.length > best.prefix.length || (path.length === best.prefix.length && at !== '/')) best = { at, prefix: path };
    };
    consider(this.base, '/');
    for (const r of this.named) consider(r.path, `/${r.name}`);
    if (!best) return virtualPath;
    const rest = best.prefix === '/' ? virtualPath : virtualPath.slice(best.prefix.length);
    if (best.at === '/') return rest || '/';
    return rest === '' || rest === '/' ? best.at : `${best.at}${rest}`;
  }

  /**
   * Whose root holds a virtual path, as `client` decides it (the closest; a named one on a tie):
   * `user` for the base path and the user's own roots, a group's id for its roots.
   */
  holder(virtualPath: string): 'user' | number | undefined {
    let best: { from: 'user' | number; len: number; named: boolean } | undefined;
    const consider = (path: string, from: 'user' | number, named: boolean) => {
      if (!isSubPath(path, virtualPath)) return;
      if (!best || path.length > best.len || (path.length === best.len && named && !best.named)) best = { from, len: path.length, named };
    };
    consider(this.base, 'user', false);
    for (const r of this.named) consider(r.path, r.from, true);
    return best?.from;
  }

  /** True when the path is in the principal's tree (below the base path or a root). */
  contains(virtualPath: string): boolean {
    return isSubPath(this.base, virtualPath) || this.named.some((r) => isSubPath(r.path, virtualPath));
  }

  /** True when the path is the top of the tree or of a root (never renamed, moved or removed through the view). */
  isTop(virtualPath: string): boolean {
    return virtualPath === this.base || this.named.some((r) => r.path === virtualPath);
  }

  /** The name a root's folder shows as, when `virtualPath` is one (and not the base path). */
  nameOf(virtualPath: string): string | undefined {
    if (virtualPath === this.base) return undefined;
    return this.named.find((r) => r.path === virtualPath)?.name;
  }
}

/** The principal with one root only, `path` (an S3 bucket's view): its bits and groups' bits kept, no named roots. */
export function rootedAt(user: User, path: string): User {
  return { ...user, basePath: path, roots: [], groups: (user.groups ?? []).map((g) => ({ ...g, roots: [] })) };
}

import { can, PERM } from '../auth/permissions.js';
import type { MetasRepo } from '../db/metas.js';
import type { NodeQuery, SearchNodeRow, SearchNodesRepo } from '../db/search-nodes.js';
import type { User } from '../db/users.js';
import { BadRequest, NotFound, Unsupported } from '../errors.js';
import type { FsChanges } from '../fs/changes.js';
import type { Fs } from '../fs/fs.js';
import type { Metas } from '../fs/metas.js';
import type { FileTypes } from '../fs/objects.js';
import type { Logger } from '../logger.js';
import type { Settings } from '../settings/service.js';
import { isSubPath } from '../util/paths.js';
import { AutoUpdater } from './auto-update.js';
import { Indexer } from './indexer.js';
import { type IndexProgress, readProgress } from './progress.js';
import { FsTreeSource, ignoredPaths, type TreeSource } from './tree.js';

export const MSG_NOT_AVAILABLE = 'search not available';

/**
 * The `search_index` setting's values: `database` (and the original's `database_non_full_text`
 * and `bleve`, an embedded index, which map onto it) search the configured database; `none`
 * turns search off. `meilisearch` needs a service Atrium does not talk to.
 */
export function indexKind(value: string): 'database' | 'none' | 'unsupported' {
  if (value === 'database' || value === 'database_non_full_text' || value === 'bleve') return 'database';
  if (value === 'none' || value === '') return 'none';
  return 'unsupported';
}

/** Who searches, as the per-user view (view/) presents them: results pass its read rule. */
export interface SearchPrincipal {
  user: User;
  /** A client path below the principal's root as a virtual path. */
  virtual(clientPath: string): string;
  /** Not hidden, and the folder password (given with the view) where one is set. */
  mayRead(virtualPath: string): boolean;
  /** The principal's own root, and the named roots of their tree (searched too from its top). */
  readonly root?: string;
  readonly tree?: { named: Array<{ path: string }>; contains(virtualPath: string): boolean };
  /** A virtual path as the client sees it. */
  client?(virtualPath: string): string;
}

export interface SearchRequest {
  parent: string;
  keywords: string;
  scope: number;
  page: number;
  per_page: number;
  password: string;
}

export interface SearchHit {
  parent: string;
  name: string;
  is_dir: boolean;
  size: number;
  type: number;
}

/** Rows read per round while filtering matches a user may not all see. */
const SCAN_CHUNK = 1000;

export interface SearchDeps {
  repo: SearchNodesRepo;
  settings: Settings;
  fs: Fs;
  changes: FsChanges;
  metas: Metas;
  metasRepo: MetasRepo;
  fileTypes: FileTypes;
  log: Logger;
}

/** Search over the index, and the admin's index operations. */
export class SearchService {
  readonly indexer: Indexer;
  private source: TreeSource;
  private protectedCache = { version: -1, metas: [] as Array<{ path: string; hide: boolean; password: boolean }> };

  constructor(private readonly d: SearchDeps) {
    this.source = new FsTreeSource(d.fs);
    const ignored = () => ignoredPaths(d.settings, d.fs);
    this.indexer = new Indexer({ repo: d.repo, settings: d.settings, log: d.log, source: () => this.source, ignored });
    const auto = new AutoUpdater({
      repo: d.repo,
      indexer: this.indexer,
      log: d.log,
      source: () => this.source,
      ignored,
      maxDepth: () => {
        const n = d.settings.getNumber('max_index_depth', 20);
        return n > 0 ? n : 20;
      },
      // OpenList's hook after writing: writes update the index only with it on
      enabled: () => this.available() && d.settings.getBool('auto_update_index') && d.settings.getBool('handle_hook_after_writing'),
      ready: () => readProgress(d.settings).is_done,
      listingsPerSecond: () => d.settings.getNumber('handle_hook_rate_limit', 0),
    });
    d.changes.on(auto.onChange);
  }

  /** Another tree to index (the benchmark's synthetic tree); the live tree otherwise. */
  useSource(source: TreeSource | undefined): void {
    this.source = source ?? new FsTreeSource(this.d.fs);
  }

  private available(): boolean {
    return indexKind(this.d.settings.get('search_index')) === 'database';
  }

  /**
   * Every search and index route first. With no index, OpenList's search middleware answers
   * code 404 `search not available`; a configured back end this server lacks is its fault (500).
   */
  requireAvailable(): void {
    const kind = indexKind(this.d.settings.get('search_index'));
    if (kind === 'database') return;
    if (kind === 'unsupported') throw new Unsupported(`${MSG_NOT_AVAILABLE}: search_index ${this.d.settings.get('search_index')} is not supported, use database`);
    throw new NotFound(MSG_NOT_AVAILABLE);
  }

  progress(): IndexProgress {
    return readProgress(this.d.settings);
  }

  /** Continues a build an earlier process left unfinished (called once the server runs). */
  async resume(): Promise<void> {
    if (!this.available()) return;
    await this.indexer.resume();
  }

  async close(): Promise<void> {
    await this.indexer.close();
  }

  /** Metas that can keep entries from this user: hiding ones unless they see hidden, password ones unless exempt. */
  private async protectedFor(user: User): Promise<string[]> {
    if (this.protectedCache.version !== this.d.metas.version) {
      const all = await this.d.metasRepo.all();
      this.protectedCache = {
        version: this.d.metas.version,
        metas: all.map((m) => ({ path: m.path, hide: m.hide.trim() !== '', password: m.password !== '' })),
      };
    }
    const seeHidden = can(user, PERM.SEE_HIDES);
    const noPassword = can(user, PERM.ACCESS_WITHOUT_PASSWORD);
    return this.protectedCache.metas.filter((m) => (m.hide && !seeHidden) || (m.password && !noPassword)).map((m) => m.path);
  }

  /**
   * `/api/fs/search`. Results lie below the user's base path and pass the access rules: an entry
   * is shown only when the user could list its folder and open it with the given password, so
   * hidden and password-protected entries never appear. Paging and `total` count what the user
   * may see (as OpenList does), so neither reveals how many entries were withheld.
   */
  async search(principal: SearchPrincipal, req: SearchRequest): Promise<{ content: SearchHit[]; total: number }> {
    this.requireAvailable();
    if (req.page < 1) throw new BadRequest("page can't < 1");
    if (req.per_page < 1) throw new BadRequest("per_page can't < 1");
    const user = principal.user;
    const under = principal.virtual(req.parent);
    // From the top of a tree with named roots, the roots are searched too.
    const alsoUnder = under === principal.root ? (principal.tree?.named ?? []).map((r) => r.path) : [];
    const q: NodeQuery = { keywords: req.keywords.split(/\s+/).filter(Boolean), under, alsoUnder, scope: req.scope };
    const offset = (req.page - 1) * req.per_page;
    const guarded = (await this.protectedFor(user)).filter((m) => [under, ...alsoUnder].some((u) => isSubPath(m, u) || isSubPath(u, m)));
    if (guarded.length === 0) {
      const [rows, total] = await Promise.all([this.d.repo.matchPage(q, req.per_page, { offset }), this.d.repo.countMatches(q)]);
      return { content: rows.map((r) => this.hit(r, principal)), total };
    }
    return this.filtered(principal, q, req, offset);
  }

  private async filtered(principal: SearchPrincipal, q: NodeQuery, req: SearchRequest, offset: number) {
    const folderOk = new Map<string, boolean>();
    const allowed = (r: SearchNodeRow) => {
      let ok = folderOk.get(r.parent);
      if (ok === undefined) {
        ok = principal.mayRead(r.parent);
        folderOk.set(r.parent, ok);
      }
      return ok && principal.mayRead(r.parent === '/' ? `/${r.name}` : `${r.parent}/${r.name}`);
    };
    const content: SearchHit[] = [];
    let total = 0;
    let after: { name: string; id: number } | undefined;
    for (;;) {
      const rows = await this.d.repo.matchPage(q, SCAN_CHUNK, { after });
      for (const r of rows) {
        if (!allowed(r)) continue;
        if (total >= offset && content.length < req.per_page) content.push(this.hit(r, principal));
        total++;
      }
      if (rows.length < SCAN_CHUNK) break;
      const last = rows[rows.length - 1]!;
      after = { name: last.name, id: last.id };
    }
    return { content, total };
  }

  /**
   * A row as a hit: `parent` the virtual folder, as OpenList answers, for an entry below the
   * principal's own root; for one only a named root holds, the folder as the client names it
   * (`/<name>/…`), the only way the client can open it.
   */
  private hit(r: SearchNodeRow, principal: SearchPrincipal): SearchHit {
    const isDir = Boolean(r.is_dir);
    const own = principal.root === undefined || isSubPath(principal.root, r.parent);
    const parent = own || !principal.client ? r.parent : principal.client(r.parent);
    return { parent, name: r.name, is_dir: isDir, size: Number(r.size), type: isDir ? 1 : this.d.fileTypes.ofName(r.name) };
  }
}

import type { Obj } from '../drivers/types.js';
import type { SearchNodeRow, SearchNodesRepo } from '../db/search-nodes.js';
import type { FsChange } from '../fs/changes.js';
import type { Logger } from '../logger.js';
import type { Indexer } from './indexer.js';
import { depthOf, isIgnored, type TreeSource } from './tree.js';
import { baseOf, childPath, parentOf, walkTree } from './walker.js';
import { NodeBatch, nodeOf } from './writer.js';

export interface AutoUpdateDeps {
  repo: SearchNodesRepo;
  indexer: Indexer;
  log: Logger;
  source: () => TreeSource;
  ignored: () => string[];
  maxDepth: () => number;
  /** The index follows writes (an index configured and `auto_update_index` on). */
  enabled: () => boolean;
  /** The last build finished (changes seen while a build runs are applied after it). */
  ready: () => boolean;
  /** At most this many folders listed per second while following writes (0 or less: no cap). */
  listingsPerSecond?: () => number;
}

/**
 * Keeps the index current after writes made through Atrium. Each change names a folder whose
 * entries changed; the folder's listing is compared with its indexed children: vanished entries
 * leave the index with their subtrees, new ones enter it (new folders walked whole), and a
 * folder whose modification time moved is compared in turn (a folder replaced by another one).
 * Changes queue up and run as indexer jobs, never overlapping a build.
 */
export class AutoUpdater {
  private pending = new Set<string>();
  private scheduled = false;
  private lastListing = 0;

  constructor(private readonly d: AutoUpdateDeps) {}

  onChange = (change: FsChange): void => {
    if (!this.d.enabled()) return;
    this.pending.add(change.path);
    if (this.scheduled) return;
    this.scheduled = true;
    void this.d.indexer
      .exclusive(() => this.drain())
      .catch((err) => this.d.log.warn({ err }, 'index: auto update failed'));
  };

  private async drain(): Promise<void> {
    this.scheduled = false;
    const paths = [...this.pending].sort();
    this.pending.clear();
    if (!this.d.enabled() || !this.d.ready()) return;
    for (const p of paths) {
      try {
        await this.syncPath(p);
      } catch (err) {
        this.d.log.warn({ err, path: p }, 'index: auto update of a path failed');
      }
    }
  }

  private async syncPath(p: string): Promise<void> {
    const ignored = this.d.ignored();
    if (isIgnored(ignored, p)) return;
    const live = this.d.source();
    // every folder listed while following writes waits its turn (handle_hook_rate_limit)
    const source: TreeSource = { stat: (x) => live.stat(x), list: async (x) => (await this.pace(), live.list(x)) };
    if (p !== '/') {
      const obj = await source.stat(p);
      if (!obj) {
        await this.d.repo.deleteTree(p);
        return;
      }
      await this.ensureIndexed(p, obj);
      if (!obj.isDir) return;
    }
    await this.syncDir(source, ignored, p);
  }

  /** Waits out OpenList's `handle_hook_rate_limit` between two folder listings. */
  private async pace(): Promise<void> {
    const rate = this.d.listingsPerSecond?.() ?? 0;
    if (rate > 0) {
      const wait = this.lastListing + 1000 / rate - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
    this.lastListing = Date.now();
  }

  /** Indexes `p` and any of its folders the index lacks (a `mkdir -p`). */
  private async ensureIndexed(p: string, obj: Obj): Promise<void> {
    const row = await this.d.repo.find(parentOf(p), baseOf(p));
    if (row) {
      await this.refresh(row, obj);
      return;
    }
    const parent = parentOf(p);
    if (parent !== '/' && !(await this.d.repo.find(parentOf(parent), baseOf(parent)))) {
      const pObj = await this.d.source().stat(parent);
      if (pObj) await this.ensureIndexed(parent, pObj);
    }
    await this.d.repo.insertMany([nodeOf(parent, obj)]);
  }

  private async refresh(row: SearchNodeRow, obj: Obj): Promise<void> {
    const next = nodeOf(row.parent, obj);
    if (row.size !== next.size || row.modified !== next.modified) await this.d.repo.update(row.id, { size: next.size, modified: next.modified });
  }

  private async syncDir(source: TreeSource, ignored: string[], dir: string): Promise<void> {
    const maxDepth = this.d.maxDepth();
    if (depthOf(dir) >= maxDepth) return;
    let listed: Obj[];
    try {
      listed = (await source.list(dir)).filter((o) => !isIgnored(ignored, childPath(dir, o.name)));
    } catch {
      return;
    }
    const indexed = new Map<string, SearchNodeRow>();
    for (const row of await this.d.repo.children(dir)) {
      if (indexed.has(row.name)) await this.d.repo.deleteTree(childPath(dir, row.name));
      indexed.set(row.name, row);
    }
    const fresh = new NodeBatch(this.d.repo);
    const walkNew: string[] = [];
    for (const o of listed) {
      const row = indexed.get(o.name);
      indexed.delete(o.name);
      const p = childPath(dir, o.name);
      if (row && Boolean(row.is_dir) === o.isDir) {
        const moved = o.isDir && row.modified !== nodeOf(dir, o).modified;
        await this.refresh(row, o);
        if (moved) await this.syncDir(source, ignored, p);
        continue;
      }
      if (row) await this.d.repo.deleteTree(p);
      await fresh.add(nodeOf(dir, o));
      if (o.isDir) walkNew.push(p);
    }
    for (const name of indexed.keys()) await this.d.repo.deleteTree(childPath(dir, name));
    for (const p of walkNew) {
      await walkTree({ source, batch: fresh, ignored, maxDepth, log: this.d.log, shouldStop: () => false }, p);
    }
    await fresh.flush();
  }
}

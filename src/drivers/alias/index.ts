import path from 'node:path';
import { cleanPath, isSubPath } from '../../util/paths.js';
import {
  type Driver,
  type DriverContext,
  type DriverFactory,
  type Link,
  type LinkArgs,
  type Obj,
  ObjectNotFound,
  readAddition,
  type UploadStream,
} from '../types.js';
import type { VirtualFs } from '../vfs.js';
import { ADDITIONAL, CONFIG } from './info.js';

/**
 * `paths` as the original reads it: one entry per line, `/some/path` (named by its base name)
 * or `name:/some/path` (when `name` has no `/`). Entries sharing a name are merged, in order.
 */
export function parseAliasPaths(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    const colon = line.indexOf(':');
    let name: string;
    let target: string;
    if (colon > 0 && !line.slice(0, colon).includes('/')) {
      name = line.slice(0, colon);
      target = cleanPath(line.slice(colon + 1));
    } else {
      target = cleanPath(line);
      name = path.posix.basename(target) || 'root';
    }
    const list = out.get(name) ?? [];
    list.push(target);
    out.set(name, list);
  }
  return out;
}

const join = (dir: string, rest: string) => cleanPath(path.posix.join(dir, rest));
const notFound = (err: unknown) => err instanceof ObjectNotFound;

/**
 * Several virtual paths shown under one mount. Listings merge the targets of a name (the first
 * target wins a name several have); reads go to the first target holding the object; writes go
 * to the one target holding it, and with protect_same_name an object found in several targets
 * is not written at all.
 */
export class AliasDriver implements Driver {
  private readonly targets: Map<string, string[]>;
  /** A single name: its targets' content is shown straight at the mount. */
  private readonly flat: boolean;

  constructor(
    private readonly opts: Record<string, unknown>,
    private readonly ctx: DriverContext,
  ) {
    this.targets = parseAliasPaths(String(opts.paths));
    this.flat = this.targets.size === 1;
  }

  private get vfs(): VirtualFs {
    if (!this.ctx.vfs) throw new Error('alias storages need the virtual file system');
    return this.ctx.vfs;
  }

  async init(): Promise<void> {
    if (this.targets.size === 0) throw new Error('paths is required');
    const own = cleanPath(this.ctx.mountPath);
    for (const list of this.targets.values()) {
      for (const t of list) {
        if (isSubPath(own, t)) throw new Error(`alias path ${t} lies inside the alias itself (${own})`);
      }
    }
  }

  async drop(): Promise<void> {}

  addition(): Record<string, unknown> {
    return this.opts;
  }

  /** The virtual paths an alias path stands for, in order; undefined for the alias root (not flat). */
  private candidates(p: string): string[] | undefined {
    if (p.split('/').some((s) => s === '.' || s === '..')) throw new ObjectNotFound();
    if (this.flat) return [...this.targets.values()][0]!.map((t) => join(t, p));
    const segments = p.split('/').filter(Boolean);
    if (segments.length === 0) return undefined;
    const list = this.targets.get(segments[0]!);
    if (!list) throw new ObjectNotFound();
    const rest = segments.slice(1).join('/');
    return list.map((t) => join(t, rest));
  }

  private rootEntries(): Obj[] {
    return [...this.targets.keys()].map((name) => ({ name, size: 0, isDir: true, modified: new Date(0) }));
  }

  async list(p: string): Promise<Obj[]> {
    const paths = this.candidates(p);
    if (!paths) return this.rootEntries();
    const merged = new Map<string, Obj>();
    let listed = false;
    let failure: unknown;
    for (const target of paths) {
      try {
        for (const o of await this.vfs.list(target)) if (!merged.has(o.name)) merged.set(o.name, o);
        listed = true;
      } catch (err) {
        if (!notFound(err)) failure ??= err;
      }
    }
    if (!listed) throw failure ?? new ObjectNotFound();
    return [...merged.values()];
  }

  /** The first target holding `p`, with its object. */
  private async first(p: string): Promise<{ target: string; obj: Obj }> {
    let failure: unknown;
    for (const target of this.candidates(p) ?? []) {
      try {
        return { target, obj: await this.vfs.get(target) };
      } catch (err) {
        if (!notFound(err)) failure ??= err;
      }
    }
    throw failure ?? new ObjectNotFound();
  }

  async get(p: string): Promise<Obj> {
    const name = path.posix.basename(p);
    const segments = p.split('/').filter(Boolean);
    if (segments.length === 0) return { name: '', size: 0, isDir: true, modified: new Date(0) };
    if (!this.flat && segments.length === 1) {
      if (!this.targets.has(name)) throw new ObjectNotFound();
      return { name, size: 0, isDir: true, modified: new Date(0) };
    }
    const { obj } = await this.first(p);
    return { ...obj, name };
  }

  async link(p: string, args: LinkArgs): Promise<Link> {
    const { target, obj } = await this.first(p);
    if (obj.isDir) throw new ObjectNotFound('not a file');
    return this.vfs.link(target, args);
  }

  /**
   * The one target a write to `p` goes to: the first holding it, or — with protect_same_name —
   * the only one, refusing when several targets hold an object of that path.
   */
  private async writeTarget(p: string, isParent: boolean): Promise<string> {
    const paths = this.candidates(p);
    if (!paths) throw new Error('not implement: the alias root only holds its paths');
    if (!this.flat && p.split('/').filter(Boolean).length === 1 && !isParent) {
      throw new Error('not implement: an alias path itself can not be changed, edit the storage instead');
    }
    let chosen: string | undefined;
    for (const target of paths) {
      try {
        await this.vfs.get(target);
      } catch (err) {
        if (notFound(err)) continue;
        throw err;
      }
      if (!this.opts.protect_same_name) return target;
      if (chosen !== undefined) {
        throw new Error(`not implement: ${path.posix.basename(p) || p} exists in several alias paths and protect_same_name is on`);
      }
      chosen = target;
    }
    if (chosen === undefined) throw new ObjectNotFound();
    return chosen;
  }

  async makeDir(parent: string, name: string): Promise<void> {
    await this.vfs.mkdir(join(await this.writeTarget(parent, true), name));
  }

  async rename(p: string, newName: string): Promise<void> {
    await this.vfs.rename(await this.writeTarget(p, false), newName);
  }

  async move(src: string, dstDir: string): Promise<void> {
    const from = await this.writeTarget(src, false);
    const to = await this.writeTarget(dstDir, true);
    await this.vfs.moveTo(from, join(to, path.posix.basename(from)));
  }

  async copy(src: string, dstDir: string): Promise<void> {
    const from = await this.writeTarget(src, false);
    const to = await this.writeTarget(dstDir, true);
    await this.vfs.copyTo(from, join(to, path.posix.basename(from)));
  }

  async remove(p: string): Promise<void> {
    await this.vfs.remove(await this.writeTarget(p, false));
  }

  async put(dstDir: string, file: UploadStream): Promise<void> {
    await this.vfs.put(await this.writeTarget(dstDir, true), file);
  }
}

export const aliasDriver: DriverFactory = {
  // Uploads are accepted (as OpenList does), into the one folder that holds the target path.
  config: CONFIG,
  additional: ADDITIONAL,
  create: (addition, ctx) => new AliasDriver(readAddition(ADDITIONAL, addition), ctx),
};

import path from 'node:path';
import { cleanPath } from '../../util/paths.js';
import { OverlayDriver } from '../overlay.js';
import {
  defineDriver,
  type Driver,
  type DriverContext,
  type Link,
  type LinkArgs,
  type Obj,
  ObjectNotFound,
  type UploadStream,
} from '../types.js';
import { ADDITIONAL, CONFIG } from './info.js';
import { AliasTargets, listEach } from './targets.js';

export { parseAliasPaths } from './targets.js';

const join = (dir: string, rest: string) => cleanPath(path.posix.join(dir, rest));
const notFound = (err: unknown) => err instanceof ObjectNotFound;

/**
 * Several virtual paths shown under one mount. Listings merge the targets of a name (the first
 * target wins a name several have); reads go to the first target holding the object; writes go
 * to the one target holding it, and with protect_same_name an object found in several targets
 * is not written at all.
 */
export class AliasDriver extends OverlayDriver implements Driver {
  private readonly targets: AliasTargets;

  constructor(opts: Record<string, unknown>, ctx: DriverContext) {
    super(opts, ctx, 'alias');
    this.targets = new AliasTargets(opts.paths);
  }

  async init(): Promise<void> {
    const own = cleanPath(this.ctx.mountPath);
    this.targets.check(own, (t) => `alias path ${t} lies inside the alias itself (${own})`);
  }

  async list(p: string): Promise<Obj[]> {
    const paths = this.targets.sources(p);
    if (!paths) return this.targets.rootFolders();
    const merged = new Map<string, Obj>();
    await listEach(this.vfs, paths, (_dir, objs) => {
      for (const o of objs) if (!merged.has(o.name)) merged.set(o.name, o);
    });
    return [...merged.values()];
  }

  /** The first target holding `p`, with its object. */
  private async first(p: string): Promise<{ target: string; obj: Obj }> {
    let failure: unknown;
    for (const target of this.targets.sources(p) ?? []) {
      try {
        return { target, obj: await this.vfs.get(target) };
      } catch (err) {
        if (!notFound(err)) failure ??= err;
      }
    }
    throw failure ?? new ObjectNotFound();
  }

  async get(p: string): Promise<Obj> {
    const own = this.targets.ownFolder(p);
    if (own) return own;
    const { obj } = await this.first(p);
    return { ...obj, name: path.posix.basename(p) };
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
    const paths = this.targets.sources(p);
    if (!paths) throw new Error('not implement: the alias root only holds its paths');
    if (this.targets.isName(p) && !isParent) {
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

// Uploads are accepted (as OpenList does), into the one folder that holds the target path.
export const aliasDriver = defineDriver(CONFIG, ADDITIONAL, (options, ctx) => new AliasDriver(options, ctx));

import { isKind } from '../../errors.js';
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
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
import { writeUploadTo } from '../write-file.js';
import { ADDITIONAL, CONFIG, READ_ITEMS } from './info.js';
import {
  type AliasPolicies,
  chooseTargets,
  holding,
  pickByQuota,
  pickOne,
  type Probe,
  readPolicies,
  refuseDisabled,
} from './policies.js';
import { AliasTargets, listEach } from './targets.js';

export { parseAliasPaths } from './targets.js';

const join = (dir: string, rest: string) => cleanPath(path.posix.join(dir, rest));
const notFound = (err: unknown) => isKind(err, 'NotFound');
const nameOf = (p: string) => path.posix.basename(p) || p;

/** `items` in random order. */
function shuffled<T>(items: T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** Runs `step` on each item in turn, every one even when some fail; then fails with the first failure. */
async function eachOf<T>(items: T[], step: (item: T) => Promise<void>): Promise<void> {
  let failure: unknown;
  let failed = false;
  for (const item of items) {
    try {
      await step(item);
    } catch (err) {
      if (!failed) failure = err;
      failed = true;
    }
  }
  if (failed) throw failure;
}

/**
 * Several virtual paths shown under one mount. Listings merge the targets of a name (the first
 * target wins a name several have). Which targets holding a path a read, a write or an upload
 * goes to is decided by the conflict policies (./policies.ts).
 */
export class AliasDriver extends OverlayDriver implements Driver {
  private readonly targets: AliasTargets;
  private readonly policies: AliasPolicies;

  constructor(opts: Record<string, unknown>, ctx: DriverContext) {
    super(opts, ctx, 'alias');
    this.targets = new AliasTargets(opts.paths);
    this.policies = readPolicies(opts);
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

  /** What every target of `p` holds, in the order of `paths`. */
  private async probe(targets: string[]): Promise<Probe[]> {
    return Promise.all(
      targets.map(async (target): Promise<Probe> => {
        try {
          return { target, obj: await this.vfs.get(target) };
        } catch (err) {
          return notFound(err) ? { target } : { target, failure: err };
        }
      }),
    );
  }

  /** The targets holding the same file as the first one (with the consistency check: alike to it). */
  private async fileHolders(p: string): Promise<Probe[]> {
    const probes = await this.probe(this.targets.sources(p) ?? []);
    const held = holding(probes, { consistency: this.policies.consistency });
    const holders = probes.filter((_, i) => held[i]);
    if (holders.length === 0) throw probes.find((x) => x.failure)?.failure ?? new ObjectNotFound();
    if (holders[0]!.obj!.isDir) throw new ObjectNotFound('not a file');
    return holders;
  }

  /**
   * read_conflict_policy: `first` links the first target holding the file; `random` one of the
   * targets holding it, at random (the next one when it fails); `all` serves the file through this
   * server, each range read from one of the targets holding it at random.
   */
  async link(p: string, args: LinkArgs): Promise<Link> {
    if (this.policies.read === 'first') {
      const { target, obj } = await this.first(p);
      if (obj.isDir) throw new ObjectNotFound('not a file');
      return this.vfs.link(target, args);
    }
    const holders = await this.fileHolders(p);
    if (this.policies.read === 'random' || args.type) return this.linkOneOf(shuffled(holders), args);
    const ref = holders[0]!.obj!;
    const sources = holders.filter((h) => h.obj!.size === ref.size).map((h) => h.target);
    return {
      file: {
        size: ref.size,
        modified: ref.modified,
        open: async (start, end) => {
          let failure: unknown;
          for (const target of shuffled(sources)) {
            try {
              return await this.vfs.open(target, start, end);
            } catch (err) {
              failure ??= err;
            }
          }
          throw failure;
        },
      },
    };
  }

  private async linkOneOf(holders: Probe[], args: LinkArgs): Promise<Link> {
    let failure: unknown;
    for (const { target } of holders) {
      try {
        return await this.vfs.link(target, args);
      } catch (err) {
        failure ??= err;
      }
    }
    throw failure;
  }

  /** The targets of `p` a write or put may go to; refuses the alias root and its names. */
  private writable(p: string, isParent: boolean): string[] {
    const paths = this.targets.sources(p);
    if (!paths) throw new Error('not implement: the alias root only holds its paths');
    if (this.targets.isName(p) && !isParent) {
      throw new Error('not implement: an alias path itself can not be changed, edit the storage instead');
    }
    return paths;
  }

  /** write_conflict_policy: the targets a rename or remove of `p`, or a mkdir in the folder `p`, changes. */
  private async writeTargets(p: string, isParent: boolean): Promise<Probe[]> {
    refuseDisabled('write_conflict_policy', this.policies.write);
    const probes = await this.probe(this.writable(p, isParent));
    const held = holding(probes, { folder: isParent, consistency: this.policies.consistency });
    const chosen = new Set(chooseTargets(this.policies.write, probes, held, nameOf(p), () => new ObjectNotFound()));
    return probes.filter((x) => chosen.has(x.target));
  }

  /**
   * put_conflict_policy: the folders an upload of `size` bytes into `dir` (or a copy or move into
   * it) lands in. random and the quota policies pick one of the targets holding the folder.
   */
  private async putTargets(dir: string, size: number): Promise<string[]> {
    refuseDisabled('put_conflict_policy', this.policies.put);
    const probes = await this.probe(this.writable(dir, true));
    const held = holding(probes, { folder: true, consistency: false });
    const policy = this.policies.put;
    const chosen = chooseTargets(policy, probes, held, nameOf(dir), () => new ObjectNotFound());
    if (policy === 'random') return [pickOne(chosen)];
    if (policy === 'quota' || policy === 'quota_strict') {
      return [await pickByQuota(chosen, size, policy === 'quota_strict', (t) => this.vfs.freeSpace(t), nameOf(dir))];
    }
    return chosen;
  }

  async makeDir(parent: string, name: string): Promise<void> {
    await eachOf(await this.writeTargets(parent, true), ({ target }) => this.vfs.mkdir(join(target, name)));
  }

  async rename(p: string, newName: string): Promise<void> {
    await eachOf(await this.writeTargets(p, false), ({ target }) => this.vfs.rename(target, newName));
  }

  async remove(p: string): Promise<void> {
    await eachOf(await this.writeTargets(p, false), ({ target }) => this.vfs.remove(target));
  }

  /**
   * The copy a copy of `src` reads: the one the read policy serves (the first target holding it,
   * or one at random). With write_conflict_policy unset it is chosen as a write is, so that
   * protect_same_name refuses an object several targets hold, as AList v3 did.
   */
  private async copySource(src: string): Promise<Probe> {
    if (this.policies.copyLikeWrite) return (await this.writeTargets(src, false))[0]!;
    this.writable(src, false);
    const probes = await this.probe(this.targets.sources(src)!);
    const held = holding(probes, { consistency: this.policies.consistency });
    const holders = probes.filter((_, i) => held[i]);
    if (holders.length === 0) throw probes.find((x) => x.failure)?.failure ?? new ObjectNotFound();
    return this.policies.read === 'first' ? holders[0]! : pickOne(holders);
  }

  async copy(src: string, dstDir: string): Promise<void> {
    const from = await this.copySource(src);
    const dirs = await this.putTargets(dstDir, from.obj!.size);
    await eachOf(dirs, (dir) => this.vfs.copyTo(from.target, join(dir, path.posix.basename(from.target))));
  }

  /**
   * Takes the copies of `src` the write policy picks to the folders the put policy picks: each
   * folder gets a copy of the same storage where one is there (moved server-side), otherwise a
   * copy of the first; copies no folder took are removed, so the object leaves `src`.
   */
  async move(src: string, dstDir: string): Promise<void> {
    const froms = await this.writeTargets(src, false);
    const dirs = await this.putTargets(dstDir, froms[0]!.obj!.size);
    const unused = new Set(froms.map((f) => f.target));
    const moves: [string, string][] = [];
    const copies: string[] = [];
    for (const dir of dirs) {
      const storage = this.vfs.storageOf(dir);
      const same = [...unused].find((t) => this.vfs.storageOf(t) === storage);
      if (same === undefined) copies.push(dir);
      else {
        unused.delete(same);
        moves.push([same, dir]);
      }
    }
    if (moves.length === 0 && copies.length > 0) {
      // No folder on a storage of the copies: the first copy is moved, the other folders copy it first.
      const first = froms[0]!.target;
      unused.delete(first);
      moves.push([first, copies.pop()!]);
    }
    const base = path.posix.basename(src);
    const copyFrom = moves[0]![0];
    await eachOf(copies, (dir) => this.vfs.copyTo(copyFrom, join(dir, base)));
    await eachOf(moves, ([from, dir]) => this.vfs.moveTo(from, join(dir, base)));
    await eachOf([...unused], (t) => this.vfs.remove(t));
  }

  /**
   * Uploads into the folders the put policy picks: one is streamed to directly; several take the
   * same bytes, received once into the temp folder first.
   */
  async put(dstDir: string, file: UploadStream): Promise<void> {
    const dirs = await this.putTargets(dstDir, file.size);
    if (dirs.length === 1) return this.vfs.put(dirs[0]!, file);
    const spooled = path.join(this.ctx.tempDir, `alias-put-${process.pid}-${randomBytes(8).toString('hex')}`);
    try {
      const size = await writeUploadTo(spooled, file);
      const { name, modified, mimetype, hashes, signal } = file;
      await eachOf(dirs, (dir) => this.vfs.put(dir, { name, size, modified, mimetype, hashes, signal, stream: createReadStream(spooled) }));
    } finally {
      await rm(spooled, { force: true });
    }
  }
}

// Uploads are accepted (as OpenList does), into the folders put_conflict_policy picks.
export const aliasDriver = defineDriver(CONFIG, ADDITIONAL, (options, ctx) => new AliasDriver(options, ctx), READ_ITEMS);

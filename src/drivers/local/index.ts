import { createReadStream, type Dirent, type Stats } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import {
  type Driver,
  type DriverFactory,
  driverConfig,
  type FormItem,
  item,
  type Link,
  type LinkArgs,
  ObjectNotFound,
  type Obj,
  readAddition,
} from '../types.js';

const ADDITIONAL: FormItem[] = [
  item('root_folder_path', 'string', { default: '/', required: true, help: 'absolute path of the folder on this machine' }),
  item('thumbnail', 'bool', { required: true, help: 'enable thumbnail' }),
  item('thumb_cache_folder', 'string'),
  item('thumb_concurrency', 'string', { default: '16', help: 'Number of concurrent thumbnail generation goroutines. This controls how many thumbnails can be generated in parallel.' }),
  item('show_hidden', 'bool', { default: 'true', help: 'show hidden directories and files' }),
  item('mkdir_perm', 'string', { default: '777' }),
  item('recycle_bin_path', 'string', { default: 'delete permanently', help: "path to recycle bin, delete permanently if empty or keep 'delete permanently'" }),
];

/** How many stat calls a listing keeps in flight. */
const STAT_BATCH = 256;

function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP';
}

function toObj(name: string, st: Stats): Obj {
  const modified = st.mtime;
  return {
    name,
    size: st.isDirectory() ? 0 : st.size,
    isDir: st.isDirectory(),
    modified,
    created: st.birthtimeMs > 0 ? st.birthtime : modified,
  };
}

export class LocalDriver implements Driver {
  readonly root: string;
  private rootReal = '';
  readonly showHidden: boolean;
  readonly opts: Record<string, unknown>;

  constructor(opts: Record<string, unknown>) {
    this.opts = opts;
    this.root = path.resolve(String(opts.root_folder_path));
    this.showHidden = Boolean(opts.show_hidden);
  }

  async init(): Promise<void> {
    if (!path.isAbsolute(String(this.opts.root_folder_path))) throw new Error('root folder path must be absolute');
    let st: Stats;
    try {
      st = await fs.stat(this.root);
    } catch (err) {
      throw new Error(`root folder ${this.root} is not accessible: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    if (!st.isDirectory()) throw new Error(`root folder ${this.root} is not a directory`);
    this.rootReal = await fs.realpath(this.root);
  }

  async drop(): Promise<void> {}

  addition(): Record<string, unknown> {
    return this.opts;
  }

  private inside(real: string): boolean {
    return real === this.rootReal || real.startsWith(this.rootReal.endsWith(path.sep) ? this.rootReal : this.rootReal + path.sep);
  }

  private hiddenName(name: string): boolean {
    return !this.showHidden && name.startsWith('.');
  }

  /**
   * The real path of `rel` (a cleaned, absolute path inside the storage), refusing anything
   * whose real location — after every symlink — is outside the root: such paths do not exist.
   */
  async resolve(rel: string): Promise<string> {
    if (rel.includes('\0')) throw new ObjectNotFound();
    if (rel.split('/').some((seg) => seg === '..' || this.hiddenName(seg))) throw new ObjectNotFound();
    let real: string;
    try {
      real = await fs.realpath(path.join(this.root, rel));
    } catch (err) {
      if (isMissing(err)) throw new ObjectNotFound();
      throw err;
    }
    if (!this.inside(real)) throw new ObjectNotFound();
    return real;
  }

  async list(dir: string): Promise<Obj[]> {
    const real = await this.resolve(dir);
    let entries: Dirent[];
    try {
      entries = await fs.readdir(real, { withFileTypes: true });
    } catch (err) {
      if (isMissing(err)) throw new ObjectNotFound();
      throw err;
    }
    const out: Obj[] = [];
    for (let i = 0; i < entries.length; i += STAT_BATCH) {
      const batch = entries.slice(i, i + STAT_BATCH);
      const objs = await Promise.all(batch.map((e) => this.entry(real, e)));
      for (const o of objs) if (o) out.push(o);
    }
    return out;
  }

  /** One listed entry, or undefined when it must not be shown (hidden, dangling, escaping link). */
  private async entry(dir: string, e: Dirent): Promise<Obj | undefined> {
    if (this.hiddenName(e.name)) return undefined;
    const full = path.join(dir, e.name);
    try {
      if (e.isSymbolicLink() && !this.inside(await fs.realpath(full))) return undefined;
      return toObj(e.name, await fs.stat(full));
    } catch (err) {
      if (isMissing(err) || (err as NodeJS.ErrnoException).code === 'EACCES') return undefined;
      throw err;
    }
  }

  async listStamp(dir: string): Promise<string> {
    const st = await fs.stat(await this.resolve(dir));
    return `${st.ino}:${st.mtimeMs}`;
  }

  async get(rel: string): Promise<Obj> {
    const real = await this.resolve(rel);
    const st = await fs.stat(real);
    return toObj(rel === '/' ? '' : path.posix.basename(rel), st);
  }

  async link(rel: string, _args: LinkArgs): Promise<Link> {
    const real = await this.resolve(rel);
    const st = await fs.stat(real);
    if (st.isDirectory()) throw new ObjectNotFound('not a file');
    return {
      file: {
        size: st.size,
        modified: st.mtime,
        open: async (start, end) => createReadStream(real, { start, end }),
      },
    };
  }
}

export const localDriver: DriverFactory = {
  // Unlike the original, Local listings may be cached: the folder's mtime validates every cached
  // listing (listStamp), so files added or removed outside this server still show at once.
  config: driverConfig({ name: 'Local', localSort: true, onlyLocal: true, defaultRoot: '/' }),
  additional: ADDITIONAL,
  create: (addition) => new LocalDriver(readAddition(ADDITIONAL, addition)),
};

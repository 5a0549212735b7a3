import { createWriteStream } from 'node:fs';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { ArchiveObj, Obj } from '../drivers/types.js';
import { BadRequest, Missing, Upstream } from '../errors.js';
import { type Fs, wrapNotFound } from '../fs/fs.js';
import type { FsWriter } from '../fs/write.js';
import type { LinkFetcher } from '../net/link-fetch.js';
import type { Settings } from '../settings/service.js';
import type { Task, TaskContext, TaskCreator, TaskManager } from '../tasks/manager.js';
import { FinalTaskError, refusesName, SkippedNames } from '../tasks/creator.js';
import { taskErrorText } from '../tasks/error-text.js';
import { ArchiveTree } from './compact.js';
import { type ArchiveEntry, BombGuard, type Limits } from './entries.js';
import { formatOf } from './formats.js';
import { findFile, type OpenedArchive, under, wrongPassword } from './reader.js';
import { open7z } from './sevenzip.js';
import { ByteSource } from './source.js';
import { openStreamed } from './stream-formats.js';
import { openRar } from './rar.js';
import { openZip } from './zip.js';

/** The folder of temp_dir where extractions are staged before their upload. */
export const ARCHIVE_TEMP = 'archive';

/** What a listing keeps of an archive (cached like folder listings). */
export interface ArchiveMeta {
  comment: string;
  encrypted: boolean;
  tree: ArchiveTree;
  entries: number;
}

/** A folder inside an archive. */
export interface InnerFolder {
  tree: ArchiveTree;
  id: number;
}

/** A `decompress` task's payload: which archive, into which folder; `temp` is its staging folder. */
interface DecompressPayload {
  src: string;
  dstDir: string;
  inner: string;
  password: string;
  putIntoNewDir: boolean;
  overwrite: boolean;
  temp: string;
  /** Who asked (the upload task it queues runs as them too). */
  creator?: TaskCreator;
}

/** A `decompress_upload` task's payload: a staged tree stored into `dstDir`. */
interface UploadPayload {
  temp: string;
  dstDir: string;
  overwrite: boolean;
  /** Entries never staged: unsafe names (zip-slip, links) and names the staging folder refused, with why. */
  refused?: Array<{ name: string; reason: string }>;
}

/** Refused entries an upload payload keeps by name (the rest are counted in the error). */
const REFUSED_KEPT = 100;

const CACHE_SIZE = 64;
/** Entries the cached trees may hold in all (about 60 bytes each, see ArchiveTree). */
const CACHE_ENTRIES = 500_000;
const CACHE_TTL_MS = 10 * 60_000;

/** The most of a peer's JSON refusal of an entry link that is read. */
const REFUSAL_MAX = 64 * 1024;

/** A driver's archive call, its failures reported as every driver failure is. */
async function onDriver<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    wrapNotFound('', err);
  }
}

/** A name a storage reported inside an archive that can be one segment of an inner path. */
const safeName = (o: ArchiveObj) => o.name !== '' && o.name !== '.' && o.name !== '..' && !o.name.includes('/') && !o.name.includes('\0');

/** The inner entries a storage reported (nested), added below `parent` of `tree`; unsafe names are left out. */
function addReported(tree: ArchiveTree, parent: number, objs: ArchiveObj[]): void {
  for (const o of objs) {
    if (!safeName(o)) continue;
    const id = tree.addNode(parent, o.name, o.size, o.isDir, Math.floor(o.modified.getTime() / 1000));
    if (o.children?.length) addReported(tree, id, o.children);
  }
}

/**
 * A peer of this API refuses an entry link with its JSON envelope (HTTP 200, no attachment) or,
 * on a share's `/sad`, with a real status (202 for the archive password, as OpenList's): raised as
 * the peer's error, never streamed as the entry's bytes.
 */
async function refuseEnvelope(res: IncomingMessage): Promise<void> {
  const status = res.statusCode ?? 0;
  const json = String(res.headers['content-type'] ?? '').startsWith('application/json');
  if ((status === 200 || status === 206) && (res.headers['content-disposition'] || !json)) return;
  let text = '';
  if (json) {
    for await (const chunk of res) {
      text += (chunk as Buffer).toString('utf8');
      if (text.length > REFUSAL_MAX) break;
    }
  }
  res.destroy();
  let env: { code?: number; message?: string } = {};
  try {
    env = JSON.parse(text) as typeof env;
  } catch {
    // not an envelope: reported below
  }
  if (env.code === 202 || status === 202) throw wrongPassword();
  if (typeof env.message === 'string' && /object not found/.test(env.message)) throw new Missing(env.message);
  if (typeof env.message === 'string') throw new Upstream(`the storage refused the archive entry: ${env.message}`);
  throw new Upstream(status >= 200 && status < 300 ? 'the storage refused the archive entry: an answer without the entry' : `reading the archive entry failed: HTTP ${status}`);
}

const stem = (name: string) => name.replace(/(\.tar)?\.(zip|tar|gz|tgz|bz2|tbz2|xz|txz|zst|tzst|7z|rar)$/i, '') || name;
const joinV = (dir: string, rel: string) => path.posix.join(dir, rel);

/**
 * Archives as folders, below users (access is decided by the per-user view): the inner listing
 * (cached by path, size and modified time), one entry's bytes, and extraction as two tasks:
 * `decompress` expands the archive into a staging folder of temp_dir (bounded by the bomb
 * limits, never outside it), then `decompress_upload` stores the staged tree into the target
 * folder through the writer. A crash leaves nothing half-written in the target: the staging
 * folder belongs to its task and is swept once no unfinished task owns it.
 *
 * Where the archive's storage reads archives on its side (a driver with archiveMeta/List/Link/
 * Decompress that does not answer undefined: OpenList, OpenListShare forwarding to their peer),
 * each operation is asked of the driver first, as OpenList's op/archive.go does; otherwise the
 * archive is read here through the file's link (by byte ranges for zip).
 */
export class Archives {
  private readonly cache = new Map<string, { at: number; meta: ArchiveMeta; key: string }>();

  constructor(
    private readonly fs: Fs,
    private readonly writer: FsWriter,
    private readonly links: LinkFetcher,
    private readonly settings: Settings,
    private readonly tasks: TaskManager,
    private readonly tempDir: string,
  ) {
    tasks.registerResumer('decompress', (p) => (ctx) => this.expand(p as DecompressPayload, ctx));
    tasks.registerResumer('decompress_upload', (p) => (ctx) => this.store(p as UploadPayload, ctx));
  }

  /** The staging folder, for the sweep on start. */
  get stagingDir(): string {
    return path.join(this.tempDir, ARCHIVE_TEMP);
  }

  limits(): Limits {
    return {
      maxBytes: Math.max(0, this.settings.getNumber('archive_max_size', 10240)) * 1024 * 1024,
      maxRatio: Math.max(0, this.settings.getNumber('archive_max_ratio', 1000)),
      maxEntries: Math.max(0, this.settings.getNumber('archive_max_entries', 1_000_000)),
    };
  }

  /** Opens the archive at a virtual path; the caller closes it. `source` counts the bytes read. */
  async open(virtualPath: string, password = ''): Promise<{ archive: OpenedArchive; obj: Obj; source: ByteSource }> {
    const { obj } = await this.fs.get(virtualPath);
    if (obj.isDir) throw new BadRequest('not an archive: it is a folder');
    const format = formatOf(obj.name);
    if (!format) throw new BadRequest(`not a supported archive: ${obj.name}`);
    const { link } = await this.fs.link(virtualPath, {});
    const source = new ByteSource(link, link.file?.size ?? obj.size, this.links);
    const guard = new BombGuard(this.limits(), obj.size);
    let archive: OpenedArchive;
    if (format === 'zip') archive = await openZip(source, this.settings.get('non_efs_zip_encoding'), (n) => guard.checkEntries(n));
    else if (format === '7z') archive = await open7z(source, this.tempDir, obj.name, password);
    else if (format === 'rar') archive = await openRar(source, this.tempDir, password, this.limits().maxBytes);
    else archive = await openStreamed(source, format, obj.name, obj.modified);
    try {
      guard.checkEntries(archive.count);
    } catch (err) {
      await archive.close();
      throw err;
    }
    return { archive, obj, source };
  }

  /** The archive's comment, encryption and inner tree (cached unless `refresh`). */
  async meta(virtualPath: string, opts: { password?: string; refresh?: boolean } = {}): Promise<ArchiveMeta> {
    const { obj } = await this.fs.get(virtualPath);
    if (obj.isDir) throw new BadRequest('not an archive: it is a folder');
    const key = `${obj.size}:${obj.modified.getTime()}`;
    const hit = this.cache.get(virtualPath);
    if (!opts.refresh && hit && hit.key === key && Date.now() - hit.at < CACHE_TTL_MS) {
      this.cache.delete(virtualPath);
      this.cache.set(virtualPath, hit);
      return hit.meta;
    }
    const meta = (await this.metaOnStorage(virtualPath, opts.password ?? '')) ?? (await this.readMeta(virtualPath, opts.password));
    this.cache.delete(virtualPath);
    this.cache.set(virtualPath, { at: Date.now(), meta, key });
    // At most CACHE_SIZE archives and CACHE_ENTRIES entries in all (the newest is always kept).
    let held = 0;
    for (const v of this.cache.values()) held += v.meta.entries;
    while (this.cache.size > 1 && (this.cache.size > CACHE_SIZE || held > CACHE_ENTRIES)) {
      const [oldest, v] = this.cache.entries().next().value!;
      held -= v.meta.entries;
      this.cache.delete(oldest);
    }
    return meta;
  }

  /** The meta the archive's storage reads on its side, or undefined when it does not. */
  private async metaOnStorage(virtualPath: string, password: string): Promise<ArchiveMeta | undefined> {
    const { driver, actualPath } = await this.fs.driverAt(virtualPath);
    if (!driver.archiveMeta) return undefined;
    const m = await onDriver(() => driver.archiveMeta!(actualPath, password));
    if (!m) return undefined;
    const tree = new ArchiveTree();
    addReported(tree, 0, m.tree ?? []);
    return { comment: m.comment, encrypted: m.encrypted, tree, entries: tree.count - 1 };
  }

  /** The meta read here, from the archive's bytes. */
  private async readMeta(virtualPath: string, password?: string): Promise<ArchiveMeta> {
    const { archive } = await this.open(virtualPath, password);
    try {
      return { comment: archive.comment, encrypted: archive.encrypted, tree: await ArchiveTree.ofInSlices(archive.entries, archive.count), entries: archive.count };
    } finally {
      await archive.close();
    }
  }

  /** One inner folder: the tree and the folder's node in it (the route pages its children). */
  async list(virtualPath: string, inner: string, opts: { password?: string; refresh?: boolean } = {}): Promise<InnerFolder> {
    const listed = await this.listOnStorage(virtualPath, inner, opts.password ?? '');
    if (listed) return listed;
    const { tree } = await this.meta(virtualPath, opts);
    const id = tree.find(inner);
    if (id === undefined) throw new Missing(`${inner} is not in the archive`);
    if (!tree.isDir(id)) throw new BadRequest(`${inner} is not a folder in the archive`);
    return { tree, id };
  }

  /** One inner folder as the archive's storage lists it on its side, or undefined when it does not. */
  private async listOnStorage(virtualPath: string, inner: string, password: string): Promise<InnerFolder | undefined> {
    const { driver, actualPath } = await this.fs.driverAt(virtualPath);
    if (!driver.archiveList) return undefined;
    const objs = await onDriver(() => driver.archiveList!(actualPath, inner, password));
    if (!objs) return undefined;
    const tree = new ArchiveTree();
    addReported(tree, 0, objs);
    return { tree, id: 0 };
  }

  /** One file entry's bytes (raw links /ad /ap /ae), bounded by the bomb limits. */
  async entry(virtualPath: string, inner: string, password: string, signal?: AbortSignal) {
    const remote = await this.entryOnStorage(virtualPath, inner, password, signal);
    if (remote) return remote;
    const { archive, obj } = await this.open(virtualPath, password);
    const entry = findFile(archive, inner);
    if (!entry) {
      await archive.close();
      throw new Missing(`${inner} is not a file in the archive`);
    }
    const guard = new BombGuard(this.limits(), obj.size);
    let body;
    try {
      guard.checkDeclared(entry.size);
      body = await archive.open(inner, password, signal);
    } catch (err) {
      await archive.close();
      throw err;
    }
    const out = body.pipe(guard.meter());
    body.on('error', (err) => out.destroy(err));
    out.on('close', () => void archive.close());
    return { stream: out, entry, archiveModified: obj.modified };
  }

  /**
   * One entry extracted by the archive's storage (its link, e.g. the peer's `/ae`), sized from its
   * inner folder's listing there; undefined when the storage does not extract.
   */
  private async entryOnStorage(virtualPath: string, inner: string, password: string, signal?: AbortSignal) {
    const { driver, actualPath } = await this.fs.driverAt(virtualPath);
    if (!driver.archiveLink || !driver.archiveList) return undefined;
    const siblings = await onDriver(() => driver.archiveList!(actualPath, path.posix.dirname(inner), password));
    if (!siblings) return undefined;
    const found = siblings.find((o) => o.name === path.posix.basename(inner) && !o.isDir);
    if (!found) throw new Missing(`${inner} is not a file in the archive`);
    const link = await onDriver(() => driver.archiveLink!(actualPath, inner, password));
    if (!link) return undefined;
    const { obj } = await this.fs.get(virtualPath);
    const guard = new BombGuard(this.limits(), obj.size);
    guard.checkDeclared(found.size);
    const res = await this.links.open(link, { signal });
    await refuseEnvelope(res);
    const out = res.pipe(guard.meter());
    res.on('error', (err) => out.destroy(err));
    out.on('close', () => res.destroy());
    const entry: ArchiveEntry = { path: inner, size: found.size, isDir: false, modified: found.modified.getTime(), encrypted: false };
    return { stream: out, entry, archiveModified: obj.modified };
  }

  /**
   * Extracts `src` (all of it, or what is under `inner`) into `dstDir`: by the storage itself when
   * both are on one storage that extracts on its side (no task here: undefined), else as tasks.
   */
  async decompress(src: string, dstDir: string, opts: { password: string; inner: string; putIntoNewDir: boolean; overwrite: boolean }, creator?: TaskCreator): Promise<Task | undefined> {
    const { obj } = await this.fs.get(src);
    if (obj.isDir) throw new BadRequest(`not a supported archive: ${obj.name}`);
    if (await this.decompressOnStorage(src, dstDir, opts)) return undefined;
    if (!formatOf(obj.name)) throw new BadRequest(`not a supported archive: ${obj.name}`);
    const target = opts.putIntoNewDir ? joinV(dstDir, stem(obj.name)) : dstDir;
    await mkdir(this.stagingDir, { recursive: true });
    const temp = path.join(this.stagingDir, `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`);
    const payload: DecompressPayload = { src, dstDir: target, inner: opts.inner, password: opts.password, putIntoNewDir: opts.putIntoNewDir, overwrite: opts.overwrite, temp, creator };
    return this.tasks.submitStored({
      kind: 'decompress',
      name: `decompress [${src}](${opts.inner}) to [${target}]`,
      creator,
      status: 'preparing',
      payload,
      run: (ctx) => this.expand(payload, ctx),
    });
  }

  /** Asks the storage to extract on its side when source and target share it; true when it did. */
  private async decompressOnStorage(src: string, dstDir: string, opts: { password: string; inner: string; putIntoNewDir: boolean; overwrite: boolean }): Promise<boolean> {
    const from = await this.fs.driverAt(src);
    if (!from.driver.archiveDecompress) return false;
    const to = this.fs.resolveStorage(dstDir);
    if (to.storage.row.id !== from.storage.row.id) return false;
    const done = await onDriver(() => from.driver.archiveDecompress!(from.actualPath, to.actualPath, opts));
    if (done) this.fs.invalidate(dstDir, true);
    return done;
  }

  /** `decompress`: expands into the staging folder (started afresh on each attempt), then queues the upload. */
  private async expand(p: DecompressPayload, ctx: TaskContext): Promise<void> {
    await rm(p.temp, { recursive: true, force: true });
    await mkdir(p.temp, { recursive: true });
    const refused: Array<{ name: string; reason: string }> = [];
    try {
      ctx.setStatus('reading the archive');
      const { archive, obj } = await this.open(p.src, p.password);
      try {
        const base = p.inner === '/' ? '/' : path.posix.dirname(p.inner);
        let wanted = 0;
        let total = 0;
        for (const e of archive.entries) {
          if (e.isDir || !under(p.inner, e.path)) continue;
          wanted++;
          total += e.size;
        }
        if (wanted === 0 && p.inner !== '/') throw new Missing(`${p.inner} is not in the archive`);
        ctx.setTotalBytes(total);
        const guard = new BombGuard(this.limits(), obj.size);
        guard.checkDeclared(total);
        const rel = (e: ArchiveEntry) => (base === '/' ? e.path.slice(1) : e.path.slice(base.length + 1));
        if (p.inner === '/') for (const name of archive.refused) refused.push({ name, reason: 'unsafe entry name' });
        for (const d of archive.entries) if (d.isDir && (p.inner === '/' || d.path.startsWith(`${p.inner}/`) || d.path === p.inner)) await mkdir(this.staged(p.temp, rel(d)), { recursive: true });
        ctx.setStatus('decompressing');
        await archive.extract(p.inner, p.password, async (e, body) => {
          // The creator may have been disabled or lost the bit meanwhile: stopped at the next entry.
          await ctx.rules();
          const file = this.staged(p.temp, rel(e));
          const meter = guard.meter();
          meter.on('data', () => ctx.setProgress(total > 0 ? Math.min(99, (guard.bytes / total) * 100) : 50));
          try {
            await mkdir(path.dirname(file), { recursive: true });
            await pipeline(body, meter, createWriteStream(file), { signal: ctx.signal });
          } catch (err) {
            const code = (err as { code?: string }).code;
            if (code !== 'ENAMETOOLONG' && code !== 'EILSEQ') throw err;
            // A name the server's file system can not hold is skipped and named, as a refused one.
            body.resume();
            refused.push({ name: rel(e), reason: taskErrorText(err) });
          }
        }, ctx.signal);
      } finally {
        await archive.close();
      }
    } catch (err) {
      if (ctx.lastAttempt || ctx.signal.aborted || err instanceof FinalTaskError) await rm(p.temp, { recursive: true, force: true });
      throw err;
    }
    ctx.setProgress(100);
    ctx.setStatus('queued the upload');
    const kept = refused.slice(0, REFUSED_KEPT);
    if (refused.length > REFUSED_KEPT) kept.push({ name: `${refused.length - REFUSED_KEPT} more`, reason: 'unsafe entry names' });
    const up: UploadPayload = { temp: p.temp, dstDir: p.dstDir, overwrite: p.overwrite, refused: kept };
    // The staging folder changes hands: this task's payload lets go of it once the upload owns it.
    this.tasks.submit({
      kind: 'decompress_upload',
      name: `upload the extracted files of [${p.src}] to [${p.dstDir}]`,
      creator: p.creator,
      status: 'uploading',
      payload: up,
      run: (ctx2) => this.store(up, ctx2),
    });
    await ctx.savePayload({ ...p, temp: undefined });
  }

  /** A staged file's path: the entry's safe inner path under the staging folder, checked once more. */
  private staged(temp: string, rel: string): string {
    const file = path.resolve(temp, rel);
    if (file !== temp && !file.startsWith(`${temp}${path.sep}`)) throw new BadRequest(`unsafe entry name: ${rel}`);
    return file;
  }

  /** `decompress_upload`: stores every staged file into the target folder, then drops the staging folder. */
  private async store(p: UploadPayload, ctx: TaskContext): Promise<void> {
    const files: Array<{ rel: string; size: number }> = [];
    const dirs: string[] = [];
    const walk = async (rel: string) => {
      for (const d of await readdir(path.join(p.temp, rel), { withFileTypes: true })) {
        const r = rel ? `${rel}/${d.name}` : d.name;
        if (d.isDirectory()) {
          dirs.push(r);
          await walk(r);
        } else if (d.isFile()) files.push({ rel: r, size: (await stat(path.join(p.temp, r))).size });
      }
    };
    try {
      await walk('');
    } catch {
      throw new Error('the extracted files are no longer in the temp folder; decompress the archive again');
    }
    const total = files.reduce((n, f) => n + f.size, 0);
    ctx.setTotalBytes(total);
    const skipped = new SkippedNames(p.refused ?? []);
    let done = 0;
    try {
      await this.storeTarget(p.dstDir, ctx);
      // Every name is decided on the creator's view as it is when that name is written, as a direct upload of it.
      for (const d of dirs) {
        const rules = await ctx.rules();
        await skipped.attempt(`${d}/`, async () => {
          rules.checkMkdir(joinV(p.dstDir, d));
          await this.writer.mkdir(joinV(p.dstDir, d));
        });
      }
      for (const f of files) {
        ctx.signal.throwIfAborted();
        const rules = await ctx.rules();
        const base = done;
        await skipped.attempt(f.rel, async () => {
          const target = joinV(p.dstDir, f.rel);
          rules.checkPut(target);
          // A storage on the same file system (Local) takes the staged file by renaming it; others read it once.
          await this.writer.putFile(target, { path: path.join(p.temp, f.rel), size: f.size, onProgress: (b) => ctx.setProgress(total > 0 ? ((base + b) / total) * 100 : 100) }, { overwrite: p.overwrite });
        });
        done += f.size;
      }
    } catch (err) {
      if (ctx.lastAttempt || ctx.signal.aborted || err instanceof FinalTaskError) await rm(p.temp, { recursive: true, force: true });
      throw err;
    }
    await rm(p.temp, { recursive: true, force: true });
    skipped.throwIfAny();
  }

  /** The target folder, decided as a mkdir of it: refused, nothing of the archive is stored (no retry would change that). */
  private async storeTarget(dstDir: string, ctx: TaskContext): Promise<void> {
    try {
      (await ctx.rules()).checkMkdir(dstDir);
    } catch (err) {
      if (refusesName(err)) throw new FinalTaskError((err as FinalTaskError).kind, `the target folder is refused: ${(err as Error).message}`);
      throw err;
    }
    await this.writer.mkdir(dstDir);
  }
}

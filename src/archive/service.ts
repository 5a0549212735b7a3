import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { User } from '../db/users.js';
import type { Obj } from '../drivers/types.js';
import { BadRequest, Missing } from '../errors.js';
import type { Fs } from '../fs/fs.js';
import type { FsWriter } from '../fs/write.js';
import type { LinkFetcher } from '../net/link-fetch.js';
import type { Settings } from '../settings/service.js';
import type { Task, TaskContext, TaskManager } from '../tasks/manager.js';
import { type ArchiveEntry, BombGuard, buildTree, findNode, type Limits, type TreeNode } from './entries.js';
import { formatOf } from './formats.js';
import type { OpenedArchive } from './reader.js';
import { open7z } from './sevenzip.js';
import { ByteSource } from './source.js';
import { openStreamed } from './stream-formats.js';
import { openZip } from './zip.js';

/** The folder of temp_dir where extractions are staged before their upload. */
export const ARCHIVE_TEMP = 'archive';

/** What a listing keeps of an archive (cached like folder listings). */
export interface ArchiveMeta {
  comment: string;
  encrypted: boolean;
  tree: TreeNode;
  entries: number;
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
}

/** A `decompress_upload` task's payload: a staged tree stored into `dstDir`. */
interface UploadPayload {
  temp: string;
  dstDir: string;
  overwrite: boolean;
}

const CACHE_SIZE = 64;
const CACHE_TTL_MS = 10 * 60_000;

const stem = (name: string) => name.replace(/(\.tar)?\.(zip|tar|gz|tgz|bz2|tbz2|xz|txz|zst|tzst|7z|rar)$/i, '') || name;
const joinV = (dir: string, rel: string) => path.posix.join(dir, rel);

/**
 * Archives as folders, below users (access is decided by the per-user view): the inner listing
 * (cached by path, size and modified time), one entry's bytes, and extraction as two tasks:
 * `decompress` expands the archive into a staging folder of temp_dir (bounded by the bomb
 * limits, never outside it), then `decompress_upload` stores the staged tree into the target
 * folder through the writer. A crash leaves nothing half-written in the target: the staging
 * folder belongs to its task and is swept once no unfinished task owns it.
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
    let archive: OpenedArchive;
    if (format === 'zip') archive = await openZip(source, this.settings.get('non_efs_zip_encoding'));
    else if (format === '7z' || format === 'rar') archive = await open7z(source, this.tempDir, obj.name, password);
    else archive = await openStreamed(source, format, obj.name, obj.modified);
    try {
      new BombGuard(this.limits(), obj.size).checkEntries(archive.entries.length);
    } catch (err) {
      await archive.close();
      throw err;
    }
    return { archive, obj, source };
  }

  /** The archive's comment, encryption and inner tree (cached unless `refresh`). */
  async meta(virtualPath: string, opts: { password?: string; refresh?: boolean } = {}): Promise<ArchiveMeta> {
    const { obj } = await this.fs.get(virtualPath);
    const key = `${obj.size}:${obj.modified.getTime()}`;
    const hit = this.cache.get(virtualPath);
    if (!opts.refresh && hit && hit.key === key && Date.now() - hit.at < CACHE_TTL_MS) {
      this.cache.delete(virtualPath);
      this.cache.set(virtualPath, hit);
      return hit.meta;
    }
    const { archive } = await this.open(virtualPath, opts.password);
    try {
      const meta: ArchiveMeta = { comment: archive.comment, encrypted: archive.encrypted, tree: buildTree(archive.entries), entries: archive.entries.length };
      this.cache.set(virtualPath, { at: Date.now(), meta, key });
      while (this.cache.size > CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
      return meta;
    } finally {
      await archive.close();
    }
  }

  /** The entries of one inner folder. */
  async list(virtualPath: string, inner: string, opts: { password?: string; refresh?: boolean } = {}): Promise<TreeNode[]> {
    const node = findNode((await this.meta(virtualPath, opts)).tree, inner);
    if (!node) throw new Missing(`${inner} is not in the archive`);
    if (!node.isDir) throw new BadRequest(`${inner} is not a folder in the archive`);
    return node.children;
  }

  /** One file entry's bytes (raw links /ad /ap /ae), bounded by the bomb limits. */
  async entry(virtualPath: string, inner: string, password: string, signal?: AbortSignal) {
    const { archive, obj } = await this.open(virtualPath, password);
    const entry = archive.entries.find((e) => e.path === inner && !e.isDir);
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

  /** Queues the extraction of `src` (all of it, or what is under `inner`) into `dstDir`. */
  async decompress(src: string, dstDir: string, opts: { password: string; inner: string; putIntoNewDir: boolean; overwrite: boolean }, creator?: User): Promise<Task> {
    const { obj } = await this.fs.get(src);
    if (obj.isDir || !formatOf(obj.name)) throw new BadRequest(`not a supported archive: ${obj.name}`);
    const target = opts.putIntoNewDir ? joinV(dstDir, stem(obj.name)) : dstDir;
    await mkdir(this.stagingDir, { recursive: true });
    const temp = path.join(this.stagingDir, `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`);
    const payload: DecompressPayload = { src, dstDir: target, inner: opts.inner, password: opts.password, putIntoNewDir: opts.putIntoNewDir, overwrite: opts.overwrite, temp };
    return this.tasks.submit({
      kind: 'decompress',
      name: `decompress [${src}](${opts.inner}) to [${target}]`,
      creator,
      status: 'preparing',
      payload,
      run: (ctx) => this.expand(payload, ctx),
    });
  }

  /** `decompress`: expands into the staging folder (started afresh on each attempt), then queues the upload. */
  private async expand(p: DecompressPayload, ctx: TaskContext): Promise<void> {
    await rm(p.temp, { recursive: true, force: true });
    await mkdir(p.temp, { recursive: true });
    try {
      ctx.setStatus('reading the archive');
      const { archive, obj } = await this.open(p.src, p.password);
      try {
        const base = p.inner === '/' ? '/' : path.posix.dirname(p.inner);
        const wanted = archive.entries.filter((e) => !e.isDir && (p.inner === '/' || e.path === p.inner || e.path.startsWith(`${p.inner}/`)));
        if (wanted.length === 0 && p.inner !== '/') throw new Missing(`${p.inner} is not in the archive`);
        const total = wanted.reduce((n, e) => n + e.size, 0);
        ctx.setTotalBytes(total);
        const guard = new BombGuard(this.limits(), obj.size);
        guard.checkDeclared(total);
        const rel = (e: ArchiveEntry) => (base === '/' ? e.path.slice(1) : e.path.slice(base.length + 1));
        for (const d of archive.entries) if (d.isDir && (p.inner === '/' || d.path.startsWith(`${p.inner}/`) || d.path === p.inner)) await mkdir(this.staged(p.temp, rel(d)), { recursive: true });
        ctx.setStatus('decompressing');
        await archive.extract(p.inner, p.password, async (e, body) => {
          const file = this.staged(p.temp, rel(e));
          await mkdir(path.dirname(file), { recursive: true });
          const meter = guard.meter();
          meter.on('data', () => ctx.setProgress(total > 0 ? Math.min(99, (guard.bytes / total) * 100) : 50));
          await pipeline(body, meter, createWriteStream(file), { signal: ctx.signal });
        }, ctx.signal);
      } finally {
        await archive.close();
      }
    } catch (err) {
      if (ctx.lastAttempt || ctx.signal.aborted) await rm(p.temp, { recursive: true, force: true });
      throw err;
    }
    ctx.setProgress(100);
    ctx.setStatus('queued the upload');
    const up: UploadPayload = { temp: p.temp, dstDir: p.dstDir, overwrite: p.overwrite };
    // The staging folder changes hands: this task's payload lets go of it once the upload owns it.
    this.tasks.submit({
      kind: 'decompress_upload',
      name: `upload the extracted files of [${p.src}] to [${p.dstDir}]`,
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
    await this.writer.mkdir(p.dstDir);
    for (const d of dirs) await this.writer.mkdir(joinV(p.dstDir, d));
    let done = 0;
    try {
      for (const f of files) {
        ctx.signal.throwIfAborted();
        const base = done;
        await this.writer.put(
          joinV(p.dstDir, f.rel),
          {
            name: path.posix.basename(f.rel),
            size: f.size,
            stream: createReadStream(path.join(p.temp, f.rel)),
            signal: ctx.signal,
            onProgress: (b) => ctx.setProgress(total > 0 ? ((base + b) / total) * 100 : 100),
          },
          { overwrite: p.overwrite },
        );
        done += f.size;
      }
    } catch (err) {
      if (ctx.lastAttempt || ctx.signal.aborted) await rm(p.temp, { recursive: true, force: true });
      throw err;
    }
    await rm(p.temp, { recursive: true, force: true });
  }
}

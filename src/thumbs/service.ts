import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import path from 'node:path';
import type { Link, Obj } from '../drivers/types.js';
import { AppError, BadRequest, isAbort, TooLarge, Unavailable, Unsupported } from '../errors.js';
import type { Fs } from '../fs/fs.js';
import type { Mounted } from '../fs/storages.js';
import type { Logger } from '../logger.js';
import type { LinkFetcher } from '../net/link-fetch.js';
import { THUMB_SETTINGS } from '../settings/defaults.js';
import type { Settings } from '../settings/service.js';
import { ThumbCache } from './cache.js';
import { imageFormats, makeThumb, THUMB_TYPE, type ThumbKind } from './make.js';
import { type ReadCounter, RangeServer, sourceOf } from './source.js';
import { ToolError } from './tools.js';

/** Type codes of wire-api.md §6.2 the service reads kinds from (the settings' lists). */
const TYPE_VIDEO = 2;
const TYPE_AUDIO = 3;
/** OpenList's Local default for `video_thumb_pos`. */
const DEFAULT_VIDEO_POSITION = '20%';
/** Listed files waiting for a background thumbnail, at most (the oldest are dropped past it). */
const MAX_PENDING = 5_000;
/** What is known of files' thumbnails (made, or failed), kept for this many files. */
const MAX_KNOWN = 50_000;
const MIB = 1024 * 1024;

export interface ThumbsDeps {
  fs: Fs;
  settings: Settings;
  links: LinkFetcher;
  /** The wire type code of a name (fs/objects.ts FileTypes). */
  fileType: (name: string) => number;
  /** Where thumbnails are cached (`<data>/thumbs`). */
  dir: string;
  log: Logger;
}

/** What the service did, for tests, the benchmark and metrics. */
export interface ThumbStats {
  made: number;
  hits: number;
  failed: number;
  /** Reads of sources through their drivers. */
  reads: ReadCounter;
}

interface Job {
  run: () => Promise<void>;
  /** The service closed before the job ran. */
  drop?: (err: Error) => void;
}

/** A thumbnail on disk. */
interface Made {
  path: string;
  bytes: number;
}

interface Located {
  obj: Obj;
  storage: Mounted;
  actualPath: string;
}

/**
 * Thumbnails for every storage: images (sharp), a video's frame and an audio file's cover
 * (ffmpeg, reading by ranges), a PDF's first page (pdftoppm). Made by a worker of its own
 * (`thumb_workers` at once; requests before files a listing offered, which come last), read
 * through the storage's driver, cached under `<data>/thumbs` by storage, path, size, modification
 * time and thumbnail size, with a total size limit (least recently used go first).
 */
export class Thumbs {
  readonly stats: ThumbStats = { made: 0, hits: 0, failed: 0, reads: { opens: 0, bytes: 0 } };
  private readonly cache: ThumbCache;
  private readonly ranges = new RangeServer();
  private images = new Set(['jpg', 'jpeg', 'png', 'webp', 'gif', 'tif', 'tiff']);
  private readonly demand: Job[] = [];
  /** Files offered by listings, by virtual key, with the object the listing gave: made when no request waits. */
  private readonly pending = new Map<string, { virtualPath: string; obj: Obj }>();
  private active = 0;
  private readonly inflight = new Map<string, Promise<Made>>();
  /** By virtual key (path, size, mtime): true once a thumbnail exists, false when none can be made. */
  private readonly known = new Map<string, boolean>();
  private readonly running = new Set<AbortController>();
  private closed = false;
  private positions = new Map<string, string>();

  constructor(private readonly deps: ThumbsDeps) {
    this.cache = new ThumbCache(deps.dir, () => deps.settings.getNumber(THUMB_SETTINGS.cacheSize) * MIB);
    imageFormats().then(
      (f) => (this.images = f),
      () => {},
    );
  }

  /** Files waiting for a thumbnail: asked for, offered by listings, or being made. */
  get waiting(): number {
    return this.demand.length + this.pending.size + this.active;
  }

  private get settings() {
    return this.deps.settings;
  }

  /** The kind of thumbnail a file name can have, if any. */
  kindOf(name: string): ThumbKind | undefined {
    const dot = name.lastIndexOf('.');
    const ext = dot === -1 ? '' : name.slice(dot + 1).toLowerCase();
    if (this.images.has(ext)) return 'image';
    if (ext === 'pdf') return 'pdf';
    const type = this.deps.fileType(name);
    if (type === TYPE_VIDEO && ext !== 'm3u8') return 'video';
    if (type === TYPE_AUDIO) return 'audio';
    return undefined;
  }

  /** The thumbnail size for a request's `size` (px): the allowed size at or above it, else the largest; the first when absent. */
  sizeFor(asked: string | undefined): number {
    const sizes = this.settings
      .get(THUMB_SETTINGS.sizes)
      .split(',')
      .map((s) => Number.parseInt(s.trim(), 10))
      .filter((n) => Number.isFinite(n) && n >= 16 && n <= 4096);
    if (sizes.length === 0) sizes.push(144);
    const n = Number.parseInt(asked ?? '', 10);
    if (!Number.isFinite(n)) return sizes[0]!;
    const sorted = [...sizes].sort((a, b) => a - b);
    return sorted.find((s) => s >= n) ?? sorted[sorted.length - 1]!;
  }

  private enabled(): boolean {
    return !this.closed && this.settings.getBool(THUMB_SETTINGS.enabled);
  }

  private wholeReadTooLarge(kind: ThumbKind, obj: Obj): boolean {
    return (kind === 'image' || kind === 'pdf') && obj.size > this.settings.getNumber(THUMB_SETTINGS.maxSource) * MIB;
  }

  /**
   * Whether a listed file (at `virtualPath`) gets a thumbnail link: it has one or one can be made
   * (an audio file once its cover was found). The ones not made yet are queued for the
   * background worker when `thumb_prefetch` is on. Cheap: it reads nothing.
   */
  offer(virtualPath: string, obj: Obj): boolean {
    if (obj.isDir || !this.enabled()) return false;
    const kind = this.kindOf(obj.name);
    if (!kind || obj.size === 0 || this.wholeReadTooLarge(kind, obj)) return false;
    const vkey = `${virtualPath}\0${obj.size}\0${obj.modified.getTime()}`;
    const known = this.known.get(vkey);
    if (known === false) return false;
    if (known === undefined && this.settings.getBool(THUMB_SETTINGS.prefetch) && !this.pending.has(vkey)) {
      if (this.pending.size >= MAX_PENDING) this.pending.delete(this.pending.keys().next().value!);
      this.pending.set(vkey, { virtualPath, obj });
      this.pump();
    }
    return kind !== 'audio' || known === true;
  }

  /**
   * The thumbnail of the file at `virtualPath` as a link to send (`/d?type=thumb`, `/sd?type=thumb`):
   * the driver's own where it makes them (Local with `thumbnail`, Crypt/Chunk `.thumbnails`),
   * else this service's, from the cache or made now ahead of the background work.
   */
  async get(virtualPath: string, asked?: string): Promise<{ link: Link; obj: Obj; storage: Mounted }> {
    const { obj, storage, actualPath } = await this.locate(virtualPath);
    const kind = this.kindOf(obj.name);
    // The driver's own (or its answer, as before this service: Local with `thumbnail` refuses a
    // kind it has none for) where it makes them, where this service is off, or for a kind it can not make.
    if (obj.selfThumb || !this.enabled() || !kind) return this.deps.fs.link(virtualPath, { type: 'thumb' });
    const size = this.sizeFor(asked);
    const key = this.keyOf({ obj, storage, actualPath }, kind, size);
    let made = await this.cache.lookup(key);
    if (made) this.stats.hits++;
    else made = await this.make(virtualPath, { obj, storage, actualPath }, kind, size, key);
    const at = made.path;
    return {
      obj,
      storage,
      link: { contentType: THUMB_TYPE, file: { size: made.bytes, modified: obj.modified, path: at, open: async (start, end) => createReadStream(at, { start, end }) } },
    };
  }

  /** Where a listed file is, from the listing's object. */
  private located(virtualPath: string, obj: Obj): Located {
    const { storage, actualPath } = this.deps.fs.resolveStorage(virtualPath);
    return { obj, storage, actualPath };
  }

  private async locate(virtualPath: string): Promise<Located> {
    const { obj, storage } = await this.deps.fs.get(virtualPath);
    if (obj.isDir || !storage) throw new BadRequest('cannot make a thumbnail of a folder');
    // Crypt and Chunk tell their own thumbnails (a .thumbnails folder) in listings only: ask the folder's.
    if (obj.selfThumb === undefined) {
      const listed = await this.deps.fs.list(path.posix.dirname(virtualPath)).catch(() => undefined);
      if (listed?.objs.find((o) => o.name === obj.name)?.selfThumb) obj.selfThumb = true;
    }
    const { actualPath } = this.deps.fs.resolveStorage(virtualPath);
    return { obj, storage, actualPath };
  }

  /** A storage's `video_thumb_pos` (Local's option; OpenList's default elsewhere). */
  private videoPosition(storage: Mounted): string {
    const addition = storage.row.addition;
    let pos = this.positions.get(addition);
    if (pos === undefined) {
      try {
        pos = String((JSON.parse(addition) as Record<string, unknown>).video_thumb_pos ?? '').trim();
      } catch {
        pos = '';
      }
      if (!/^\d+(\.\d+)?%?$/.test(pos)) pos = DEFAULT_VIDEO_POSITION;
      if (this.positions.size > 1000) this.positions.clear();
      this.positions.set(addition, pos);
    }
    return pos;
  }

  private keyOf({ obj, storage, actualPath }: Located, kind: ThumbKind, size: number): string {
    const pos = kind === 'video' ? this.videoPosition(storage) : '';
    return createHash('sha256').update(`${storage.row.id}\0${actualPath}\0${obj.size}\0${obj.modified.getTime()}\0${size}\0${pos}`).digest('hex').slice(0, 40);
  }

  private remember(vkey: string, made: boolean): void {
    this.known.delete(vkey);
    if (this.known.size >= MAX_KNOWN) this.known.delete(this.known.keys().next().value!);
    this.known.set(vkey, made);
  }

  /** Makes (once at a time per key, ahead of the background work) and caches a thumbnail. */
  private make(virtualPath: string, at: Located, kind: ThumbKind, size: number, key: string): Promise<Made> {
    const running = this.inflight.get(key);
    if (running) return running;
    const vkey = `${virtualPath}\0${at.obj.size}\0${at.obj.modified.getTime()}`;
    const p = new Promise<Made>((resolve, reject) => {
      this.demand.push({
        run: async () => {
          try {
            resolve((await this.cache.lookup(key)) ?? (await this.produce(virtualPath, at, kind, size, key)));
            this.remember(vkey, true);
          } catch (err) {
            if (!isAbort(err)) {
              this.stats.failed++;
              this.remember(vkey, false);
            }
            reject(err);
          }
        },
        drop: reject,
      });
      this.pump();
    }).finally(() => this.inflight.delete(key));
    this.inflight.set(key, p);
    return p;
  }

  /** Reads the source through its driver and makes the thumbnail, within the time limit. */
  private async produce(virtualPath: string, at: Located, kind: ThumbKind, size: number, key: string): Promise<Made> {
    if (this.wholeReadTooLarge(kind, at.obj)) throw new TooLarge('the file is larger than the thumbnail source limit');
    const timeoutMs = Math.max(1, this.settings.getNumber(THUMB_SETTINGS.timeout)) * 1000;
    const control = new AbortController();
    this.running.add(control);
    let timer: NodeJS.Timeout | undefined;
    try {
      const { link } = await this.deps.fs.link(virtualPath, {});
      const src = sourceOf(link, at.obj.size, this.deps.links, this.stats.reads);
      const made = makeThumb(kind, src, {
        size,
        maxSourceBytes: this.settings.getNumber(THUMB_SETTINGS.maxSource) * MIB,
        maxPixels: Math.max(1, this.settings.getNumber(THUMB_SETTINGS.maxPixels)),
        timeoutMs,
        videoPosition: this.videoPosition(at.storage),
        signal: control.signal,
      }, this.ranges);
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          control.abort();
          reject(new Unsupported(`failed to make a thumbnail: no result within ${timeoutMs / 1000} s`));
        }, timeoutMs);
      });
      const data = await Promise.race([made, late]);
      const file = await this.cache.store(key, data);
      this.stats.made++;
      return { path: file, bytes: data.length };
    } catch (err) {
      throw this.explain(err);
    } finally {
      clearTimeout(timer);
      this.running.delete(control);
    }
  }

  /** A failure as a kind the fronts answer, without host paths or URLs. */
  private explain(err: unknown): unknown {
    if (err instanceof AppError || isAbort(err)) return err;
    const text = (err as Error)?.message ?? String(err);
    if (/pixel limit/i.test(text)) return new TooLarge('the image has more pixels than the thumbnail limit');
    if (err instanceof ToolError) return new Unsupported(`failed to make a thumbnail: ${err.message}`);
    if (/timeout/i.test(text)) return new Unsupported('failed to make a thumbnail: no result in time');
    return new Unsupported('failed to make a thumbnail: the file could not be read as an image');
  }

  /** Starts work while slots are free: requests first, then files listings offered. */
  private pump(): void {
    const limit = Math.max(1, this.settings.getNumber(THUMB_SETTINGS.workers, 2));
    while (this.active < limit && !this.closed) {
      const job = this.demand.shift() ?? this.nextOffered();
      if (!job) return;
      this.active++;
      void job.run().finally(() => {
        this.active--;
        // The next job from a fresh tick: a burst of cache hits never holds the event loop.
        setImmediate(() => this.pump());
      });
    }
  }

  private nextOffered(): Job | undefined {
    const first = this.pending.entries().next();
    if (first.done) return undefined;
    const [vkey, { virtualPath, obj }] = first.value;
    this.pending.delete(vkey);
    return {
      run: async () => {
        try {
          // The listing's object, selfThumb included: no folder listing per file (that grew with the folder's square).
          const at = this.located(virtualPath, obj);
          const kind = at.obj.selfThumb ? undefined : this.kindOf(at.obj.name);
          if (!kind) return;
          const key = this.keyOf(at, kind, this.sizeFor(undefined));
          if (await this.cache.has(key)) {
            this.remember(vkey, true);
            return;
          }
          await this.runInSlot(virtualPath, at, kind, key);
        } catch (err) {
          if (!isAbort(err) && !(err instanceof AppError)) this.deps.log.warn({ err: (err as Error).message }, 'background thumbnail failed');
        }
      },
    };
  }

  /** A background job already holds a slot: it makes its thumbnail in place (joining one in flight). */
  private async runInSlot(virtualPath: string, at: Located, kind: ThumbKind, key: string): Promise<void> {
    const vkey = `${virtualPath}\0${at.obj.size}\0${at.obj.modified.getTime()}`;
    const existing = this.inflight.get(key);
    if (existing) {
      await existing.catch(() => {});
      return;
    }
    const p = this.produce(virtualPath, at, kind, this.sizeFor(undefined), key);
    this.inflight.set(key, p);
    try {
      await p;
      this.remember(vkey, true);
    } catch (err) {
      if (!isAbort(err)) {
        this.stats.failed++;
        this.remember(vkey, false);
      }
    } finally {
      this.inflight.delete(key);
    }
  }

  /** What the cache holds. */
  cacheSize(): Promise<{ bytes: number; count: number }> {
    return this.cache.size();
  }

  /** Stops the worker: queued work is dropped, running work aborted. */
  async close(): Promise<void> {
    this.closed = true;
    this.pending.clear();
    for (const job of this.demand.splice(0)) job.drop?.(new Unavailable('the server is stopping'));
    for (const c of this.running) c.abort();
    await this.ranges.close();
  }
}

export const thumbsDir = (dataDir: string): string => path.join(dataDir, 'thumbs');

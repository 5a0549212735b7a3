import { mkdir, readdir, rename, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';

interface Entry {
  bytes: number;
  /** When its file's modification time was last set to mark a use (ms). */
  touched: number;
}

/** A use is written to the file's mtime at most this often (the order survives a restart). */
const TOUCH_EVERY_MS = 3_600_000;
const EXT = '.webp';

/**
 * Thumbnails on disk, `<dir>/<2 hex>/<key>.webp`, with a total size limit: past it the least
 * recently used are removed. The index lives in memory in use order (a Map re-inserted on every
 * use), rebuilt from the folder at start with the files' modification times as last uses.
 */
export class ThumbCache {
  private readonly index = new Map<string, Entry>();
  private total = 0;
  private loaded?: Promise<void>;

  constructor(
    readonly dir: string,
    private readonly limit: () => number,
  ) {}

  private load(): Promise<void> {
    this.loaded ??= (async () => {
      const found: Array<{ key: string; bytes: number; used: number }> = [];
      const shards = await readdir(this.dir).catch(() => [] as string[]);
      for (const shard of shards) {
        const names = await readdir(path.join(this.dir, shard)).catch(() => [] as string[]);
        for (const name of names) {
          const file = path.join(this.dir, shard, name);
          if (!name.endsWith(EXT)) {
            // A temporary left by a crash.
            if (name.endsWith('.tmp')) await unlink(file).catch(() => {});
            continue;
          }
          const st = await stat(file).catch(() => undefined);
          if (st) found.push({ key: name.slice(0, -EXT.length), bytes: st.size, used: st.mtimeMs });
        }
      }
      found.sort((a, b) => a.used - b.used);
      for (const f of found) {
        if (this.index.has(f.key)) continue;
        this.index.set(f.key, { bytes: f.bytes, touched: f.used });
        this.total += f.bytes;
      }
    })();
    return this.loaded;
  }

  private file(key: string): string {
    return path.join(this.dir, key.slice(0, 2), key + EXT);
  }

  /** The cached file of `key` (its use recorded), or undefined. */
  async lookup(key: string): Promise<{ path: string; bytes: number } | undefined> {
    await this.load();
    const e = this.index.get(key);
    if (!e) return undefined;
    this.index.delete(key);
    this.index.set(key, e);
    const now = Date.now();
    if (now - e.touched > TOUCH_EVERY_MS) {
      e.touched = now;
      void utimes(this.file(key), now / 1000, now / 1000).catch(() => {});
    }
    return { path: this.file(key), bytes: e.bytes };
  }

  /** Whether `key` is cached, without counting a use. */
  async has(key: string): Promise<boolean> {
    await this.load();
    return this.index.has(key);
  }

  /** Stores a thumbnail (temporary name, then renamed into place) and evicts past the limit. */
  async store(key: string, data: Buffer): Promise<string> {
    await this.load();
    const file = this.file(key);
    await mkdir(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    await writeFile(tmp, data);
    await rename(tmp, file);
    const old = this.index.get(key);
    if (old) this.total -= old.bytes;
    this.index.delete(key);
    this.index.set(key, { bytes: data.length, touched: Date.now() });
    this.total += data.length;
    await this.evict(key);
    return file;
  }

  /** Removes the least recently used until the total is within the limit (never `keep`, just stored). */
  private async evict(keep: string): Promise<void> {
    const limit = this.limit();
    if (limit <= 0) return;
    for (const [key, e] of this.index) {
      if (this.total <= limit) break;
      if (key === keep) continue;
      this.index.delete(key);
      this.total -= e.bytes;
      await unlink(this.file(key)).catch(() => {});
    }
  }

  /** Bytes held now. */
  async size(): Promise<{ bytes: number; count: number }> {
    await this.load();
    return { bytes: this.total, count: this.index.size };
  }
}

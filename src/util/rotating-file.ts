import { createReadStream, createWriteStream, mkdirSync, readdirSync, renameSync, statSync, unlinkSync, type WriteStream } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';

export interface RotationOptions {
  /** Megabytes before the file is rotated; 0 disables rotation. */
  maxSizeMb: number;
  /** Rotated files kept; 0 keeps all. */
  maxBackups: number;
  /** Days a rotated file is kept; 0 keeps them forever. */
  maxAgeDays: number;
  compress: boolean;
}

/**
 * Append-only log file rotated by size (the config's log.max_size/max_backups/max_age/compress):
 * `log.log` is renamed to `log-<time>.log` (gzipped when asked) and old backups are pruned.
 */
export class RotatingFile extends Writable {
  private out: WriteStream;
  private size: number;

  constructor(
    private readonly file: string,
    private readonly opts: RotationOptions,
  ) {
    super();
    mkdirSync(path.dirname(file), { recursive: true });
    this.out = createWriteStream(file, { flags: 'a' });
    try {
      this.size = statSync(file).size;
    } catch {
      this.size = 0;
    }
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.size += chunk.length;
    this.out.write(chunk, (err) => {
      if (err) return cb(err);
      if (this.opts.maxSizeMb > 0 && this.size >= this.opts.maxSizeMb * 1024 * 1024) this.rotate(cb);
      else cb();
    });
  }

  override _final(cb: (err?: Error | null) => void): void {
    this.out.end(cb);
  }

  private rotate(cb: (err?: Error | null) => void): void {
    this.out.end(() => {
      const ext = path.extname(this.file);
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      const backup = `${this.file.slice(0, this.file.length - ext.length)}-${stamp}${ext}`;
      try {
        renameSync(this.file, backup);
      } catch (err) {
        return cb(err as Error);
      }
      this.out = createWriteStream(this.file, { flags: 'a' });
      this.size = 0;
      const done = () => {
        this.prune();
        cb();
      };
      if (!this.opts.compress) return done();
      pipeline(createReadStream(backup), createGzip(), createWriteStream(`${backup}.gz`))
        .then(() => unlinkSync(backup))
        .catch(() => undefined)
        .finally(done);
    });
  }

  private prune(): void {
    const dir = path.dirname(this.file);
    const ext = path.extname(this.file);
    const base = path.basename(this.file, ext);
    const backups = readdirSync(dir)
      .filter((n) => n.startsWith(`${base}-`) && (n.endsWith(ext) || n.endsWith(`${ext}.gz`)))
      .map((n) => ({ full: path.join(dir, n), mtime: statSync(path.join(dir, n)).mtimeMs }))
      .sort((a, b) => b.mtime - a.mtime);
    const cutoff = Date.now() - this.opts.maxAgeDays * 86_400_000;
    backups.forEach((b, i) => {
      const tooMany = this.opts.maxBackups > 0 && i >= this.opts.maxBackups;
      const tooOld = this.opts.maxAgeDays > 0 && b.mtime < cutoff;
      if (tooMany || tooOld) {
        try {
          unlinkSync(b.full);
        } catch {
          /* already gone */
        }
      }
    });
  }
}

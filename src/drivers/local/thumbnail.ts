import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { Semaphore } from '../../util/semaphore.js';

const run = promisify(execFile);

export const THUMB_WIDTH = 144;

/** File kinds a thumbnail can be made of (type codes of wire-api.md §6.2). */
export const TYPE_VIDEO = 2;
export const TYPE_IMAGE = 5;

/**
 * Thumbnails of the Local driver: a PNG 144 px wide, from the image itself (sharp) or from a
 * frame of a video (ffmpeg, at `position`: seconds or a percentage of the duration). Results are
 * kept in `cacheDir` (when set) under a digest of path, size and mtime, so a changed file gets
 * a new thumbnail. At most `concurrency` are made at once.
 */
export class Thumbnailer {
  private readonly gate: Semaphore;

  constructor(
    private readonly cacheDir: string,
    concurrency: number,
    private readonly position = '20%',
  ) {
    this.gate = new Semaphore(Math.max(1, concurrency));
  }

  async thumbnail(file: string, kind: number, stamp: { size: number; mtimeMs: number }): Promise<Buffer> {
    const key = createHash('sha1').update(`${file}\0${stamp.size}\0${stamp.mtimeMs}`).digest('hex');
    const cached = this.cacheDir ? path.join(this.cacheDir, `${key}.png`) : '';
    if (cached) {
      try {
        return await readFile(cached);
      } catch {
        /* not made yet */
      }
    }
    const png = await this.gate.run(() => (kind === TYPE_VIDEO ? this.fromVideo(file) : this.fromImage(file)));
    if (cached) {
      await mkdir(this.cacheDir, { recursive: true });
      const tmp = `${cached}.${process.pid}.tmp`;
      await writeFile(tmp, png);
      await rename(tmp, cached);
    }
    return png;
  }

  private async fromImage(file: string): Promise<Buffer> {
    const { default: sharp } = await import('sharp');
    return sharp(file, { failOn: 'none', animated: false }).rotate().resize({ width: THUMB_WIDTH, withoutEnlargement: true }).png().toBuffer();
  }

  private async fromVideo(file: string): Promise<Buffer> {
    let seek = 0;
    if (this.position.endsWith('%')) {
      const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', file], { timeout: 30_000 });
      const duration = Number.parseFloat(stdout.trim());
      if (Number.isFinite(duration)) seek = (duration * Number.parseFloat(this.position)) / 100;
    } else {
      seek = Number.parseFloat(this.position) || 0;
    }
    const { stdout } = await run(
      'ffmpeg',
      ['-v', 'error', '-ss', seek.toFixed(3), '-i', file, '-frames:v', '1', '-vf', `scale=${THUMB_WIDTH}:-2`, '-f', 'image2pipe', '-vcodec', 'png', 'pipe:1'],
      { encoding: 'buffer', maxBuffer: 16 * 1024 * 1024, timeout: 60_000 },
    );
    if (stdout.length === 0) throw new Error('ffmpeg produced no frame');
    return stdout;
  }
}

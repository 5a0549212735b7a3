import { BadRequest } from '../errors.js';
import type { Logger } from '../logger.js';
import { cleanPath } from '../util/paths.js';
import type { Fs } from './fs.js';
import { joinVirtual } from './storages.js';

/**
 * OpenList's manual scan (Indexes page): lists a folder and everything below it again from the
 * storages (refreshing the listing cache), counting the objects seen. One scan at a time;
 * `limit` caps the folders listed per second (0 = no cap).
 */
export class ManualScan {
  private controller: AbortController | undefined;
  private count = 0;

  constructor(
    private readonly fs: Fs,
    private readonly log: Logger,
  ) {}

  get running(): boolean {
    return this.controller !== undefined;
  }

  progress(): { obj_count: number; is_done: boolean } {
    return { obj_count: this.count, is_done: !this.running };
  }

  /** Starts a scan in the background; returns once it has started. */
  start(rawPath: string, limit: number): void {
    if (this.controller) throw new BadRequest('manual scan is running, please try later');
    const controller = new AbortController();
    this.controller = controller;
    this.count = 0;
    const gap = limit > 0 ? 1000 / limit : 0;
    void this.walk(cleanPath(rawPath || '/'), controller.signal, gap)
      .catch((err) => this.log.error({ err }, 'manual scan failed'))
      .finally(() => {
        if (this.controller === controller) this.controller = undefined;
      });
  }

  stop(): void {
    if (!this.controller) throw new BadRequest('manual scan is not running');
    this.controller.abort();
    this.controller = undefined;
  }

  private async walk(dir: string, signal: AbortSignal, gapMs: number): Promise<void> {
    let objs;
    try {
      objs = (await this.fs.list(dir, { refresh: true })).objs;
    } catch (err) {
      if (!signal.aborted) this.log.warn({ err, path: dir }, 'manual scan: listing failed');
      return;
    }
    this.count += objs.length;
    for (const o of objs) {
      if (signal.aborted) return;
      if (!o.isDir) continue;
      if (gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
      await this.walk(joinVirtual(dir, o.name), signal, gapMs);
    }
  }
}

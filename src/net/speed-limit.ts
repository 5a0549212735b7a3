import { Transform, type TransformCallback } from 'node:stream';
import { SPEED_LIMIT_SETTINGS, type SpeedLimitKey } from '../settings/defaults.js';
import type { Settings } from '../settings/service.js';

/** A rate shared by every stream drawing on it: bytes go out no faster than `rate` per second in total. */
export class Throttle {
  /** When the bytes already let through will have been "paid for" at the current rate (ms). */
  private clock = 0;

  /** Bytes per second; 0 or less means no limit. */
  constructor(private rate = 0) {}

  setRate(bytesPerSecond: number): void {
    this.rate = bytesPerSecond;
  }

  get limited(): boolean {
    return this.rate > 0;
  }

  /** How long to hold `n` bytes back before they may go (a tenth of a second may be sent ahead). */
  delayFor(n: number, now = Date.now()): number {
    if (this.rate <= 0) return 0;
    this.clock = Math.max(this.clock, now - 100);
    this.clock += (n / this.rate) * 1000;
    return Math.max(0, this.clock - now);
  }

  /** A pass-through stream pacing the bytes through this throttle (back-pressure holds the source). */
  stream(): Transform {
    return new Transform({
      transform: (chunk: Buffer, _enc: BufferEncoding, done: TransformCallback) => {
        const wait = this.delayFor(chunk.length);
        if (wait <= 0) return done(null, chunk);
        const timer = setTimeout(() => done(null, chunk), wait);
        timer.unref?.();
      },
    });
  }
}

/**
 * OpenList's four speed limits (settings in KiB/s, -1 = none), each one rate shared by all
 * transfers of its direction: to clients (downloads, raw links, WebDAV GET), from clients
 * (uploads), from storages (reads for proxies and copies) and to storages (every put).
 */
export class SpeedLimits {
  readonly clientDownload = new Throttle();
  readonly clientUpload = new Throttle();
  readonly serverDownload = new Throttle();
  readonly serverUpload = new Throttle();

  constructor(private readonly settings: Settings) {
    settings.onLoad(() => this.apply());
    settings.onChange((keys) => {
      if (keys.some((k) => (SPEED_LIMIT_SETTINGS as readonly string[]).includes(k))) this.apply();
    });
  }

  private apply(): void {
    const rate = (key: SpeedLimitKey) => Math.max(0, this.settings.getNumber(key, -1)) * 1024;
    this.clientDownload.setRate(rate('max_client_download_speed'));
    this.clientUpload.setRate(rate('max_client_upload_speed'));
    this.serverDownload.setRate(rate('max_server_download_speed'));
    this.serverUpload.setRate(rate('max_server_upload_speed'));
  }
}

/** `source` paced by each of `throttles` that has a limit (the source itself when none has). */
export function throttled<T extends NodeJS.ReadableStream>(source: T, ...throttles: Throttle[]): T | Transform {
  let out: NodeJS.ReadableStream = source;
  for (const t of throttles) {
    if (!t.limited) continue;
    const pace = t.stream();
    out.on('error', (err) => pace.destroy(err as Error));
    pace.on('close', () => (out as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.());
    out = out.pipe(pace);
  }
  return out as T | Transform;
}

// Transfer speed from successive byte counts (smoothed), and the time left at that speed.

/** Bytes per second of one transfer, smoothed over about the last two seconds. */
export class RateMeter {
  private last?: { at: number; bytes: number };
  private rate = 0;

  /** Records the bytes done so far at time `at` (ms); returns the smoothed speed. */
  sample(bytes: number, at = performance.now()): number {
    if (!this.last) {
      this.last = { at, bytes };
      return this.rate;
    }
    const dt = (at - this.last.at) / 1000;
    if (dt < 0.2) return this.rate;
    const now = Math.max(0, bytes - this.last.bytes) / dt;
    const weight = Math.min(1, dt / 2);
    this.rate = this.rate === 0 ? now : this.rate + (now - this.rate) * weight;
    this.last = { at, bytes };
    return this.rate;
  }

  get speed(): number {
    return this.rate;
  }
}

/** Seconds left for `remaining` bytes at `speed` bytes per second, undefined while unknown. */
export const timeLeft = (remaining: number, speed: number) => (speed > 0 && remaining >= 0 ? remaining / speed : undefined);

export function formatDuration(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds)) return '–';
  const s = Math.ceil(seconds);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
}

export const formatSpeed = (bytesPerSecond: number, size: (n: number) => string) => `${size(Math.round(bytesPerSecond))}/s`;

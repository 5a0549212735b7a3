/** Nearest-rank percentile (p in 0..100) of a sample; NaN for an empty sample. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export interface Summary {
  n: number;
  p50: number;
  p99: number;
  min: number;
  max: number;
  mean: number;
}

export function summarize(values: number[]): Summary {
  const n = values.length;
  return {
    n,
    p50: percentile(values, 50),
    p99: percentile(values, 99),
    min: n ? Math.min(...values) : NaN,
    max: n ? Math.max(...values) : NaN,
    mean: n ? values.reduce((a, b) => a + b, 0) / n : NaN,
  };
}

/** Milliseconds since an arbitrary origin, sub-millisecond resolution. */
export const nowMs = (): number => Number(process.hrtime.bigint()) / 1e6;

export const MB = 1e6;
export const MiB = 1024 * 1024;
export const GiB = 1024 * MiB;

export function fmtNum(v: number | undefined | null, digits = 1): string {
  if (v === undefined || v === null || !Number.isFinite(v)) return '—';
  return v.toFixed(digits);
}

export function fmtBytes(n: number): string {
  if (n >= GiB) return `${(n / GiB).toFixed(n % GiB ? 2 : 0)} GiB`;
  if (n >= MiB) return `${(n / MiB).toFixed(n % MiB ? 1 : 0)} MiB`;
  return `${n} B`;
}

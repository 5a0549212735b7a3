/**
 * The byte ranges an upload holds, kept with its row (`uploads.ranges`, JSON) so that a chunk's
 * answer, which lists every received range, costs what the list costs and not a read of every
 * part recorded so far: `[[start, end], …]`, end exclusive, sorted, neither overlapping nor
 * touching (a sequential upload is one range however many chunks it has).
 */
export type ByteRanges = Array<[number, number]>;

/** The ranges stored with a row; undefined when none are (a row from before they were kept) or they do not parse. */
export function parseRanges(text: string | null | undefined): ByteRanges | undefined {
  if (!text) return undefined;
  try {
    const v = JSON.parse(text) as unknown;
    if (!Array.isArray(v)) return undefined;
    const out: ByteRanges = [];
    for (const r of v) {
      if (!Array.isArray(r) || r.length !== 2 || !Number.isSafeInteger(r[0]) || !Number.isSafeInteger(r[1]) || r[0] >= r[1]) return undefined;
      if (out.length && r[0] <= out[out.length - 1]![1]) return undefined;
      out.push([r[0], r[1]]);
    }
    return out;
  } catch {
    return undefined;
  }
}

/** `ranges` with [start, end) added (merged with any range it overlaps or touches). */
export function addRange(ranges: ByteRanges, start: number, end: number): ByteRanges {
  if (end <= start) return ranges;
  const out: ByteRanges = [];
  let s = start;
  let e = end;
  let placed = false;
  for (const [a, b] of ranges) {
    if (b < s) out.push([a, b]);
    else if (a > e) {
      if (!placed) out.push([s, e]);
      placed = true;
      out.push([a, b]);
    } else {
      s = Math.min(s, a);
      e = Math.max(e, b);
    }
  }
  if (!placed) out.push([s, e]);
  return out;
}

/** `ranges` without [start, end) (a range it cuts through is split). */
export function removeRange(ranges: ByteRanges, start: number, end: number): ByteRanges {
  if (end <= start) return ranges;
  const out: ByteRanges = [];
  for (const [a, b] of ranges) {
    if (b <= start || a >= end) {
      out.push([a, b]);
      continue;
    }
    if (a < start) out.push([a, start]);
    if (b > end) out.push([end, b]);
  }
  return out;
}

/** The ranges of recorded parts (any order): sorted, then merged in one pass. */
export function rangesOf(parts: Array<{ start: number; size: number }>): ByteRanges {
  const out: ByteRanges = [];
  for (const p of [...parts].sort((x, y) => x.start - y.start)) {
    if (p.size <= 0) continue;
    const last = out[out.length - 1];
    if (last && p.start <= last[1]) last[1] = Math.max(last[1], p.start + p.size);
    else out.push([p.start, p.start + p.size]);
  }
  return out;
}

/** The chunk indexes of `chunkSize`-byte chunks the ranges hold whole or in part, as inclusive ranges [[first, last], …]. */
export function chunkIndexRanges(ranges: ByteRanges, chunkSize: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const [a, b] of ranges) {
    const first = Math.floor(a / chunkSize);
    const last = Math.floor((b - 1) / chunkSize);
    const prev = out[out.length - 1];
    if (prev && prev[1] >= first - 1) prev[1] = Math.max(prev[1], last);
    else out.push([first, last]);
  }
  return out;
}

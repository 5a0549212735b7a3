// One feature on vs off in one run, on the same server: the audit log (issue 37: throughput and
// cached-listing p50 with it on ≥ 0.95× of off) and a quota on the writer (issue 41: single PUT
// ≥ 0.97×, copy of 10 000 small files ≥ 0.9×). The feature is switched between the two halves of
// each pair, the order of the halves alternating from pair to pair so that drift (page cache,
// JIT, GC) falls on both sides alike.

import { apiCall } from './http.js';
import { median } from './stats.js';
import type { Atrium } from './servers.js';
import type { AreaResult, BenchContext } from './types.js';

/** One measurement of one half of a pair: a value where higher is better or lower is better. */
export interface PairMeasure {
  name: string;
  unit: string;
  /** `higher`: throughput (on/off ratio wanted ≥ target); `lower`: latency (off/on ratio wanted ≥ target). */
  better: 'higher' | 'lower';
  /** The ratio wanted (on as good as `target`× off). */
  target: number;
  run(): Promise<number>;
}

/** The feature measured: its name in the rows, and how to switch it. */
export interface Feature {
  name: string;
  set(on: boolean): Promise<void>;
  /** What it is left as after the pairs. */
  leaveOn: boolean;
}

export const auditFeature = (atrium: Atrium): Feature => ({
  name: 'audit log',
  leaveOn: true,
  set: async (on) => {
    await apiCall(atrium.base, '/api/admin/setting/save', { token: atrium.token, body: [{ key: 'audit_log_enabled', value: String(on) }] });
  },
});

/**
 * Runs `pairs` pairs of each measure (off then on, then on then off, …) and adds one summary row
 * per measure: the median with the feature on, the median with it off, and the ratio (as "on is
 * x× as good as off": the median of the pairs' own ratios) against the measure's target.
 */
export async function onOffPairs(ctx: BenchContext, result: AreaResult, feature: Feature, measures: PairMeasure[], pairs: number): Promise<void> {
  const samples: Record<string, { on: number[]; off: number[] }> = {};
  for (const m of measures) samples[m.name] = { on: [], off: [] };
  try {
    for (let i = 0; i < pairs; i++) {
      for (const on of i % 2 === 0 ? [false, true] : [true, false]) {
        ctx.signal.throwIfAborted();
        await feature.set(on);
        for (const m of measures) {
          try {
            const v = await m.run();
            samples[m.name]![on ? 'on' : 'off'].push(v);
          } catch (err) {
            samples[m.name]![on ? 'on' : 'off'].push(Number.NaN); // keeps the halves of each pair at one index
            result.errors.push({ benchmark: `${m.name} (${feature.name} ${on ? 'on' : 'off'})`, subject: 'atrium', message: (err as Error).message });
          }
        }
      }
    }
  } finally {
    await feature.set(feature.leaveOn);
  }
  (result.raw.on_off_pairs ??= {} as Record<string, unknown>);
  (result.raw.on_off_pairs as Record<string, unknown>)[feature.name] = samples;
  for (const m of measures) {
    const s = samples[m.name]!;
    const ok = (v: number[]) => v.filter((x) => Number.isFinite(x));
    const on = ok(s.on).length ? median(ok(s.on)) : null;
    const off = ok(s.off).length ? median(ok(s.off)) : null;
    // The ratio of each pair's two halves, measured back to back, then their median: a paired
    // comparison, so the machine's drift over the run (other load coming and going) cancels
    // within each pair instead of spreading both medians.
    const pairRatios: number[] = [];
    for (let i = 0; i < Math.min(s.on.length, s.off.length); i++) {
      const [a, b] = [s.on[i]!, s.off[i]!];
      if (a > 0 && b > 0) pairRatios.push(m.better === 'higher' ? a / b : b / a);
    }
    const ratio = pairRatios.length ? median(pairRatios) : null;
    ctx.log(`${m.name}: ${feature.name} on ${on?.toFixed(2)} ${m.unit}, off ${off?.toFixed(2)} ${m.unit}, median of ${pairRatios.length} pair ratios ${ratio?.toFixed(3)}`);
    result.summary.push({
      benchmark: `${m.name}, ${feature.name} on vs off (${pairs} alternating pairs)`,
      atrium: on,
      peerName: `${feature.name} off`,
      peer: off,
      unit: m.unit,
      ratio,
      target: `≥ ${m.target}× off`,
      met: ratio === null ? null : ratio >= m.target,
    });
  }
}

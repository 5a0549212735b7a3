// The audit log on vs off in one run (issue 37: "throughput and cached-listing p50 with it on
// ≥ 0.95× of off"): the same server, the setting `audit_log_enabled` switched between the two
// halves of each pair, the order of the halves alternating from pair to pair so that drift
// (page cache, JIT, GC) falls on both sides alike.

import { apiCall } from './http.js';
import { median } from './stats.js';
import type { Atrium } from './servers.js';
import type { AreaResult, BenchContext } from './types.js';

/** One measurement of one half of a pair: a value where higher is better or lower is better. */
export interface AuditMeasure {
  name: string;
  unit: string;
  /** `higher`: throughput (on/off ratio ≥ 0.95 wanted); `lower`: latency (off/on ratio ≥ 0.95 wanted). */
  better: 'higher' | 'lower';
  run(): Promise<number>;
}

export async function setAudit(atrium: Atrium, on: boolean): Promise<void> {
  await apiCall(atrium.base, '/api/admin/setting/save', { token: atrium.token, body: [{ key: 'audit_log_enabled', value: String(on) }] });
}

/**
 * Runs `pairs` pairs of each measure (off then on, then on then off, …) and adds one summary row
 * per measure: the median with the audit log on, the median with it off, and the ratio (as
 * "on is x× as good as off": the median of the pairs' own ratios), target ≥ 0.95. Leaves the
 * audit log on.
 */
export async function auditPairs(ctx: BenchContext, result: AreaResult, atrium: Atrium, measures: AuditMeasure[], pairs: number): Promise<void> {
  const samples: Record<string, { on: number[]; off: number[] }> = {};
  for (const m of measures) samples[m.name] = { on: [], off: [] };
  for (let i = 0; i < pairs; i++) {
    for (const on of i % 2 === 0 ? [false, true] : [true, false]) {
      ctx.signal.throwIfAborted();
      await setAudit(atrium, on);
      for (const m of measures) {
        try {
          const v = await m.run();
          samples[m.name]![on ? 'on' : 'off'].push(v);
        } catch (err) {
          samples[m.name]![on ? 'on' : 'off'].push(Number.NaN); // keeps the halves of each pair at one index
          result.errors.push({ benchmark: `${m.name} (audit ${on ? 'on' : 'off'})`, subject: 'atrium', message: (err as Error).message });
        }
      }
    }
  }
  await setAudit(atrium, true);
  result.raw.audit_pairs = samples;
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
    ctx.log(`${m.name}: audit on ${on?.toFixed(2)} ${m.unit}, off ${off?.toFixed(2)} ${m.unit}, median of ${pairRatios.length} pair ratios ${ratio?.toFixed(3)}`);
    result.summary.push({ benchmark: `${m.name}, audit log on vs off (${pairs} alternating pairs)`, atrium: on, peerName: 'audit off', peer: off, unit: m.unit, ratio, target: '≥ 0.95× off', met: ratio === null ? null : ratio >= 0.95 });
  }
}

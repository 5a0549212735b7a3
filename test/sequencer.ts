import { readFileSync } from 'node:fs';
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Starts the test files known to be long first (test/durations.json, seconds per file, written
 * by scripts/test-durations.mjs from a run's report), the rest after them in vitest's own order.
 * On a fresh clone vitest has no cache of durations and orders by file size, and a run could
 * start its longest file (the npm package's install, minutes) last while the other workers had
 * nothing left to do.
 */
export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const base = await super.sort(files);
    let known: Record<string, number> = {};
    try {
      known = JSON.parse(readFileSync(path.resolve('test/durations.json'), 'utf8')) as Record<string, number>;
    } catch {
      return base;
    }
    const seconds = (f: TestSpecification) => known[path.relative(path.resolve('.'), f.moduleId)] ?? 0;
    return base.map((f, i) => ({ f, i, s: seconds(f) })).sort((a, b) => b.s - a.s || a.i - b.i).map((x) => x.f);
  }
}

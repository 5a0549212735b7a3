import os from 'node:os';
import { defineConfig } from 'vitest/config';

// Test files run in parallel worker processes. vitest's default (one worker fewer than the
// cores) would run them one at a time on a 2-core machine, but most files wait on I/O (servers,
// peers, databases, timers), so a few more workers than cores keep the CPUs busy: 4 workers on
// 2 cores took the full suite from 17 min to about 7.5 (docs/development.md). ATRIUM_TEST_WORKERS
// overrides it (1 runs everything serially). What parallel files share is kept apart: ports
// come from a per-process block (test/helpers/process.ts), databases and Redis keys carry a
// random per-server prefix, peers get scratch folders of their own.
const workers = Number(process.env.ATRIUM_TEST_WORKERS) || Math.max(4, os.availableParallelism() * 2);

// Suites that run on their own once every other file is done: the cluster's Redis-outage suite
// cuts and pauses server processes on timers that a loaded machine stretches (run beside the
// rest, a process it had cut off stopped answering in half the CI runs; alone it passed in each).
const ALONE = ['test/scale/cluster-state.test.ts'];

export default defineConfig({
  test: {
    projects: [
      { extends: true, test: { name: 'suite', include: ['test/**/*.test.ts'], exclude: ALONE, sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: 'alone', include: ALONE, sequence: { groupOrder: 1 } } },
    ],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: workers,
    reporters: process.env.ATRIUM_TEST_REPORT ? ['default', ['json', { outputFile: process.env.ATRIUM_TEST_REPORT }]] : ['default'],
  },
});

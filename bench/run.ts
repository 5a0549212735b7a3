// `npm run bench [-- area…]`: runs the benchmark areas (all, or those named), prints each
// area's tables on stdout and writes bench/results/<area>-<ISO date>.{json,md}.
//
// Environment:
//   BENCH_QUICK=1        small sizes for a smoke run (1 000 / 10 000 files, 64 MiB file)
//   BENCH_CLIENT=node    download with Node http.get instead of curl (default curl)
//   BENCH_SKIP_BUILD=1   do not run `npm run build` (use the existing dist/atrium.js)
//   BENCH_TMPDIR=dir     where the temp folders go (default the OS temp dir)
//   BENCH_BUDGET_MIN=n   time budget of each area in minutes (default: the area's own)
//   BENCH_LIST_SIZES=a,b BENCH_LIST_RUNS=n BENCH_FILE_MIB=n BENCH_REPS=n   override sizes/counts
//   BENCH_COPY_FILES=n   write: files in the copied folder (default 10 000)
//   BENCH_WRITE_FSYNC=1  write: a timed `sync <file>` after every write
//   BENCH_PREFAULT=0     write: no untimed scratch write before each timed one
//   BENCH_THUMB_FILES=n BENCH_THUMB_WORKERS=n   thumbs: JPEGs made (default 1 000, quick 40), workers (default: CPUs)
//   BENCH_PAGE_REPORTING=keep  leave the VM's free page reporting as it is (lib/page-reporting.ts)
//
// Every process and temp folder started is stopped / removed at the end, on error and on
// Ctrl-C (a second Ctrl-C kills at once).

import { setMaxListeners } from 'node:events';
import os, { loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { driversBench } from './drivers.js';
import { readBench } from './read.js';
import { soakBench } from './soak.js';
import { writeBench } from './write.js';
import { searchBench } from './search.js';
import { sftpBench } from './sftp.js';
import { webdavBench } from './webdav.js';
import { loadBench } from './load.js';
import { cryptBench } from './crypt.js';
import { pathsBench } from './paths.js';
import { startupBench } from './startup.js';
import { archiveBench } from './archive.js';
import { s3Bench } from './s3.js';
import { migrateBench } from './migrate.js';
import { fairBench } from './fair.js';
import { thumbsBench } from './thumbs.js';
import { syncBench } from './sync.js';
import { cleanupAll, installCleanup, interruption, wasInterrupted } from './lib/proc.js';
import { markdownTable, renderDetail, SUMMARY_COLUMNS, summaryRows, writeResult } from './lib/report.js';
import { holdFreedMemory } from './lib/page-reporting.js';
import { atriumLogOff, buildAtrium } from './lib/servers.js';
import type { AreaResult, BenchContext, BenchModule } from './lib/types.js';

/** Every area, in run order. Add a module here to add an area. */
const MODULES: BenchModule[] = [startupBench, readBench, writeBench, searchBench, sftpBench, webdavBench, loadBench, cryptBench, pathsBench, archiveBench, driversBench, s3Bench, soakBench, migrateBench, fairBench, thumbsBench, syncBench, (await import('./ui.js')).uiBench];

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(benchDir, '..');

function usage(): string {
  return `usage: npm run bench [-- <area>…]   areas: ${MODULES.map((m) => m.area).join(', ')}\n       BENCH_QUICK=1 npm run bench   (smoke run with small sizes)`;
}

async function main(): Promise<number> {
  installCleanup();
  const args = process.argv.slice(2).filter((a) => a !== '--');
  if (args.includes('-h') || args.includes('--help')) {
    console.log(usage());
    return 0;
  }
  const unknown = args.filter((a) => !MODULES.some((m) => m.area === a));
  if (unknown.length) {
    console.error(`unknown area(s): ${unknown.join(', ')}\n${usage()}`);
    return 2;
  }
  const selected = args.length ? MODULES.filter((m) => args.includes(m.area)) : MODULES.filter((m) => !m.onlyWhenNamed);
  const quick = process.env.BENCH_QUICK === '1' || process.env.BENCH_QUICK === 'true';
  const log = (msg: string) => console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}`);

  log(`building Atrium (npm run build)${process.env.BENCH_SKIP_BUILD === '1' ? ' — skipped' : ''}`);
  const build = await buildAtrium(repoRoot);
  const atriumBuildError = build.error;
  if (build.error) log(`Atrium build failed; Atrium benchmarks will report errors:\n${build.error}`);
  else if (build.warning) log(`WARNING: ${build.warning}`);

  const pageReporting = holdFreedMemory();
  log(`free page reporting: ${pageReporting}`);

  let failedAreas = 0;
  for (const mod of selected) {
    if (wasInterrupted()) break;
    const started = new Date();
    const budget = process.env.BENCH_BUDGET_MIN ? Number(process.env.BENCH_BUDGET_MIN) * 60_000 : mod.budgetMs(quick);
    // Own controller rather than AbortSignal.any + AbortSignal.timeout: on Node 20 the timeout
    // signal can be garbage-collected inside any() and never fire.
    const areaAbort = new AbortController();
    const budgetTimer = setTimeout(() => areaAbort.abort(new Error(`time budget of ${(budget / 60_000).toFixed(1)} min spent`)), budget);
    const onInterrupt = () => areaAbort.abort(interruption.signal.reason);
    interruption.signal.addEventListener('abort', onInterrupt, { once: true });
    const signal = areaAbort.signal;
    setMaxListeners(200, signal); // one listener per running client (16 curl processes…)
    const result: AreaResult = {
      area: mod.area,
      title: mod.title,
      startedAt: started.toISOString(),
      finishedAt: '',
      durationS: 0,
      quick,
      environment: {},
      parameters: {},
      summary: [],
      details: [],
      errors: [],
      raw: {},
    };
    const ctx: BenchContext = { quick, signal, log: (m) => log(`${mod.area}: ${m}`), atriumBuildError, repoRoot };
    if (build.warning) {
      result.environment.atrium_build = `WARNING: ${build.warning.split('\n')[0]!.slice(0, 300)}`;
      result.errors.push({ benchmark: 'build', subject: 'atrium', message: build.warning });
    }
    log(`area ${mod.area}${quick ? ' (quick)' : ''}, time budget ${(budget / 60_000).toFixed(1)} min`);
    const loadAtStart = loadavg().map((v) => v.toFixed(2)).join(' ');
    try {
      await mod.run(ctx, result);
    } catch (err) {
      failedAreas++;
      const reason = signal.aborted && !wasInterrupted() ? `time budget of ${(budget / 60_000).toFixed(1)} min spent` : (err as Error)?.message ?? String(err);
      result.errors.push({ benchmark: mod.area, subject: 'harness', message: reason });
      log(`area ${mod.area} stopped: ${reason}`);
    }
    clearTimeout(budgetTimer);
    // Every area's figures with the machine's load (1, 5, 15 min), which skews absolute figures.
    result.environment.load_average = `${loadAtStart} at start, ${loadavg().map((v) => v.toFixed(2)).join(' ')} at end (${os.cpus().length} cores)`;
    result.environment.page_reporting = pageReporting;
    result.environment.atrium_logging = atriumLogOff() ? 'off (BENCH_ATRIUM_LOG=off)' : 'as shipped: request logs at info into <data>/log/log.log';
    interruption.signal.removeEventListener('abort', onInterrupt);
    const finished = new Date();
    result.finishedAt = finished.toISOString();
    result.durationS = (finished.getTime() - started.getTime()) / 1000;
    if (wasInterrupted()) break;

    console.log(`\n## ${result.title} (${mod.area})${quick ? ' — QUICK' : ''}\n`);
    for (const d of result.details) console.log(renderDetail(d));
    console.log(`### Summary\n\n${markdownTable(SUMMARY_COLUMNS, summaryRows(result.summary))}\n`);
    if (result.errors.length) {
      console.log('### Errors\n');
      for (const e of result.errors) console.log(`- ${e.benchmark} (${e.subject}): ${e.message.replace(/\n/g, '\n    ')}`);
      console.log('');
    }
    const files = writeResult(path.join(benchDir, 'results'), result);
    log(`wrote ${path.relative(repoRoot, files.json)} and ${path.relative(repoRoot, files.md)}`);
  }
  await cleanupAll();
  return wasInterrupted() ? 130 : failedAreas ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  async (err) => {
    console.error(err);
    await cleanupAll();
    process.exit(1);
  },
);

// Area `ui` (issue 28; run only when named: it needs chromium): Atrium's own web UI against the
// OpenList v4 front end (@openlist-frontend/openlist-frontend, a dev dependency) in headless
// Debian chromium (/usr/bin/chromium through playwright-core, launched as
// test/helpers/browser.ts does), on a folder of BENCH_UI_FILES files (default 2 000).
//
// One Atrium build, two server processes started the same way (bench/lib/servers.ts): one with
// the default UI, one with `dist_dir` set to OpenList's dist folder (as
// test/web/openlist-frontend.test.ts serves it). A server serves one front end at `/`, so the two
// cannot share a process; both hold the same files (`/big`, BENCH_UI_FILES small files) and run
// at the same time, measured in turns (BENCH_REPS rounds, default 3, quick 1; medians). The
// admin's token is put in localStorage (key `token`, read by both front ends) before any script
// runs, so no login page is timed. Each round uses a fresh browser context (empty HTTP cache).
//
// Per front end and round:
// - first row: ms from navigation start (performance.timeOrigin) to the first animation frame in
//   which a row of the listing (Atrium `[data-testid=row]`, OpenList `.list-item`) has a box
//   inside the viewport, polled by requestAnimationFrame from an init script;
// - DOM nodes: `document.getElementsByTagName('*').length` once the listing is shown (first row
//   seen, then the count unchanged over 500 ms);
// - worst frame while scrolling: CDP `Emulation.setCPUThrottlingRate` 4, then a script scrolls
//   the page's scroller (the document, or the largest scrollable element) from top to bottom,
//   SCROLL_STEP px per animation frame, and records the gaps between frames; the worst gap
//   (and p95) is reported. The throttle is reset afterwards.
// - the share visitor's page: a share of /big made on each server, loaded at `/@s/<id>` in a
//   context with no token (the visitor's first load), first row as above (issue 44).
// Each row's target is ≤ 0.5× OpenList's.

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { createSmallFiles } from './lib/files.js';
import { apiCall } from './lib/http.js';
import { makeTempDir, removeTempDir } from './lib/proc.js';
import { type Atrium, startAtrium } from './lib/servers.js';
import { fmtNum, median, percentile } from './lib/stats.js';
import type { AreaResult, BenchContext, BenchModule } from './lib/types.js';

const CHROMIUM = process.env.ATRIUM_TEST_CHROMIUM ?? '/usr/bin/chromium';
const SCROLL_STEP = 200;
const VIEWPORT = { width: 1280, height: 860 };
const loadavg = () => os.loadavg().map((v) => v.toFixed(2)).join(' / ');

interface Front {
  name: string;
  rowSelector: string;
  server?: Atrium;
  /** A share of /big made on this server (the visitor's page, `/@s/<id>`). */
  shareId?: string;
}

interface Round {
  firstRowMs: number;
  domNodes: number;
  rowsInDom: number;
  worstFrameMs: number;
  p95FrameMs: number;
  frames: number;
  scrolledPx: number;
}

function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
}

// The in-page scripts are strings: tsx (esbuild) wraps functions it compiles with a `__name`
// helper that does not exist in the page.

/** Init script: records performance.now() of the first frame with a row in the viewport. */
const firstRowWatcher = (selector: string) => `(() => {
  const tick = () => {
    for (const el of document.querySelectorAll(${JSON.stringify(selector)})) {
      const b = el.getBoundingClientRect();
      if (b.height > 0 && b.width > 0 && b.bottom > 0 && b.top < window.innerHeight) {
        window.__firstRow = performance.now();
        return;
      }
    }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
})();`;

/** In the page: scrolls the main scroller to the bottom, `step` px a frame; the frame gaps in ms. */
const scrollAll = (step: number) => `(async () => {
  const doc = document.scrollingElement;
  let el = doc;
  if (doc.scrollHeight - doc.clientHeight < 10) {
    let best = 0;
    for (const e of document.querySelectorAll('*')) {
      const room = e.scrollHeight - e.clientHeight;
      const oy = getComputedStyle(e).overflowY;
      if (room > best && (oy === 'auto' || oy === 'scroll')) { best = room; el = e; }
    }
  }
  el.scrollTop = 0;
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  const gaps = [];
  const started = performance.now();
  return new Promise((resolve) => {
    let last = -1;
    let still = 0;
    const frame = (t) => {
      if (last >= 0) gaps.push(t - last);
      last = t;
      const before = el.scrollTop;
      el.scrollTop = before + ${step};
      // at the bottom once the position has not moved for 5 frames (virtual lists may grow)
      still = el.scrollTop === before ? still + 1 : 0;
      if (still >= 5 || performance.now() - started > 120000) {
        resolve({ gaps, scrolled: el.scrollTop, scroller: el === doc ? 'document' : (el.tagName.toLowerCase() + '.' + el.className).slice(0, 60) });
      } else requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
  });
})()`;

/** One page load of `folder`: as the admin, or (`visitor`) as a share's visitor, with no token. */
async function measure(browser: Browser, front: Front, folder: string, visitor = false): Promise<Round & { scroller: string }> {
  const s = front.server!;
  const ctx = await browser.newContext({ viewport: VIEWPORT });
  try {
    if (!visitor) await ctx.addInitScript({ content: `try { localStorage.setItem('token', ${JSON.stringify(s.token)}); } catch {}` });
    await ctx.addInitScript({ content: firstRowWatcher(front.rowSelector) });
    const page = await ctx.newPage();
    page.setDefaultTimeout(60_000);
    await page.goto(`${s.base}${folder}`);
    await page.waitForFunction('window.__firstRow !== undefined', null, { polling: 50, timeout: 60_000 });
    const firstRowMs = (await page.evaluate('window.__firstRow')) as number;
    // DOM size once the listing is shown: unchanged over 500 ms
    let domNodes = -1;
    for (let i = 0; i < 40; i++) {
      const n = (await page.evaluate("document.getElementsByTagName('*').length")) as number;
      if (n === domNodes) break;
      domNodes = n;
      await page.waitForTimeout(500);
    }
    const rowsInDom = await page.locator(front.rowSelector).count();
    const cdp = await ctx.newCDPSession(page);
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: 4 });
    const { gaps, scrolled, scroller } = (await page.evaluate(scrollAll(SCROLL_STEP))) as { gaps: number[]; scrolled: number; scroller: string };
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: 1 });
    return { firstRowMs, domNodes, rowsInDom, worstFrameMs: Math.max(...gaps), p95FrameMs: percentile(gaps, 95), frames: gaps.length, scrolledPx: scrolled, scroller };
  } finally {
    await ctx.close();
  }
}

async function run(ctx: BenchContext, result: AreaResult): Promise<void> {
  if (ctx.atriumBuildError) throw new Error(ctx.atriumBuildError);
  const files = Number(process.env.BENCH_UI_FILES) || 2000;
  const reps = Number(process.env.BENCH_REPS) || (ctx.quick ? 1 : 3);
  const dist = path.join(ctx.repoRoot, 'node_modules/@openlist-frontend/openlist-frontend/dist');
  const olVersion = readFileSync(path.join(dist, 'VERSION'), 'utf8').trim();
  result.parameters = { files, folder: '/big', rounds: reps, viewport: `${VIEWPORT.width}×${VIEWPORT.height}`, cpu_throttling_while_scrolling: 4, scroll_step_px_per_frame: SCROLL_STEP };
  result.environment = {
    node: process.version,
    chromium: CHROMIUM,
    openlist_frontend: olVersion,
    cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? '?'}`,
    loadavg_at_start: loadavg(),
    servers: 'two processes of the same Atrium build (a server serves one front end at /): default UI, and dist_dir = the OpenList dist',
  };
  const tmp = makeTempDir('atrium-bench-ui-');
  const fronts: Front[] = [
    { name: 'Atrium web UI', rowSelector: '[data-testid=row]' },
    { name: `OpenList front end ${olVersion}`, rowSelector: '.list-item' },
  ];
  let browser: Browser | undefined;
  try {
    for (const [i, f] of fronts.entries()) {
      const data = path.join(tmp, `data-${i}`);
      mkdirSync(data, { recursive: true });
      if (i === 1) writeFileSync(path.join(data, 'config.json'), JSON.stringify({ dist_dir: dist }));
      ctx.log(`${f.name}: ${files} files in /big`);
      await createSmallFiles(path.join(data, 'files', 'big'), files, ctx.signal);
      f.server = await startAtrium(ctx.repoRoot, data, { signal: ctx.signal });
      f.shareId = (await apiCall<{ id: string }>(f.server.base, '/api/share/create', { token: f.server.token, body: { files: ['/big'] } })).data.id;
    }
    browser = await launch();
    result.environment.chromium_version = browser.version();
    const rounds: Record<string, Array<Round & { scroller: string }>> = {};
    const shareRounds: Record<string, Array<Round & { scroller: string }>> = {};
    const detail: Array<Array<string | number | null>> = [];
    for (let r = 0; r < reps; r++) {
      for (const f of r % 2 ? [...fronts].reverse() : fronts) {
        if (ctx.signal.aborted) throw ctx.signal.reason;
        try {
          const m = await measure(browser, f, '/big');
          (rounds[f.name] ??= []).push(m);
          detail.push([f.name, r + 1, fmtNum(m.firstRowMs, 0), m.domNodes, m.rowsInDom, fmtNum(m.worstFrameMs, 1), fmtNum(m.p95FrameMs, 1), m.frames, m.scrolledPx, m.scroller]);
          ctx.log(`${f.name} round ${r + 1}: first row ${fmtNum(m.firstRowMs, 0)} ms, ${m.domNodes} nodes (${m.rowsInDom} rows), worst frame ${fmtNum(m.worstFrameMs, 1)} ms over ${m.frames} frames`);
          const v = await measure(browser, f, `/@s/${f.shareId}`, true);
          (shareRounds[f.name] ??= []).push(v);
          detail.push([`${f.name}, share visitor`, r + 1, fmtNum(v.firstRowMs, 0), v.domNodes, v.rowsInDom, fmtNum(v.worstFrameMs, 1), fmtNum(v.p95FrameMs, 1), v.frames, v.scrolledPx, v.scroller]);
          ctx.log(`${f.name} round ${r + 1}, share visitor: first row ${fmtNum(v.firstRowMs, 0)} ms, ${v.domNodes} nodes`);
        } catch (err) {
          result.errors.push({ benchmark: `round ${r + 1}`, subject: f.name, message: (err as Error).message.slice(0, 600) });
          ctx.log(`${f.name} round ${r + 1} failed: ${(err as Error).message.split('\n')[0]}`);
        }
      }
    }
    result.details.push({
      title: `Every round (/big, ${files} files; frames at CPU throttling 4×, ${SCROLL_STEP} px a frame)`,
      columns: ['front end', 'round', 'first row ms', 'DOM nodes', 'rows in DOM', 'worst frame ms', 'p95 frame ms', 'frames', 'scrolled px', 'scroller'],
      rows: detail,
    });
    const med = (xs: Array<Round> | undefined, k: keyof Round) => (xs?.length ? median(xs.map((x) => x[k])) : null);
    const row = (benchmark: string, k: keyof Round, unit: string, of = rounds) => {
      const [a, o] = fronts.map((f) => of[f.name] ?? []);
      const av = med(a, k);
      const ov = med(o, k);
      result.summary.push({ benchmark, atrium: av, peerName: fronts[1]!.name, peer: ov, unit, ratio: av !== null && ov ? av / ov : null, target: '≤ 0.5×', met: av !== null && ov ? av / ov <= 0.5 : null });
    };
    row(`navigation to the first row visible, /big (${files} files), median`, 'firstRowMs', 'ms');
    row('DOM nodes once the listing is shown, median', 'domNodes', 'nodes');
    row('worst frame while scrolling the whole list, CPU 4× slower, median', 'worstFrameMs', 'ms');
    row(`share visitor's page /@s/<id> of /big: first load to the first row visible, median`, 'firstRowMs', 'ms', shareRounds);
    result.raw = { rounds, share_rounds: shareRounds };
    result.environment.loadavg_at_end = loadavg();
  } finally {
    await browser?.close();
    for (const f of fronts) await f.server?.stop();
    removeTempDir(tmp);
  }
}

export const uiBench: BenchModule = {
  area: 'ui',
  title: 'Web UI in chromium: Atrium against the OpenList front end (first row, DOM size, worst frame while scrolling)',
  budgetMs: (quick) => (quick ? 5 : 15) * 60_000,
  onlyWhenNamed: true,
  run,
};

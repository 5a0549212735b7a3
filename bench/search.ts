// Area `search` (issue 10: "Index 1 000 000 entries (generated tree or synthetic driver) and
// report: build time, index size on disk, p50/p99 of 100 keyword queries").
//
// How: an Atrium core and HTTP app run in this process on a SQLite data folder (PostgreSQL or
// MariaDB with BENCH_SEARCH_DB). The tree is SYNTHETIC: a deterministic generator takes the place
// of the live tree as the indexer's TreeSource (`core.search.useSource`), so the build runs
// through the same code as on a real tree (POST /api/admin/index/build → walk → batched,
// transactional inserts with the resume cursor → progress) without a million files on disk.
// Queries go over HTTP to POST /api/fs/search as the admin (page 1, 100 per page).
//
// Targets (issue, 2-core VM): build < 5 min, query p50 < 20 ms and p99 < 100 ms.
// Side by side: the same 100 queries as the original's SQLite form (a `LIKE '%kw%'` scan per
// keyword with the count), timed straight on the same database file.

import { writeFileSync, statSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pino from 'pino';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../src/config/load.js';
import { bootstrap, openCore, type Core } from '../src/core.js';
import type { Obj } from '../src/drivers/types.js';
import { buildApp } from '../src/server/app.js';
import type { TreeSource } from '../src/search/tree.js';
import { likePattern } from '../src/db/search-nodes.js';
import { dropAll } from '../src/db/migrations.js';
import { apiCall } from './lib/http.js';
import { makeTempDir, removeTempDir } from './lib/proc.js';
import { fmtNum, nowMs, summarize, type Summary } from './lib/stats.js';
import type { AreaResult, BenchContext, BenchModule } from './lib/types.js';

const PASSWORD = 'bench-search-admin';
const TOP = 100;
const FILES_PER_LEAF = 99;
const VOCABULARY = 3000;
const EXTS = ['mp4', 'mkv', 'jpg', 'png', 'txt', 'pdf', 'docx', 'flac', 'zip', 'srt'];

/** Deterministic pseudo-random numbers (mulberry32), so every run indexes the same tree. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function vocabulary(): string[] {
  const rand = rng(7);
  const c = 'bcdfghjklmnprstvwz';
  const v = 'aeiou';
  const words = new Set<string>();
  while (words.size < VOCABULARY) {
    const syllables = 2 + Math.floor(rand() * 2);
    let w = '';
    for (let i = 0; i < syllables; i++) w += c[Math.floor(rand() * c.length)]! + v[Math.floor(rand() * v.length)]!;
    if (rand() < 0.3) w += c[Math.floor(rand() * c.length)]!;
    words.add(w);
  }
  return [...words];
}

/**
 * `/area-NN/<word> <year>/<word>_<Word> <n>.<ext>`: TOP folders, `sub` folders in each, and
 * FILES_PER_LEAF files in each of those; names are drawn from a vocabulary of VOCABULARY words.
 */
class SyntheticTree implements TreeSource {
  readonly sub: number;
  constructor(
    readonly entries: number,
    private readonly words: string[],
  ) {
    this.sub = Math.max(1, Math.round(entries / (TOP * (FILES_PER_LEAF + 1))));
  }

  get total(): number {
    return TOP + TOP * this.sub + TOP * this.sub * FILES_PER_LEAF;
  }

  private word(rand: () => number): string {
    return this.words[Math.floor(rand() * this.words.length)]!;
  }

  async list(dir: string): Promise<Obj[]> {
    const modified = new Date(1_700_000_000_000);
    const parts = dir.split('/').filter(Boolean);
    if (parts.length === 0) return Array.from({ length: TOP }, (_, i) => ({ name: `area-${String(i).padStart(2, '0')}`, size: 0, isDir: true, modified }));
    const top = Number(parts[0]!.slice(5));
    if (parts.length === 1) {
      const rand = rng(1000 + top);
      return Array.from({ length: this.sub }, (_, i) => ({ name: `${this.word(rand)} ${1990 + ((top + i) % 35)} ${i}`, size: 0, isDir: true, modified }));
    }
    if (parts.length === 2) {
      const leaf = Number(parts[1]!.split(' ').pop());
      const rand = rng(top * 100_003 + leaf + 17);
      return Array.from({ length: FILES_PER_LEAF }, (_, i) => {
        const w = this.word(rand);
        const name = `${w}_${this.word(rand).replace(/^./, (ch) => ch.toUpperCase())} ${Math.floor(rand() * 10_000)}-${i}.${EXTS[Math.floor(rand() * EXTS.length)]}`;
        return { name, size: Math.floor(rand() * 1e9), isDir: false, modified };
      });
    }
    return [];
  }

  async stat(): Promise<Obj | undefined> {
    return undefined;
  }
}

/** 100 keyword queries: 70 words, 15 two-word queries, 15 word prefixes of 4 letters. */
function queries(words: string[]): string[] {
  const rand = rng(99);
  const pick = () => words[Math.floor(rand() * words.length)]!;
  const out: string[] = [];
  for (let i = 0; i < 70; i++) out.push(pick());
  for (let i = 0; i < 15; i++) out.push(`${pick()} ${pick().slice(0, 3)}`);
  for (let i = 0; i < 15; i++) out.push(pick().slice(0, 4));
  return out;
}

function databaseConfig(prefix: string): Record<string, unknown> {
  const kind = process.env.BENCH_SEARCH_DB ?? 'sqlite';
  const base = { host: '127.0.0.1', user: '', password: '', name: 'test', db_file: 'data.db', ssl_mode: '', dsn: '', table_prefix: prefix };
  if (kind === 'postgres') return { ...base, type: 'postgres', port: 5432, user: 'postgres' };
  if (kind === 'mysql') return { ...base, type: 'mysql', port: 3306, user: 'root' };
  return { ...base, type: 'sqlite3', port: 0 };
}

async function timeQueries(base: string, token: string, list: string[], signal: AbortSignal): Promise<{ ms: number[]; totals: number[] }> {
  const ms: number[] = [];
  const totals: number[] = [];
  for (const keywords of list) {
    if (signal.aborted) throw signal.reason;
    const r = await apiCall<{ content: unknown[]; total: number }>(base, '/api/fs/search', { token, body: { parent: '/', keywords, scope: 0, page: 1, per_page: 100, password: '' } });
    if (!Array.isArray(r.data.content) || r.data.content.length !== Math.min(100, r.data.total)) throw new Error(`search ${keywords}: ${r.data.content.length} hits of ${r.data.total}`);
    ms.push(r.ms);
    totals.push(r.data.total);
  }
  return { ms, totals };
}

/** The original's SQLite search on the same rows: every keyword a LIKE substring, with the count. */
function likeScan(dbFile: string, table: string, list: string[]): number[] {
  const db = new SQLite(dbFile, { readonly: true });
  try {
    const ms: number[] = [];
    for (const keywords of list) {
      const kws = keywords.split(/\s+/).filter(Boolean);
      const where = kws.map(() => `name like ? escape '!'`).join(' and ');
      const args = kws.map(likePattern);
      const t0 = nowMs();
      db.prepare(`select count(*) from ${table} where ${where}`).get(...args);
      db.prepare(`select parent, name, is_dir, size from ${table} where ${where} order by name limit 100`).all(...args);
      ms.push(nowMs() - t0);
    }
    return ms;
  } finally {
    db.close();
  }
}

const row = (name: string, s: Summary): Array<string | number> => [name, s.n, fmtNum(s.p50, 2), fmtNum(s.p99, 2), fmtNum(s.min, 2), fmtNum(s.max, 2), fmtNum(s.mean, 2)];

async function run(ctx: BenchContext, result: AreaResult): Promise<void> {
  const entries = Number(process.env.BENCH_SEARCH_ENTRIES ?? (ctx.quick ? 100_000 : 1_000_000));
  const dbKind = process.env.BENCH_SEARCH_DB ?? 'sqlite';
  const words = vocabulary();
  const tree = new SyntheticTree(entries, words);
  result.parameters = { entries: tree.total, database: dbKind, tree: `synthetic: ${TOP} × ${tree.sub} folders × ${FILES_PER_LEAF} files`, vocabulary: VOCABULARY, queries: 100, per_page: 100 };
  result.environment = { node: process.version, cpus: os.cpus().length, loadavg_at_start: os.loadavg().map((l) => l.toFixed(2)).join(' ') };

  const dataDir = makeTempDir('atrium-bench-search-');
  const prefix = `bs${Date.now().toString(36)}_`;
  writeFileSync(path.join(dataDir, 'config.json'), JSON.stringify({ database: databaseConfig(prefix), log: { enable: false } }));
  let core: Core | undefined;
  let app: FastifyInstance | undefined;
  try {
    core = openCore(loadConfig(dataDir, {}), { log: pino({ level: 'warn' }) });
    await bootstrap(core, { adminPassword: PASSWORD });
    await core.settings.saveMany([{ key: 'search_index', value: 'database' }]);
    app = await buildApp(core);
    await app.listen({ host: '127.0.0.1', port: 0 });
    const addr = app.server.address();
    const base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
    const token = (await apiCall<{ token: string }>(base, '/api/auth/login', { body: { username: 'admin', password: PASSWORD } })).data.token;

    core.search.useSource(tree);
    ctx.log(`building the index of ${tree.total} synthetic entries on ${dbKind}`);
    let peakRss = process.memoryUsage().rss;
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
    }, 250);
    const t0 = nowMs();
    await apiCall(base, '/api/admin/index/build', { token, method: 'POST' });
    await core.search.indexer.idle();
    const buildMs = nowMs() - t0;
    clearInterval(sampler);
    const progress = (await apiCall<{ obj_count: number; is_done: boolean; error: string }>(base, '/api/admin/index/progress', { token, method: 'GET' })).data;
    if (!progress.is_done || progress.error || progress.obj_count !== tree.total) throw new Error(`build ended with ${JSON.stringify(progress)}, expected ${tree.total} objects`);
    ctx.log(`built in ${(buildMs / 1000).toFixed(1)} s`);

    let sizeBytes: number | null = null;
    const dbFile = path.join(dataDir, 'data.db');
    if (dbKind === 'sqlite') {
      const raw = new SQLite(dbFile);
      raw.pragma('wal_checkpoint(TRUNCATE)');
      raw.close();
      sizeBytes = statSync(dbFile).size + (existsSync(`${dbFile}-wal`) ? statSync(`${dbFile}-wal`).size : 0);
    }

    const list = queries(words);
    await timeQueries(base, token, list.slice(0, 5), ctx.signal); // warm-up, untimed
    const timed = await timeQueries(base, token, list, ctx.signal);
    const short = await timeQueries(base, token, ['ba', 'zo', 'ki', '7', '_'], ctx.signal);
    const adminUser = (await core.repos.users.byUsername('admin'))!;
    const inProcess: number[] = [];
    for (const keywords of list) {
      const t1 = nowMs();
      await core.search.search(core.views.for(adminUser, { front: 'api' }), { parent: '/', keywords, scope: 0, page: 1, per_page: 100, password: '' });
      inProcess.push(nowMs() - t1);
    }
    const direct = summarize(inProcess);
    const q = summarize(timed.ms);
    const s2 = summarize(short.ms);
    const likeMs = dbKind === 'sqlite' ? likeScan(dbFile, `${prefix}search_nodes`, list) : undefined;
    const like = likeMs ? summarize(likeMs) : undefined;
    const hitStats = summarize(timed.totals);

    result.details.push({
      title: `Queries through POST /api/fs/search (${tree.total} entries, ${dbKind}), ms`,
      columns: ['queries', 'n', 'p50', 'p99', 'min', 'max', 'mean'],
      rows: [
        row('100 keyword queries (words ≥ 3 letters: trigram index)', q),
        row('same 100 queries, SearchService called in-process (no HTTP)', direct),
        row('5 queries of 1–2 characters (no trigram: table scan)', s2),
        ...(like ? [row("same 100 queries as the original's SQLite LIKE scan (in-process, no HTTP)", like)] : []),
      ],
    });
    result.details.push({
      title: 'Matches per query (total)',
      columns: ['n', 'p50', 'p99', 'min', 'max'],
      rows: [[hitStats.n, hitStats.p50, hitStats.p99, hitStats.min, hitStats.max]],
    });
    result.summary.push({ benchmark: `index build, ${tree.total} entries (${dbKind})`, atrium: buildMs / 1000, unit: 's', target: '< 300 s', met: buildMs < 300_000 });
    result.summary.push({ benchmark: 'build rate', atrium: tree.total / (buildMs / 1000), unit: 'entries/s' });
    result.summary.push({ benchmark: 'peak RSS of the process during the build', atrium: peakRss / 1e6, unit: 'MB' });
    if (sizeBytes !== null) result.summary.push({ benchmark: 'database file after the build (SQLite, WAL checkpointed)', atrium: sizeBytes / 1e6, unit: 'MB' });
    for (const [key, limit] of [['p50', 20], ['p99', 100]] as const) {
      result.summary.push({
        benchmark: `search ${key}, 100 keyword queries`,
        atrium: q[key],
        unit: 'ms',
        peerName: like ? 'LIKE scan' : undefined,
        peer: like?.[key],
        ratio: like ? q[key] / like[key] : undefined,
        target: `< ${limit} ms`,
        met: q[key] < limit,
      });
    }
    result.raw = { build_ms: buildMs, query_ms: timed.ms, query_totals: timed.totals, keywords: list, short_ms: short.ms, like_ms: likeMs ?? null, in_process_ms: inProcess, size_bytes: sizeBytes };
    result.environment.loadavg_at_end = os.loadavg().map((l) => l.toFixed(2)).join(' ');
  } finally {
    if (app) await app.close().catch(() => undefined);
    if (core) {
      if (dbKind !== 'sqlite') await dropAll(core.db).catch(() => undefined);
      await core.close().catch(() => undefined);
    }
    removeTempDir(dataDir);
  }
}

export const searchBench: BenchModule = {
  area: 'search',
  title: 'Search index: build and keyword queries',
  budgetMs: (quick) => (quick ? 5 : 20) * 60_000,
  run,
};

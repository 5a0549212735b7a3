import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '../../src/db/index.js';
import { type NodeQuery, SearchNodesRepo } from '../../src/db/search-nodes.js';
import { SqliteReader } from '../../src/db/sqlite-reader.js';
import { BACKENDS } from '../helpers/backends.js';
import { startServer, type TestServer } from '../helpers/server.js';

const WORDS = ['report', 'Ünïcode', '名前', 'notes', 'photo', '100%_done', 'a_b', 'Report'];

/** Queries of every shape the search asks: trigram and short keywords, LIKE wildcards, subtrees, scopes, keyset pages. */
const QUERIES: NodeQuery[] = [
  { keywords: ['report'], under: '/', scope: 0 },
  { keywords: ['rep'], under: '/d1', scope: 2 },
  { keywords: ['Ünï'], under: '/', scope: 0 },
  { keywords: ['名前'], under: '/', scope: 1 },
  { keywords: ['%_d'], under: '/', scope: 0 },
  { keywords: ['a_b', '1'], under: '/d2', scope: 0 },
  { keywords: ['no such name'], under: '/', scope: 0 },
];

describe.each(BACKENDS)('search on the read connection ($name)', (backend) => {
  let s: TestServer;
  let worker: SearchNodesRepo;
  let inProcess: SearchNodesRepo;
  let handle: DbHandle;
  beforeAll(async () => {
    s = await startServer(backend);
    handle = s.core.db;
    worker = s.core.repos.searchNodes;
    inProcess = new SearchNodesRepo({ ...handle, readDb: () => handle.db });
    const nodes = [];
    for (let i = 0; i < 3000; i++) {
      nodes.push({ parent: `/d${i % 4}${i % 3 === 0 ? '/sub' : ''}`, name: `${WORDS[i % WORDS.length]}-${i}.txt`, is_dir: i % 7 === 0 ? 1 : 0, size: i, modified: 1_700_000_000_000 + i });
    }
    await worker.beginBulk();
    await worker.insertMany(nodes);
    await worker.endBulk();
  });
  afterAll(async () => {
    await s?.destroy();
  });

  it('runs on a worker thread on SQLite, on the main pool elsewhere', () => {
    if (backend.name === 'sqlite') expect(handle.readDb()).not.toBe(handle.db);
    else expect(handle.readDb()).toBe(handle.db);
  });

  it('answers the same matches, counts and keyset pages as the in-process connection', async () => {
    for (const q of QUERIES) {
      expect(await worker.countMatches(q)).toBe(await inProcess.countMatches(q));
      const a = await worker.matchPage(q, 50, { offset: 10 });
      expect(a).toEqual(await inProcess.matchPage(q, 50, { offset: 10 }));
      const last = a[a.length - 1];
      if (last) expect(await worker.matchPage(q, 100, { after: { name: last.name, id: last.id } })).toEqual(await inProcess.matchPage(q, 100, { after: { name: last.name, id: last.id } }));
    }
    expect(await worker.countMatches(QUERIES[0]!)).toBeGreaterThan(0);
  });

  it.runIf(backend.name === 'sqlite')('spreads queries over a pool of workers with the same answers', async () => {
    const pool = new SqliteReader(path.resolve(s.core.config.database.db_file), 3);
    try {
      const table = `${handle.prefix}search_nodes`;
      const sqls = Array.from({ length: 12 }, (_, i) => [`select count(*) as n from ${table} where size >= ?`, [i * 100]] as const);
      const answers = await Promise.all(sqls.map(([sql, params]) => pool.query(sql, params)));
      for (const [i, rows] of answers.entries()) expect(rows).toEqual([{ n: 3000 - sqls[i]![1][0]! }]);
    } finally {
      await pool.stop();
    }
  });

  it('sees what the main connection committed just before', async () => {
    await worker.insertMany([{ parent: '/fresh', name: 'just-written-zebra.txt', is_dir: 0, size: 1, modified: 1 }]);
    const q = { keywords: ['zebra'], under: '/', scope: 0 };
    expect((await worker.matchPage(q, 10, {})).map((r) => r.name)).toEqual(['just-written-zebra.txt']);
  });
});

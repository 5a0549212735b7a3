import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ONE_PIECE_ITEMS } from '../../src/server/listing-render.js';
import { BACKENDS } from '../helpers/backends.js';
import { startServer, type TestServer } from '../helpers/server.js';

const COUNT = ONE_PIECE_ITEMS * 2 + 500;

describe('a large listing answered in slices', () => {
  let s: TestServer;
  let token: string;
  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
    token = await s.login();
    const dir = path.join(s.dataDir, 'files', 'big');
    mkdirSync(dir, { recursive: true });
    for (let i = 0; i < COUNT; i++) writeFileSync(path.join(dir, `${['ünï', '名前', '🎉', 'q"uote', 'plain'][i % 5]}-${i}.txt`), '');
  });
  afterAll(async () => {
    await s?.destroy();
  });

  const list = (body: object) => s.inject({ method: 'POST', url: '/api/fs/list', headers: { authorization: token, 'content-type': 'application/json' }, payload: { path: '/big', ...body } });

  it('is the same bytes as the answer of the same entries in small pages, one piece each', async () => {
    const whole = await list({ per_page: 0 });
    expect(whole.statusCode).toBe(200);
    const data = whole.json().data;
    expect(data.total).toBe(COUNT);
    const content: unknown[] = [];
    for (let page = 1; content.length < COUNT; page++) {
      const r = (await list({ page, per_page: ONE_PIECE_ITEMS })).json();
      expect(r.code).toBe(200);
      content.push(...r.data.content);
    }
    // Compact JSON, the same keys in the same order: the whole answer re-serialised is itself.
    expect(whole.body).toBe(JSON.stringify({ code: 200, message: 'success', data: { ...data, content } }));
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerDriver } from '../../src/drivers/registry.js';
import { type Driver, driverConfig, ObjectNotFound } from '../../src/drivers/types.js';
import { ONE_BACKEND } from '../helpers/backends.js';
import { atrium, callApi, freePort, startServerProcess } from '../helpers/process.js';
import { startServer, type TestServer } from '../helpers/server.js';

/** A driver whose backend is down for listings and whose files are all missing. */
registerDriver({
  config: driverConfig({ name: 'TestFlaky', localSort: true }),
  additional: [],
  create: (addition): Driver => ({
    init: async () => undefined,
    drop: async () => undefined,
    addition: () => addition,
    list: async () => {
      throw new Error('backend unreachable');
    },
    get: async (p) => {
      if (p === '/') return { name: '', size: 0, isDir: true, modified: new Date(0) };
      throw new ObjectNotFound();
    },
    link: async () => {
      throw new ObjectNotFound();
    },
  }),
});

/** The value of one sample line of the exposition (`name{labels} value`, or `name value`). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (want.length === 0 && line.startsWith(`${name} `)) return Number(line.slice(name.length + 1));
    if (!line.startsWith(`${name}{`)) continue;
    const inside = line.slice(name.length + 1, line.lastIndexOf('}')).split(',');
    if (want.every((w) => inside.includes(w))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

describe.each(ONE_BACKEND)('GET /metrics on $name', (backend) => {
  let s: TestServer;
  let admin: string;
  let base: string;
  const TOKEN = 'scrape-secret-1';

  beforeAll(async () => {
    s = await startServer(backend);
    admin = await s.login();
    await s.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(s.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => s.destroy());

  const scrape = (auth?: string) => fetch(`${base}/metrics`, { headers: auth ? { authorization: auth } : {} });

  it('is off while metrics_token is empty, then needs the token', async () => {
    const off = await scrape('Bearer ');
    expect(off.status).toBe(404);
    expect(await off.text()).toBe('404 page not found');
    expect((await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'metrics_token', value: TOKEN }] })).code).toBe(200);
    expect((await scrape()).status).toBe(401);
    const wrong = await scrape('Bearer nope');
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const good = await scrape(`Bearer ${TOKEN}`);
    expect(good.status).toBe(200);
    expect(good.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    // The token is private: not among the public settings.
    expect((await s.api('GET', '/api/public/settings')).data.metrics_token).toBeUndefined();
  });

  it('exports the database queries, ~0 per request in steady state', async () => {
    await callApi(base, 'GET', '/api/me', { token: admin });
    const first = await (await scrape(`Bearer ${TOKEN}`)).text();
    for (let i = 0; i < 50; i++) expect((await callApi(base, 'GET', '/api/me', { token: admin })).code).toBe(200);
    const second = await (await scrape(`Bearer ${TOKEN}`)).text();
    const q1 = sample(first, 'atrium_db_queries_total')!;
    const q2 = sample(second, 'atrium_db_queries_total')!;
    expect(q1).toBeGreaterThan(0);
    // 50 authenticated requests and a scrape: at most the scrape's own task listing
    expect(q2 - q1).toBeLessThanOrEqual(2);
    expect(sample(second, 'atrium_db_queries_per_request')).toBeGreaterThan(0);
    expect(sample(second, 'atrium_db_queries_per_request')).toBeLessThan(sample(first, 'atrium_db_queries_per_request')!);
  });

  it('counts requests by route, HTTP status and envelope code, with latency and bytes', async () => {
    for (let i = 0; i < 3; i++) expect((await callApi(base, 'POST', '/api/fs/list', { token: admin, body: { path: '/' } })).code).toBe(200);
    expect((await callApi(base, 'POST', '/api/fs/get', { token: admin, body: { path: '/no/such/file' } })).code).not.toBe(200);
    expect((await callApi(base, 'GET', '/api/me', { token: 'not-a-token' })).code).toBe(401);
    const text = await (await scrape(`Bearer ${TOKEN}`)).text();
    expect(sample(text, 'atrium_http_requests_total', { method: 'POST', route: '/api/fs/list', status: '200', code: '200' })).toBe(3);
    const getCode = (await callApi(base, 'POST', '/api/fs/get', { token: admin, body: { path: '/no/such/file' } })).code;
    expect(sample(text, 'atrium_http_requests_total', { route: '/api/fs/get', status: '200', code: String(getCode) })).toBe(1);
    expect(sample(text, 'atrium_http_requests_total', { route: '/api/me', code: '401' })).toBe(1);
    expect(sample(text, 'atrium_http_request_duration_seconds_count', { method: 'POST', route: '/api/fs/list' })).toBe(3);
    // One router entry serves the seven task kinds (oneOf); the label names the kind's own route.
    expect((await callApi(base, 'GET', '/api/admin/task/copy/undone', { token: admin })).code).toBe(200);
    const after = await (await scrape(`Bearer ${TOKEN}`)).text();
    expect(sample(after, 'atrium_http_requests_total', { method: 'GET', route: '/api/admin/task/copy/undone', status: '200' })).toBe(1);
    expect(after).not.toContain(':kind(');
    expect(sample(text, 'atrium_http_request_duration_seconds_bucket', { route: '/api/fs/list', le: '+Inf' })).toBe(3);
    expect(sample(text, 'atrium_http_received_bytes_total', { route: '/api/fs/list' })).toBeGreaterThan(3 * 'POST /api/fs/list'.length);
    expect(sample(text, 'atrium_http_sent_bytes_total', { route: '/api/fs/list' })).toBeGreaterThan(3 * '{"code":200'.length);
  });

  it('reports the process memory and the listing cache', async () => {
    for (const name of ['cached-a', 'cached-b']) expect((await callApi(base, 'POST', '/api/fs/mkdir', { token: admin, body: { path: `/${name}` } })).code).toBe(200);
    const listed = await callApi(base, 'POST', '/api/fs/list', { token: admin, body: { path: '/' } });
    expect(listed.code).toBe(200);
    const text = await (await scrape(`Bearer ${TOKEN}`)).text();
    const value = (name: string) => sample(text, name) ?? Number.NaN;
    const rss = value('process_resident_memory_bytes');
    expect(rss).toBeGreaterThan(10e6);
    expect(value('nodejs_heap_size_used_bytes')).toBeGreaterThan(1e6);
    expect(value('nodejs_heap_size_total_bytes')).toBeGreaterThanOrEqual(value('nodejs_heap_size_used_bytes'));
    expect(value('nodejs_external_memory_bytes')).toBeGreaterThan(0);
    expect(rss).toBeGreaterThan(value('nodejs_heap_size_used_bytes'));
    expect(value('atrium_listing_cache_folders')).toBeGreaterThanOrEqual(1);
    expect(listed.data.content.length).toBeGreaterThanOrEqual(2);
    expect(value('atrium_listing_cache_objects')).toBeGreaterThanOrEqual(listed.data.content.length);
  });

  it('reports tasks by kind and state, and driver errors', async () => {
    const put = await fetch(`${base}/api/fs/put`, {
      method: 'PUT',
      headers: { authorization: admin, 'file-path': encodeURIComponent('/task.txt'), 'content-length': '4', 'as-task': 'true' },
      body: 'task',
    });
    const { data } = (await put.json()) as { data: { task: { id: string } } };
    await s.core.tasks.get(data.task.id)!.done;
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: { mount_path: '/flaky', driver: 'TestFlaky', addition: '{}' } })).code).toBe(200);
    expect((await s.api('POST', '/api/fs/list', { token: admin, body: { path: '/flaky' } })).code).toBe(500);
    expect((await s.api('POST', '/api/fs/get', { token: admin, body: { path: '/flaky/missing' } })).code).not.toBe(200);
    const text = await (await scrape(`Bearer ${TOKEN}`)).text();
    expect(sample(text, 'atrium_tasks', { kind: 'upload', state: 'succeeded' })).toBe(1);
    expect(sample(text, 'atrium_tasks', { kind: 'copy', state: 'running' })).toBe(0);
    expect(sample(text, 'atrium_driver_errors_total', { driver: 'TestFlaky', op: 'list' })).toBe(1);
    // A missing file is an answer, not a driver error.
    expect(sample(text, 'atrium_driver_errors_total', { driver: 'TestFlaky', op: 'get' })).toBeUndefined();
  });
});

describe('structured logs', () => {
  it('the server process logs JSON lines carrying the request id it answers with', async () => {
    const data = mkdtempSync(path.join(os.tmpdir(), 'atrium-logs-'));
    try {
      await atrium('admin', 'set', 'log-pass', '--data', data);
      const port = await freePort();
      const proc = await startServerProcess(data, port, { timeoutMs: 60_000 });
      try {
        const res = await fetch(`http://127.0.0.1:${port}/api/fs/list`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
        const id = res.headers.get('x-request-id')!;
        expect(id).toMatch(/^[0-9a-f]{16}$/);
        await new Promise((r) => setTimeout(r, 200));
        const line = proc
          .out()
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l))
          .find((l) => l.reqId === id && l.msg === 'request');
        expect(line).toMatchObject({ reqId: id, method: 'POST', url: '/api/fs/list', status: 200, level: 30 });
        expect(typeof line.time).toBe('number');
      } finally {
        await proc.stop();
      }
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  }, 120_000);
});

import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FairQueue } from '../../src/server/fair-queue.js';
import { ONE_BACKEND } from '../helpers/backends.js';
import { startServer, type TestServer } from '../helpers/server.js';

/** Settles on the next turns of the event loop (what can run now has run). */
const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
};

describe('FairQueue', () => {
  const limits = (per: number, total = 0, waitMs = 60_000, maxWaiting = 100) => ({ perKey: () => per, total: () => total, waitMs: () => waitMs, maxWaiting: () => maxWaiting });

  it('gives a key at most its bound at once; the next waits until one is released', async () => {
    const q = new FairQueue(limits(2));
    const a1 = q.acquire('a') as () => void;
    const a2 = q.acquire('a') as () => void;
    expect(typeof a1).toBe('function');
    expect(typeof a2).toBe('function');
    const a3 = q.acquire('a');
    expect(a3).toBeInstanceOf(Promise);
    expect(q.waiting('a')).toBe(1);
    // Another key is not held by a's queue.
    expect(typeof q.acquire('b')).toBe('function');
    a1();
    a1(); // a second release of the same slot changes nothing
    const got = await a3;
    expect(typeof got).toBe('function');
    expect(q.active('a')).toBe(2);
  });

  it('serves the keys waiting for the shared bound round-robin, one each in turn', async () => {
    const q = new FairQueue(limits(0, 1));
    const first = q.acquire('storm') as () => void;
    const order: string[] = [];
    const wait = (key: string) => (q.acquire(key) as Promise<(() => void) | undefined>).then((release) => {
      order.push(key);
      return release!;
    });
    const storm = [wait('storm'), wait('storm'), wait('storm')];
    const other = wait('other');
    first();
    // Each turn: the released slot goes to the next queue in the ring.
    for (const p of [storm[0]!, other, storm[1]!, storm[2]!]) (await p)();
    expect(order).toEqual(['storm', 'other', 'storm', 'storm']);
  });

  it('ends a wait with no slot when it runs out, when too many wait, or on cancel', async () => {
    const q = new FairQueue(limits(1, 0, 20, 1));
    q.acquire('a');
    const timedOut = q.acquire('a');
    expect(q.acquire('a')).toBeUndefined(); // one already waits: the most allowed
    expect(await timedOut).toBeUndefined();
    let cancel: (() => void) | undefined;
    const cancelled = q.acquire('a', (c) => (cancel = c));
    cancel!();
    expect(await cancelled).toBeUndefined();
    expect(q.waiting()).toBe(0);
  });
});

describe.each(ONE_BACKEND)('per-user request limits ($name)', (backend) => {
  let s: TestServer;
  let admin: string;
  let other: string;
  beforeAll(async () => {
    s = await startServer(backend);
    admin = await s.login();
    const created = await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'other', password: 'other-pass-1', base_path: '/', permission: 0 } });
    expect(created.code).toBe(200);
    other = await s.login('other', 'other-pass-1');
    mkdirSync(path.join(s.dataDir, 'files', 'small'), { recursive: true });
    writeFileSync(path.join(s.dataDir, 'files', 'small', 'a.txt'), 'a');
  });
  afterAll(async () => {
    await s?.destroy();
  });

  /** An upload whose body stays open (it holds its slot) until `end` is called. */
  const heldUpload = (token: string, name: string) => {
    const body = new PassThrough();
    body.write('x');
    const done = s.inject({ method: 'PUT', url: '/api/fs/put', headers: { authorization: token, 'file-path': encodeURIComponent(`/${name}`), 'content-type': 'application/octet-stream', 'content-length': '2' }, payload: body });
    return { done, end: () => body.end('y') };
  };
  const list = (token: string) => s.inject({ method: 'POST', url: '/api/fs/list', headers: { authorization: token, 'content-type': 'application/json' }, payload: { path: '/small' } });

  it('with a limit of N, the N+1th request of one user waits while another user is served', async () => {
    await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'max_requests_per_user', value: '2' }] });
    const held = [heldUpload(admin, 'held-1.bin'), heldUpload(admin, 'held-2.bin')];
    await settle();
    let thirdDone = false;
    const third = list(admin).then((r) => {
      thirdDone = true;
      return r;
    });
    const others = await list(other);
    expect(others.statusCode).toBe(200);
    expect(others.json().data.total).toBe(1);
    await settle();
    expect(thirdDone).toBe(false);
    // /ping is never queued.
    expect((await s.inject({ method: 'GET', url: '/ping' })).body).toBe('pong');
    held[0]!.end();
    const r = await third;
    expect(r.json().code).toBe(200);
    held[1]!.end();
    for (const h of held) expect((await h.done).json().code).toBe(200);
  });

  it('past the wait, a request is answered 429 with Retry-After, in the API envelope', async () => {
    await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'max_requests_per_user', value: '1' }, { key: 'max_request_wait', value: '1' }] });
    const held = heldUpload(admin, 'held-3.bin');
    await settle();
    const refused = await list(admin);
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.json()).toMatchObject({ code: 429, data: null });
    held.end();
    expect((await held.done).json().code).toBe(200);
    expect((await list(admin)).json().code).toBe(200);
    await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'max_requests_per_user', value: '0' }, { key: 'max_request_wait', value: '30' }] });
  });
});

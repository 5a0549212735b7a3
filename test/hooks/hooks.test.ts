import { existsSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpEvent } from '../../src/audit/events.js';
import { HooksRepo } from '../../src/db/hooks.js';
import { openDatabase } from '../../src/db/index.js';
import { BACKENDS } from '../helpers/backends.js';
import { freePort } from '../helpers/process.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { type Receiver, signedBy, startReceiver, until } from './receiver.js';

const FAST = { hooks: { backoffMs: [40, 40, 40], pollMs: 40, flushMs: 10 } };
const SECRET = 'hook-secret-1';

const event = (over: Partial<OpEvent>): OpEvent => ({ time: Date.now(), user: 'admin', front: 'api', op: 'mkdir', path: '/x', result: 'ok', ...over });

async function allowPrivate(s: TestServer, admin: string, on: boolean) {
  const r = await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'url_fetch_allow_private', value: String(on) }] });
  expect(r.code, r.message).toBe(200);
}

describe('event hooks', () => {
  let s: TestServer;
  let admin: string;
  let rx: Receiver;
  const create = (body: unknown) => s.api('POST', '/api/admin/hook/create', { token: admin, body });
  const httpHook = (name: string, over: Record<string, unknown> = {}, url = rx.url) => ({ name, events: ['mkdir'], action: { type: 'http', url, secret: SECRET }, ...over });
  const deadOf = async (id: number) => (await s.api('GET', `/api/admin/hook/dead?id=${id}`, { token: admin })).data;
  const del = (id: number) => s.api('POST', `/api/admin/hook/delete?id=${id}`, { token: admin });

  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!, { core: FAST });
    admin = await s.login();
    rx = await startReceiver();
    await allowPrivate(s, admin, true);
  });
  afterAll(async () => {
    await rx?.close();
    await s?.destroy();
  });

  it('a receiver gets the operation as a signed POST of JSON', async () => {
    const h = await create(httpHook('signed', { paths: ['/hooked/**'] }));
    expect(h.code, h.message).toBe(200);
    const r = await s.api('POST', '/api/fs/mkdir', { token: admin, body: { path: '/hooked/a' } });
    expect(r.code, r.message).toBe(200);
    const hit = await until(() => rx.hits[0], 5000, 'the POST');
    expect(hit.headers['content-type']).toBe('application/json');
    expect(signedBy(hit, SECRET)).toBe(true);
    expect(signedBy(hit, 'another secret')).toBe(false);
    const e = JSON.parse(hit.body.toString()) as OpEvent;
    expect(e).toMatchObject({ op: 'mkdir', user: 'admin', front: 'api', path: '/hooked/a', result: 'ok' });
    expect(typeof e.request_id).toBe('string');
    // Delivered rows go: nothing pending, nothing dead.
    const hookNow = async () => (await s.api('GET', `/api/admin/hook/get?id=${h.data.id}`, { token: admin })).data;
    for (let i = 0; i < 50 && (await hookNow()).pending > 0; i++) await new Promise((r) => setTimeout(r, 40));
    expect(await hookNow()).toMatchObject({ pending: 0, dead: 0 });
    await del(h.data.id);
    rx.hits.length = 0;
  });

  it('a receiver answering 500 then 200 gets the same bytes again', async () => {
    const h = await create(httpHook('retried', { events: ['upload'] }));
    rx.statuses.push(500);
    s.core.events.emit(event({ op: 'upload', path: '/r/file.bin', bytes: 12345 }));
    await until(() => rx.hits.length >= 2 || undefined, 5000, 'the second attempt');
    await new Promise((r) => setTimeout(r, 200));
    expect(rx.hits).toHaveLength(2);
    expect(rx.hits[1]!.body.equals(rx.hits[0]!.body)).toBe(true);
    expect(rx.hits[1]!.headers['x-atrium-signature']).toBe(rx.hits[0]!.headers['x-atrium-signature']);
    expect(signedBy(rx.hits[1]!, SECRET)).toBe(true);
    expect(JSON.parse(rx.hits[1]!.body.toString())).toMatchObject({ op: 'upload', path: '/r/file.bin', bytes: 12345 });
    await del(h.data.id);
    rx.hits.length = 0;
  });

  it("a dead receiver's event ends in the dead letters after the retries; send again delivers it", async () => {
    const port = await freePort();
    const h = await create(httpHook('dead', { events: ['remove'] }, `http://127.0.0.1:${port}/in`));
    s.core.events.emit(event({ op: 'remove', path: '/gone.txt' }));
    let dead: { content: Array<{ id: number; attempts: number; last_error: string; event: OpEvent }>; total: number } = { content: [], total: 0 };
    for (let i = 0; i < 100 && dead.total === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      dead = await deadOf(h.data.id);
    }
    expect(dead.total).toBe(1);
    // the first attempt and three retries
    expect(dead.content[0]).toMatchObject({ attempts: 4, event: { op: 'remove', path: '/gone.txt' } });
    expect(dead.content[0]!.last_error).toMatch(/ECONNREFUSED/);
    expect((await s.api('GET', '/api/admin/hook/list', { token: admin })).data.content.find((x: { id: number }) => x.id === h.data.id)).toMatchObject({ dead: 1, pending: 0 });

    const late = await startReceiver(port);
    try {
      const r = await s.api('POST', '/api/admin/hook/resend', { token: admin, body: { ids: [dead.content[0]!.id] } });
      expect(r).toMatchObject({ code: 200, data: { resent: 1 } });
      const hit = await until(() => late.hits[0], 5000, 'the letter sent again');
      expect(signedBy(hit, SECRET)).toBe(true);
      expect(JSON.parse(hit.body.toString())).toMatchObject({ op: 'remove', path: '/gone.txt' });
      for (let i = 0; i < 50 && (await deadOf(h.data.id)).total > 0; i++) await new Promise((r) => setTimeout(r, 40));
      expect((await deadOf(h.data.id)).total).toBe(0);
      expect(late.hits).toHaveLength(1);
    } finally {
      await late.close();
    }
    await del(h.data.id);
  });

  it('purge removes dead letters', async () => {
    const port = await freePort();
    const h = await create(httpHook('purged', { events: ['copy'] }, `http://127.0.0.1:${port}/in`));
    s.core.events.emit(event({ op: 'copy', path: '/a', dst_path: '/b' }));
    for (let i = 0; i < 100 && (await deadOf(h.data.id)).total === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect((await deadOf(h.data.id)).total).toBe(1);
    expect(await s.api('POST', '/api/admin/hook/purge', { token: admin, body: { hook_id: h.data.id } })).toMatchObject({ code: 200, data: { purged: 1 } });
    expect((await deadOf(h.data.id)).total).toBe(0);
    expect((await s.api('POST', '/api/admin/hook/purge', { token: admin, body: {} })).code).toBe(400);
    await del(h.data.id);
  });

  it('the address guard refuses loopback URLs unless url_fetch_allow_private is on: at save time and at send time', async () => {
    const named = await create(httpHook('by-name', { events: ['rename'] }, rx.url.replace('127.0.0.1', 'localhost')));
    expect(named.code, named.message).toBe(200);
    await allowPrivate(s, admin, false);
    try {
      const r = await create(httpHook('loopback'));
      expect(r.code).toBe(400);
      // (the address itself is masked in messages: server/envelope.ts PrivacyMask)
      expect(r.message).toMatch(/^action.url: .* is a loopback, private or link-local address; hooks may not call it \(setting url_fetch_allow_private\)$/);
      expect((await create(httpHook('v6', {}, 'http://[::1]:9/x'))).code).toBe(400);
      expect((await create(httpHook('private', {}, 'http://10.1.2.3/x'))).code).toBe(400);
      expect((await create(httpHook('localhost', {}, 'http://localhost:9/x'))).code).toBe(400);
      // Saved while allowed, the name is resolved and refused when sending.
      s.core.events.emit(event({ op: 'rename', path: '/n' }));
      let dead = { total: 0, content: [] as Array<{ last_error: string }> };
      for (let i = 0; i < 100 && dead.total === 0; i++) {
        await new Promise((r) => setTimeout(r, 50));
        dead = await deadOf(named.data.id);
      }
      expect(dead.total).toBe(1);
      expect(dead.content[0]!.last_error).toMatch(/localhost resolves to .*loopback/);
      expect(rx.hits).toHaveLength(0);
    } finally {
      await allowPrivate(s, admin, true);
    }
    await del(named.data.id);
  });

  it('filters by op, path glob and user', async () => {
    const h = await create(httpHook('filtered', { events: ['upload', 'move'], paths: ['/f/*.txt', '/deep/**'], users: ['bob'] }));
    expect(h.code, h.message).toBe(200);
    const sent = [
      event({ op: 'upload', user: 'bob', path: '/f/a.txt', request_id: 'yes-1' }),
      event({ op: 'upload', user: 'bob', path: '/f/sub/a.txt', request_id: 'no-segment' }),
      event({ op: 'upload', user: 'bob', path: '/f/a.bin', request_id: 'no-ext' }),
      event({ op: 'upload', user: 'alice', path: '/f/a.txt', request_id: 'no-user' }),
      event({ op: 'mkdir', user: 'bob', path: '/f/a.txt', request_id: 'no-op' }),
      event({ op: 'upload', user: 'bob', path: '/deep/x/y/z', request_id: 'yes-2' }),
      event({ op: 'move', user: 'bob', path: '/elsewhere/q', dst_path: '/f/q.txt', request_id: 'yes-3' }),
    ];
    for (const e of sent) s.core.events.emit(e);
    await until(() => rx.hits.length >= 3 || undefined, 5000, 'three matches');
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.hits.map((hit) => (JSON.parse(hit.body.toString()) as OpEvent).request_id).sort()).toEqual(['yes-1', 'yes-2', 'yes-3']);
    // disabled: nothing more
    const got = (await s.api('GET', `/api/admin/hook/get?id=${h.data.id}`, { token: admin })).data;
    expect((await s.api('POST', '/api/admin/hook/update', { token: admin, body: { ...got, disabled: true } })).code).toBe(200);
    s.core.events.emit(sent[0]!);
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.hits).toHaveLength(3);
    await del(h.data.id);
    rx.hits.length = 0;
  });

  it('validates definitions with clear messages; the secret is write-only', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ events: ['mkdir'], action: { type: 'http', url: rx.url, secret: 'x' } }, /name is required/],
      [{ name: 'n', action: { type: 'http', url: rx.url, secret: 'x' } }, /events is required/],
      [{ name: 'n', events: [], action: { type: 'http', url: rx.url, secret: 'x' } }, /events must name at least one operation/],
      [{ name: 'n', events: ['mkdir', 'explode'], action: { type: 'http', url: rx.url, secret: 'x' } }, /unknown operation "explode"/],
      [{ name: 'n', events: ['mkdir'], paths: ['docs/*'], action: { type: 'http', url: rx.url, secret: 'x' } }, /"docs\/\*" must start with \//],
      [{ name: 'n', events: ['mkdir'] }, /action is required/],
      [{ name: 'n', events: ['mkdir'], action: { type: 'mail' } }, /action.type must be "http" or "command"/],
      [{ name: 'n', events: ['mkdir'], action: { type: 'http', secret: 'x' } }, /action.url is required/],
      [{ name: 'n', events: ['mkdir'], action: { type: 'http', url: 'ftp://h/x', secret: 'x' } }, /http or https/],
      [{ name: 'n', events: ['mkdir'], action: { type: 'http', url: 'not a url', secret: 'x' } }, /not a valid URL/],
      [{ name: 'n', events: ['mkdir'], action: { type: 'http', url: rx.url } }, /action.secret is required/],
    ];
    for (const [body, message] of cases) {
      const r = await create(body);
      expect(r.code, JSON.stringify(body)).toBe(400);
      expect(r.message).toMatch(message);
    }
    const res = await s.inject({ method: 'POST', url: '/api/admin/hook/create', headers: { authorization: admin, 'content-type': 'application/json' }, payload: JSON.stringify({ name: 'n' }) });
    expect(res.statusCode).toBe(200);

    const h = await create(httpHook('masked', { events: ['mkdir'], paths: ['/m/**'] }));
    expect(h.data.action).toEqual({ type: 'http', url: rx.url, secret: '', secret_set: true });
    expect((await create(httpHook('masked'))).message).toMatch(/a hook named "masked" exists already/);
    const listed = (await s.api('GET', '/api/admin/hook/list', { token: admin })).data.content;
    expect(JSON.stringify(listed)).not.toContain(SECRET);
    expect(JSON.stringify((await s.api('GET', `/api/admin/hook/get?id=${h.data.id}`, { token: admin })).data)).not.toContain(SECRET);
    // An update without a secret keeps the stored one.
    const up = await s.api('POST', '/api/admin/hook/update', { token: admin, body: { ...h.data, paths: ['/m2/**'] } });
    expect(up.code, up.message).toBe(200);
    expect(up.data.paths).toEqual(['/m2/**']);
    s.core.events.emit(event({ op: 'mkdir', path: '/m2/x' }));
    const hit = await until(() => rx.hits[0], 5000, 'the POST');
    expect(signedBy(hit, SECRET)).toBe(true);
    rx.hits.length = 0;
    expect((await s.api('POST', '/api/admin/hook/update', { token: admin, body: { ...h.data, id: 99999 } })).code).toBe(404);
    expect((await s.api('GET', '/api/admin/hook/get?id=99999', { token: admin })).code).toBe(404);
    expect((await s.api('GET', '/api/admin/hook/dead?id=99999', { token: admin })).code).toBe(404);
    expect((await s.api('POST', '/api/admin/hook/delete?id=99999', { token: admin })).code).toBe(404);
    // admins only
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'plain', password: 'p1', permission: 0 } })).code).toBe(200);
    const plain = await s.login('plain', 'p1');
    expect((await s.api('GET', '/api/admin/hook/list', { token: plain })).code).toBe(403);
    expect((await s.api('POST', '/api/admin/hook/create', { token: plain, body: httpHook('x') })).code).toBe(403);
    await del(h.data.id);
  });

  it('hook changes are admin events (hook_create, hook_update, hook_delete)', async () => {
    const seen: OpEvent[] = [];
    s.core.events.on((e) => seen.push(e));
    const h = await create(httpHook('audited'));
    await s.api('POST', '/api/admin/hook/update', { token: admin, body: { ...h.data, disabled: true } });
    await del(h.data.id);
    expect((await create({ name: 'bad', events: ['nope'], action: { type: 'http', url: rx.url, secret: 'x' } })).code).toBe(400);
    const mine = seen.filter((e) => e.op.startsWith('hook_')).map((e) => [e.op, e.path, e.user, e.result, e.front]);
    expect(mine).toEqual([
      ['hook_create', 'audited', 'admin', 'ok', 'api'],
      ['hook_update', 'audited', 'admin', 'ok', 'api'],
      ['hook_delete', 'audited', 'admin', 'ok', 'api'],
      ['hook_create', 'bad', 'admin', 'BadRequest', 'api'],
    ]);
  });

  it('command hooks are refused while hooks.allow_commands is off', async () => {
    const r = await create({ name: 'cmd', events: ['mkdir'], action: { type: 'command', command: [process.execPath, '-e', '0'] } });
    expect(r.code).toBe(400);
    expect(r.message).toMatch(/command actions are off: set hooks.allow_commands to true in config.json/);
  });

  it('a queued event survives a restart', async () => {
    const port = await freePort();
    const h = await create(httpHook('restart', { events: ['extract'] }, `http://127.0.0.1:${port}/in`));
    s.core.events.emit(event({ op: 'extract', path: '/a.zip', request_id: 'after-restart' }));
    // Stopped at once: the event gathered is written on the way down; the new process has it.
    s = await s.restart();
    admin = await s.login();
    let dead = { total: 0, content: [] as Array<{ id: number; event: OpEvent }> };
    for (let i = 0; i < 100 && dead.total === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      dead = await deadOf(h.data.id);
    }
    expect(dead.content.map((d) => d.event.request_id)).toEqual(['after-restart']);
    const late = await startReceiver(port);
    try {
      expect((await s.api('POST', '/api/admin/hook/resend', { token: admin, body: { ids: [dead.content[0]!.id] } })).data.resent).toBe(1);
      const hit = await until(() => late.hits[0], 5000, 'the event after the restart');
      expect(JSON.parse(hit.body.toString())).toMatchObject({ op: 'extract', request_id: 'after-restart' });
    } finally {
      await late.close();
    }
    await del(h.data.id);
  });
});

describe('command hooks (hooks.allow_commands on)', () => {
  let s: TestServer;
  let admin: string;
  const dir = path.join(os.tmpdir(), `atrium-hook-cmd-${process.pid}`);
  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!, { core: { hooks: { ...FAST.hooks, httpTimeoutMs: 300, commandTimeoutMs: 2000 } }, config: { hooks: { allow_commands: true } } });
    admin = await s.login();
    await allowPrivate(s, admin, true);
  });
  const deadOf = async (id: number) => {
    let dead = { total: 0, content: [] as Array<{ last_error: string; attempts: number }> };
    for (let i = 0; i < 200 && dead.total === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      dead = (await s.api('GET', `/api/admin/hook/dead?id=${id}`, { token: admin })).data;
    }
    return dead;
  };
  afterAll(async () => {
    await s?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs the program without a shell: the event on stdin and in ATRIUM_EVENT_* variables', async () => {
    const out = path.join(dir, 'out; echo injected.json');
    const script = `const fs=require('fs');let s='';process.stdin.on('data',c=>s+=c).on('end',()=>{fs.mkdirSync(require('path').dirname(process.argv[1]),{recursive:true});fs.writeFileSync(process.argv[1],JSON.stringify({stdin:s,env:Object.fromEntries(Object.entries(process.env).filter(([k])=>k.startsWith('ATRIUM_')))}))})`;
    const h = await s.api('POST', '/api/admin/hook/create', { token: admin, body: { name: 'cmd', events: ['move'], action: { type: 'command', command: [process.execPath, '-e', script, out] } } });
    expect(h.code, h.message).toBe(200);
    expect(h.data.action).toEqual({ type: 'command', command: [process.execPath, '-e', script, out] });
    const e = event({ op: 'move', user: 'carol', front: 'webdav', path: '/a/b.txt', dst_path: '/c/b.txt', bytes: 7, ip: '127.0.0.9', request_id: 'req-42', time: Date.UTC(2026, 0, 2, 3, 4, 5) });
    s.core.events.emit(e);
    await until(() => existsSync(out), 10_000, 'the command');
    await new Promise((r) => setTimeout(r, 100));
    const got = JSON.parse(readFileSync(out, 'utf8')) as { stdin: string; env: Record<string, string> };
    expect(JSON.parse(got.stdin)).toEqual(e);
    expect(got.env).toEqual({
      ATRIUM_EVENT_OP: 'move',
      ATRIUM_EVENT_USER: 'carol',
      ATRIUM_EVENT_PATH: '/a/b.txt',
      ATRIUM_EVENT_DST_PATH: '/c/b.txt',
      ATRIUM_EVENT_FRONT: 'webdav',
      ATRIUM_EVENT_RESULT: 'ok',
      ATRIUM_EVENT_BYTES: '7',
      ATRIUM_EVENT_TIME: '2026-01-02T03:04:05.000Z',
      ATRIUM_EVENT_IP: '127.0.0.9',
      ATRIUM_EVENT_REQUEST_ID: 'req-42',
    });
    expect(existsSync(path.join(dir, 'out'))).toBe(false);
  });

  it("a failing program's stderr is the dead letter's error", async () => {
    const h = await s.api('POST', '/api/admin/hook/create', { token: admin, body: { name: 'fails', events: ['remove'], action: { type: 'command', command: [process.execPath, '-e', 'console.error("boom: disk full"); process.exit(3)'] } } });
    expect(h.code, h.message).toBe(200);
    s.core.events.emit(event({ op: 'remove', path: '/z' }));
    let dead = { total: 0, content: [] as Array<{ last_error: string; attempts: number }> };
    for (let i = 0; i < 200 && dead.total === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      dead = (await s.api('GET', `/api/admin/hook/dead?id=${h.data.id}`, { token: admin })).data;
    }
    expect(dead.total).toBe(1);
    expect(dead.content[0]!.attempts).toBe(4);
    expect(dead.content[0]!.last_error).toMatch(/exited with code 3: boom: disk full/);
  });

  it('a program running past the timeout is killed: a failure', async () => {
    const h = await s.api('POST', '/api/admin/hook/create', { token: admin, body: { name: 'slow', events: ['copy'], action: { type: 'command', command: [process.execPath, '-e', 'setTimeout(() => {}, 60000)'] } } });
    expect(h.code, h.message).toBe(200);
    s.core.events.emit(event({ op: 'copy', path: '/slow' }));
    const dead = await deadOf(h.data.id);
    expect(dead.total).toBe(1);
    // four attempts, each killed at its 2 s limit (not run out for 60 s)
    expect(dead.content[0]!.attempts).toBe(4);
    expect(dead.content[0]!.last_error).toMatch(/did not finish within 2 s \(killed\)/);
  });

  it('a receiver that never answers fails after the timeout', async () => {
    const sockets = new Set<Socket>();
    const silent = http.createServer(() => {});
    silent.on('connection', (c) => sockets.add(c));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(silent.address() as { port: number }).port}/`;
      const h = await s.api('POST', '/api/admin/hook/create', { token: admin, body: { name: 'silent', events: ['rename'], action: { type: 'http', url, secret: 'x' } } });
      expect(h.code, h.message).toBe(200);
      s.core.events.emit(event({ op: 'rename', path: '/quiet' }));
      const dead = await deadOf(h.data.id);
      expect(dead.total).toBe(1);
      expect(dead.content[0]!.last_error).toMatch(/no answer from .* within 0.3 s/);
    } finally {
      for (const c of sockets) c.destroy();
      await new Promise((r) => silent.close(r));
    }
  });
});

describe.each(BACKENDS.map((b) => [b.name, b] as const))('hook delivery claims on %s', (_name, backend) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer(backend);
  });
  afterAll(async () => {
    await s?.destroy();
  });

  it('of two repositories claiming the same rows at once, exactly one gets each', async () => {
    // The server's own sender would take them too.
    await s.core.hooks.stop();
    const other = openDatabase(s.core.config.database);
    try {
      const a = s.core.repos.hooks;
      const b = new HooksRepo(other);
      const now = Date.now();
      await a.enqueue(Array.from({ length: 40 }, (_, i): [number, string] => [1, JSON.stringify({ n: i })]), now - 1);
      const ids = await a.due(now, 100);
      expect(ids).toHaveLength(40);
      const claims = await Promise.all(ids.flatMap((id) => [a.claim(id, 'a:1', now, now + 60_000), b.claim(id, 'b:2', now, now + 60_000)]));
      const won = claims.filter((c) => c !== undefined);
      expect(won).toHaveLength(40);
      expect(new Set(won.map((c) => c!.id)).size).toBe(40);
      // Held: nobody else can take them, and none is due.
      expect(await b.due(now, 100)).toEqual([]);
      // A claim that ran out is taken again.
      expect(await b.claim(ids[0]!, 'b:2', now + 60_001, now + 120_000)).toMatchObject({ id: ids[0], claimed_by: 'b:2' });
    } finally {
      await other.close();
    }
  });

});

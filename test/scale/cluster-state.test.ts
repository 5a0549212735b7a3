import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { openDatabase } from '../../src/db/index.js';
import { dropAll } from '../../src/db/migrations.js';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage } from '../helpers/files.js';
import { atrium, callApi, freePort, type ServerProcess, startServerProcess } from '../helpers/process.js';
import { dropRedisKeys, REDIS_URL, redisReachable } from '../helpers/redis.js';
import { countCommands } from '../helpers/redis-monitor.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { connectSftp } from '../helpers/sftp.js';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { missingPrograms, startNginxRoundRobin } from '../drivers/peers.js';
import { AUTH_CACHE_TTL_MS } from '../../src/auth/auth-cache.js';

/** On PostgreSQL and on MariaDB/MySQL; ATRIUM_TEST_CLUSTER_DB=postgres (or mysql) runs one. */
const DB_NAMES = process.env.ATRIUM_TEST_CLUSTER_DB ? [process.env.ATRIUM_TEST_CLUSTER_DB] : ['postgres', 'mysql'];
const redisUp = await redisReachable();

const PASSWORD = 'state-pass';
const BOUND_MS = 2000;
const redis = new URL(REDIS_URL);

/** Polls `holds` every 50 ms; resolves with the milliseconds it took, or fails past `ms`. */
async function within(ms: number, label: string, holds: () => Promise<boolean>): Promise<number> {
  const start = Date.now();
  for (;;) {
    if (await holds()) return Date.now() - start;
    if (Date.now() - start > ms) throw new Error(`${label} did not hold within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

for (const DB_NAME of DB_NAMES) {
  const backend = BACKENDS.find((b) => b.name === DB_NAME);
  const missing = [...(backend ? [] : [`${DB_NAME} among the test back ends`]), ...(redisUp ? [] : [`Redis at ${REDIS_URL}`])];
  if (missing.length && process.env.CI) throw new Error(`CI needs ${missing.join(' and ')}, which does not answer`);
  if (missing.length) console.warn(`\n*** SKIPPING cluster state tests on ${DB_NAME}: no ${missing.join(', no ')} ***\n`);

  /**
   * Two `atrium server` processes on one database and Redis; B reaches Redis through a TCP proxy
   * the test cuts. Changes made on A must hold on B within 2 s whatever happens to B's Redis link:
   * the state versions in the database bound the staleness (cluster/staleness.ts).
   */
  describe.skipIf(missing.length > 0)(`shared state on ${DB_NAME} across a Redis outage`, () => {
    const tablePrefix = `cs${randomBytes(4).toString('hex')}_`;
    const keyPrefix = `atrium-test:${randomBytes(4).toString('hex')}:`;
    let root: string;
    const dirs: string[] = [];
    const ports: number[] = [];
    let sftpPort: number;
    const procs: ServerProcess[] = [];
    let proxy: TcpProxy;
    let admin: string;
    let extraId: number;
    const measured: Record<string, number> = {};

    const base = (i: number) => `http://127.0.0.1:${ports[i]}`;
    const api = (i: number, method: string, route: string, token?: string, body?: unknown) => callApi(base(i), method, route, { token, body });
    const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
    const dav = (i: number, p: string, user = 'norm', pass = 'n1') => fetch(`${base(i)}/dav${p}`, { headers: { authorization: basic(user, pass) } });
    const login = async (i: number, username: string, password: string) => {
      const r = await api(i, 'POST', '/api/auth/login', undefined, { username, password });
      expect(r.code, r.message).toBe(200);
      return r.data.token as string;
    };

    beforeAll(async () => {
      root = mkdtempSync(path.join(os.tmpdir(), 'atrium-cstate-'));
      proxy = await startTcpProxy(redis.hostname, Number(redis.port || 6379));
      const jwt = randomBytes(12).toString('hex');
      sftpPort = await freePort();
      for (const [i, name] of ['a', 'b'].entries()) {
        const dir = path.join(root, name);
        mkdirSync(dir);
        const url = i === 1 ? `redis://127.0.0.1:${proxy.port}` : REDIS_URL;
        const sftp = i === 1 ? { sftp: { enable: true, listen: `127.0.0.1:${sftpPort}` } } : {};
        const config = { jwt_secret: jwt, database: backend!.database(tablePrefix, dir), redis: { url, key_prefix: keyPrefix }, log: { enable: false }, ...sftp };
        writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config));
        dirs.push(dir);
        ports.push(await freePort());
      }
      await atrium('admin', 'set', PASSWORD, '--data', dirs[0]!);
      for (let i = 0; i < 2; i++) procs[i] = await startServerProcess(dirs[i]!, ports[i]!, { timeoutMs: 90_000 });
      admin = await login(0, 'admin', PASSWORD);
      const files = path.join(root, 'files');
      mkdirSync(path.join(files, 'secret'), { recursive: true });
      mkdirSync(path.join(files, 'pub'));
      writeFileSync(path.join(files, 'secret/s.txt'), 'secret bytes');
      writeFileSync(path.join(files, 'pub/p.txt'), 'public bytes');
      const extra = path.join(root, 'extra');
      mkdirSync(extra);
      writeFileSync(path.join(extra, 'e.txt'), 'extra bytes');
      expect((await api(0, 'POST', '/api/admin/storage/create', admin, localStorage('/shared', files))).code).toBe(200);
      const created = await api(0, 'POST', '/api/admin/storage/create', admin, localStorage('/extra', extra));
      expect(created.code, created.message).toBe(200);
      extraId = created.data.id;
      // bits: WebDAV read (256)
      expect((await api(0, 'POST', '/api/admin/user/create', admin, { username: 'norm', password: 'n1', permission: 256, base_path: '/' })).code).toBe(200);
      await within(5000, 'the storages on B', async () => (await dav(1, '/extra/e.txt')).status === 200);
    }, 180_000);

    // A test that failed with Redis cut off (or B paused) leaves neither to the next one.
    afterEach(() => {
      proxy?.restore();
      procs[1]?.child.kill('SIGCONT');
    });

    afterAll(async () => {
      console.log(`staleness measured on the cut-off process (ms): ${JSON.stringify(measured)}`);
      await Promise.allSettled(procs.map((p) => p.stop()));
      await proxy?.close();
      const handle = openDatabase(loadConfig(dirs[0]!, {}).config.database);
      await dropAll(handle).catch(() => {});
      await handle.close();
      await dropRedisKeys(keyPrefix);
      rmSync(root, { recursive: true, force: true });
    }, 30_000);

    it('while B has no Redis, a folder password, a setting and a disabled storage made on A hold on B within 2 s (API, /d, WebDAV)', async () => {
      const norm = await login(1, 'norm', 'n1');
      expect((await api(1, 'POST', '/api/fs/get', norm, { path: '/shared/secret/s.txt' })).code).toBe(200);
      expect((await dav(1, '/shared/secret/s.txt')).status).toBe(200);
      expect((await fetch(`${base(1)}/d/shared/pub/p.txt`)).status).not.toBe(200); // sign_all is on
      // A storage whose listings are cached with no validator to notice a change (WebDAV, 30 min;
      // Local ones here cache nothing): it reads /shared/pub through A's own WebDAV.
      const wd = { mount_path: '/wd', driver: 'WebDav', order: 0, cache_expiration: 30, addition: JSON.stringify({ vendor: 'other', address: `${base(0)}/dav`, username: 'admin', password: PASSWORD, root_folder_path: '/shared/pub' }) };
      const made = await api(0, 'POST', '/api/admin/storage/create', admin, wd);
      expect(made.code, made.message).toBe(200);
      const listB = async () => {
        const r = await api(1, 'POST', '/api/fs/list', admin, { path: '/wd' });
        return r.code === 200 ? (r.data.content as Array<{ name: string }>).map((o) => o.name) : [];
      };
      await within(5000, 'the WebDAV storage on B', async () => (await listB()).includes('p.txt'));
      expect(await listB()).not.toContain('during-outage.txt'); // now cached on B
      proxy.cut();
      await new Promise((r) => setTimeout(r, 500));
      // A write on A while B cannot hear its invalidation: B reads the folder from the storage
      // while its bus is down (its cached listing is not used).
      const put = await fetch(`${base(0)}/api/fs/put`, { method: 'PUT', headers: { authorization: admin, 'file-path': encodeURIComponent('/wd/during-outage.txt'), 'content-type': 'text/plain' }, body: 'x' });
      expect(((await put.json()) as { code: number }).code).toBe(200);
      expect(await listB()).toContain('during-outage.txt');

      const meta = await api(0, 'POST', '/api/admin/meta/create', admin, { path: '/shared/secret', password: 'pw', p_sub: true });
      expect(meta.code, meta.message).toBe(200);
      const t1 = Date.now();
      expect((await api(0, 'POST', '/api/admin/setting/save', admin, [{ key: 'sign_all', value: 'false' }])).code).toBe(200);
      const t2 = Date.now();
      expect((await api(0, 'POST', `/api/admin/storage/disable?id=${extraId}`, admin)).code).toBe(200);
      const t3 = Date.now();

      await within(BOUND_MS, 'the folder password on B (API)', async () => (await api(1, 'POST', '/api/fs/get', norm, { path: '/shared/secret/s.txt' })).code === 403);
      measured.metas = Date.now() - t1;
      expect([401, 403]).toContain((await dav(1, '/shared/secret/s.txt')).status);
      await within(BOUND_MS - (Date.now() - t2), 'sign_all off on B (/d)', async () => (await fetch(`${base(1)}/d/shared/pub/p.txt`)).status === 200);
      measured.settings = Date.now() - t2;
      expect(await (await fetch(`${base(1)}/d/shared/pub/p.txt`)).text()).toBe('public bytes');
      await within(BOUND_MS - (Date.now() - t3), 'the disabled storage on B (WebDAV)', async () => (await dav(1, '/extra/e.txt')).status === 404);
      measured.storages = Date.now() - t3;
      const listed = await api(1, 'POST', '/api/fs/list', admin, { path: '/' });
      expect(listed.data.content.map((o: { name: string }) => o.name)).not.toContain('extra');
      for (const ms of [measured.metas!, measured.settings!, measured.storages!]) expect(ms).toBeLessThan(BOUND_MS);

      // Redis back: pub/sub carries changes again (the enable shows on B at once).
      proxy.restore();
      await new Promise((r) => setTimeout(r, 1500));
      // the listing B cached before the cut (without the file) is gone, not trusted again
      expect(await listB()).toContain('during-outage.txt');
      expect((await api(0, 'POST', `/api/admin/storage/enable?id=${extraId}`, admin)).code).toBe(200);
      const t4 = Date.now();
      await within(BOUND_MS, 'the enabled storage on B', async () => (await dav(1, '/extra/e.txt')).status === 200);
      measured.storagesAfterReconnect = Date.now() - t4;
      expect(await (await dav(1, '/extra/e.txt')).text()).toBe('extra bytes');
      // and pub/sub carries invalidations again
      expect((await api(0, 'POST', '/api/fs/remove', admin, { dir: '/wd', names: ['during-outage.txt'] })).code).toBe(200);
      await within(BOUND_MS, 'the removal on B', async () => !(await listB()).includes('during-outage.txt'));
    }, 60_000);

    it('a message lost in a Redis restart (the proxy drops every connection) holds on B within 2 s', async () => {
      const title = `after-restart-${randomBytes(3).toString('hex')}`;
      proxy.cut();
      expect((await api(0, 'POST', '/api/admin/setting/save', admin, [{ key: 'site_title', value: title }])).code).toBe(200);
      const t = Date.now();
      proxy.restore();
      await within(BOUND_MS, 'the title on B', async () => (await api(1, 'GET', '/api/public/settings')).data.site_title === title);
      measured.restart = Date.now() - t;
    }, 30_000);

    it('a process paused while the change was made decides on the new state at its first request', async () => {
      const title = `after-pause-${randomBytes(3).toString('hex')}`;
      proxy.cut();
      procs[1]!.child.kill('SIGSTOP');
      try {
        await new Promise((r) => setTimeout(r, 2000));
        expect((await api(0, 'POST', '/api/admin/setting/save', admin, [{ key: 'site_title', value: title }])).code).toBe(200);
      } finally {
        procs[1]!.child.kill('SIGCONT');
      }
      try {
        expect((await api(1, 'GET', '/api/public/settings')).data.site_title).toBe(title);
      } finally {
        proxy.restore();
      }
      await new Promise((r) => setTimeout(r, 1500)); // B's Redis connections are back
    }, 30_000);

    it('a WebDAV lock taken on A refuses an API PUT, a WebDAV PUT without its token and an SFTP write on B, until it is released', async () => {
      const adminDav = (i: number, method: string, p: string, headers: Record<string, string> = {}, body?: string) =>
        fetch(`${base(i)}/dav${p}`, { method, headers: { authorization: basic('admin', PASSWORD), ...headers }, body });
      const lockBody = '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>t</D:owner></D:lockinfo>';
      const locked = await adminDav(0, 'LOCK', '/shared/pub/p.txt', { depth: '0', timeout: 'Second-600', 'content-type': 'application/xml' }, lockBody);
      expect(locked.status).toBe(200);
      const token = locked.headers.get('lock-token')!.replace(/^<|>$/g, '');
      expect(token).toMatch(/^opaquelocktoken:/);

      const put = await fetch(`${base(1)}/api/fs/put`, { method: 'PUT', headers: { authorization: admin, 'file-path': encodeURIComponent('/shared/pub/p.txt'), 'content-type': 'text/plain' }, body: 'overwritten' });
      const env = (await put.json()) as { code: number; message: string };
      expect(env.code).toBe(403);
      expect(env.message).toBe('file is locked');
      expect((await adminDav(1, 'PUT', '/shared/pub/p.txt', {}, 'overwritten')).status).toBe(423);
      const session = await connectSftp(sftpPort, { username: 'admin', password: PASSWORD });
      try {
        const err = await new Promise<Error | undefined>((resolve) => session.sftp.writeFile('/shared/pub/p.txt', 'overwritten', (e) => resolve(e ?? undefined)));
        expect(err?.message).toMatch(/locked|denied/i);
        const rm = await new Promise<Error | undefined>((resolve) => session.sftp.unlink('/shared/pub/p.txt', (e) => resolve(e ?? undefined)));
        expect(rm).toBeDefined();
      } finally {
        session.end();
      }
      expect(await (await dav(1, '/shared/pub/p.txt')).text()).toBe('public bytes');

      // The holder's token works on B; UNLOCK on B frees the file everywhere.
      expect((await adminDav(1, 'PUT', '/shared/pub/p.txt', { if: `(<${token}>)` }, 'by the holder')).status).toBe(201);
      expect((await adminDav(1, 'UNLOCK', '/shared/pub/p.txt', { 'lock-token': `<${token}>` })).status).toBe(204);
      const again = await fetch(`${base(0)}/api/fs/put`, { method: 'PUT', headers: { authorization: admin, 'file-path': encodeURIComponent('/shared/pub/p.txt'), 'content-type': 'text/plain' }, body: 'public bytes' });
      expect(((await again.json()) as { code: number }).code).toBe(200);
      expect(await (await dav(1, '/shared/pub/p.txt')).text()).toBe('public bytes');
    }, 30_000);

    it.skipIf(missingPrograms('litmus through round-robin nginx', 'litmus', 'nginx') !== undefined)('litmus locks passes 41/41 through a round-robin nginx over both processes', async () => {
      const work = path.join(root, 'litmus');
      mkdirSync(work);
      expect((await api(0, 'POST', '/api/admin/storage/create', admin, localStorage('/lit', work))).code).toBe(200);
      const user = { username: 'litmus', password: 'litmus-pass', permission: 256 | 512 | 8 | 16 | 32 | 64 | 128 };
      expect((await api(0, 'POST', '/api/admin/user/create', admin, user)).code).toBe(200);
      const propfind = (i: number) => fetch(`${base(i)}/dav/lit/`, { method: 'PROPFIND', headers: { depth: '0', authorization: basic('litmus', 'litmus-pass') } });
      await within(5000, 'the storage on B', async () => (await propfind(1)).status === 207);
      const nginx = await startNginxRoundRobin([`127.0.0.1:${ports[0]}`, `127.0.0.1:${ports[1]}`]);
      try {
        const { stdout } = await promisify(execFile)('litmus', ['-k', `${nginx.base}/dav/lit/`, 'litmus', 'litmus-pass'], {
          env: { ...process.env, TESTS: 'locks' },
          cwd: mkdtempSync(path.join(root, 'litmus-logs-')),
          timeout: 90_000,
        }).catch((err: { stdout?: string; message: string }) => ({ stdout: err.stdout ?? err.message }));
        expect(stdout, stdout).toMatch(/summary for `locks': of 41 tests run: 41 passed/);
      } finally {
        await nginx.stop();
      }
    }, 120_000);

    it('a share visitor is counted once per address across processes; refused downloads answer 404 with OpenList\'s message', async () => {
      const made = await api(0, 'POST', '/api/share/create', admin, { files: ['/shared/pub'], pwd: '', remark: '', max_accessed: 2, expires: null });
      expect(made.code, made.message).toBe(200);
      const id = made.data.id as string;
      for (const i of [0, 1, 0, 1]) {
        const r = await fetch(`${base(i)}/sd/${id}/p.txt`);
        expect(r.status).toBe(200);
        expect(await r.text()).toBe('public bytes');
      }
      expect((await api(0, 'GET', `/api/share/get?id=${id}`, admin)).data.accessed).toBe(1);
      expect((await api(0, 'POST', `/api/share/disable?id=${id}`, admin)).code).toBe(200);
      const off = await fetch(`${base(1)}/sd/${id}/p.txt`);
      expect(off.status).toBe(404);
      expect(await off.text()).toContain('the share has expired or is no longer valid');
      expect((await api(0, 'POST', `/api/share/delete?id=${id}`, admin)).code).toBe(200);
      const gone = await fetch(`${base(1)}/sd/${id}/p.txt`, { headers: { accept: 'application/json' } });
      expect(gone.status).toBe(404);
      expect(await gone.json()).toEqual({ code: 500, message: 'the share does not exist', data: null });
    }, 30_000);

    it('steady state: what a request costs in database queries and Redis commands (printed for docs/cluster.md)', async () => {
      expect((await api(0, 'POST', '/api/admin/setting/save', admin, [{ key: 'metrics_token', value: 'mtok' }])).code).toBe(200);
      await within(BOUND_MS, 'the metrics token on B', async () => (await fetch(`${base(1)}/metrics`, { headers: { authorization: 'Bearer mtok' } })).status === 200);
      const metricsQueries = async () => Number(/^atrium_db_queries_total (\d+)/m.exec(await (await fetch(`${base(1)}/metrics`, { headers: { authorization: 'Bearer mtok' } })).text())![1]);
      // A /metrics read counts the tasks of each kind (a few queries): its own cost, measured
      // back to back and taken off each reading, so the figures are the requests' alone.
      const probeCost = -(await metricsQueries()) + (await metricsQueries());
      let probes = 0;
      const dbQueries = async () => (await metricsQueries()) - probeCost * ++probes;
      // Redis commands of this cluster only: the machine's Redis serves every test file running at
      // the same time, so the server-wide INFO counters are not this cluster's. MONITOR shows each
      // command with its arguments; ours name a key or channel under the cluster's prefix. BullMQ's
      // own pollers (keys under `bull:`, a burst every 30 s per queue, whatever the traffic) are left out.
      // Commands under the cluster's key prefix (test/helpers/redis-monitor.ts).
      const commands = await countCommands(REDIS_URL, keyPrefix);
      const redisCalls = () => commands.counted();
      const token = await login(1, 'admin', PASSWORD);
      const N = 100;
      const run = async (what: () => Promise<unknown>) => {
        const [q0, r0, t0] = [await dbQueries(), await redisCalls(), Date.now()];
        for (let n = 0; n < N; n++) await what();
        const ms = Date.now() - t0;
        // the probes themselves: their /metrics queries are taken off (probeCost) and the markers not counted
        return { queries: (await dbQueries()) - q0, redis: (await redisCalls()) - r0, ms };
      };
      try {
        // The background rate over ~2.5 s of nothing: a shorter window can hold no staleness check at all (0 queries).
        const idle = await run(() => new Promise((r) => setTimeout(r, 25)));
        const listing = await run(() => api(1, 'POST', '/api/fs/list', token, { path: '/shared/pub' }));
        const raw = await run(() => fetch(`${base(1)}/d/shared/pub/p.txt`).then((r) => r.arrayBuffer()));
        const webdav = await run(() => dav(1, '/shared/pub/p.txt', 'admin', PASSWORD).then((r) => r.arrayBuffer()));
        console.log(`steady-state costs for ${N} requests on B: ${JSON.stringify({ idle, listing, raw, webdav })}`);
        // The background rate (the staleness check once a second) and no
        // query or Redis command per API or /d request; WebDAV reads the live locks (one query) and
        // the login throttle (Redis) at each request, as its Basic auth is checked every time.
        // ... and B reads the caller's session, user and group memberships again once its cached
        // copy is AUTH_CACHE_TTL_MS old: a count that grows with the run's wall time, not with the requests.
        const background = (c: { ms: number }) => (idle.queries / idle.ms) * c.ms * 1.5 + 4 + 3 * Math.ceil(c.ms / AUTH_CACHE_TTL_MS);
          for (const c of [listing, raw]) {
          expect(c.queries).toBeLessThanOrEqual(background(c) + N / 10);
          expect(c.redis).toBeLessThanOrEqual(N / 2);
        }
        expect(webdav.queries).toBeLessThanOrEqual(N + background(webdav));
      } finally {
        commands.close();
      }
    }, 60_000);

    // Last: it locks 127.0.0.1 (every request of this test) on both processes for 5 minutes.
    it('the login throttle counts failures from one address on every process and every front (API and WebDAV)', async () => {
      for (let n = 0; n < 3; n++) {
        const r = await api(0, 'POST', '/api/auth/login', undefined, { username: 'norm', password: 'wrong' });
        expect(r.code).toBe(400);
      }
      expect((await dav(1, '/shared/pub/p.txt', 'norm', 'wrong')).status).toBe(401);
      expect((await dav(0, '/shared/pub/p.txt', 'norm', 'wrong')).status).toBe(401);
      // five failures in all, on two processes and two fronts: the right password is refused everywhere
      const onB = await api(1, 'POST', '/api/auth/login', undefined, { username: 'norm', password: 'n1' });
      expect(onB.code).toBe(429);
      expect(onB.message).toMatch(/Too many unsuccessful sign-in attempts/);
      expect((await dav(0, '/shared/pub/p.txt')).status).toBe(429);
      expect((await dav(1, '/shared/pub/p.txt')).status).toBe(429);
      // B cut off from Redis (its own count for this address is 1): the database's count, which
      // every process wrote beside Redis's, still refuses — an outage is no way around the lock.
      proxy.cut();
      try {
        await new Promise((r) => setTimeout(r, 300));
        const cut = await api(1, 'POST', '/api/auth/login', undefined, { username: 'norm', password: 'n1' });
        expect(cut.code, cut.message).toBe(429);
        expect((await dav(1, '/shared/pub/p.txt')).status).toBe(429);
      } finally {
        proxy.restore();
      }
    }, 30_000);
  });
}

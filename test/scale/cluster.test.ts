import { createHash, randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, utimesSync, writeFileSync, writeSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { openDatabase } from '../../src/db/index.js';
import { dropAll } from '../../src/db/migrations.js';
import { BACKENDS } from '../helpers/backends.js';
import { type FileServer, startFileServer } from '../helpers/file-server.js';
import { localStorage } from '../helpers/files.js';
import { atrium, callApi, freePort, type ServerProcess, startServerProcess } from '../helpers/process.js';
import { dropRedisKeys, REDIS_URL, redisReachable } from '../helpers/redis.js';
import { countCommands } from '../helpers/redis-monitor.js';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { missingPrograms, startNginxRoundRobin } from '../drivers/peers.js';
import { AUTH_CACHE_TTL_MS } from '../../src/auth/auth-cache.js';

/** On PostgreSQL and on MariaDB/MySQL; ATRIUM_TEST_CLUSTER_DB=postgres (or mysql) runs one. */
const DB_NAMES = process.env.ATRIUM_TEST_CLUSTER_DB ? [process.env.ATRIUM_TEST_CLUSTER_DB] : ['postgres', 'mysql'];
const redisUp = await redisReachable();

const PASSWORD = 'cluster-pass';
/** Three processes starting while the whole suite runs on a shared 2-core machine can be slow. */
const START = { timeoutMs: 90_000 };
const SIZE = 48 * 1024 * 1024;

const waitFor = async <T>(what: () => Promise<T | undefined>, ms: number, label = 'condition'): Promise<T> => {
  const end = Date.now() + ms;
  for (;;) {
    const v = await what();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${label}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

for (const DB_NAME of DB_NAMES) {
  const backend = BACKENDS.find((b) => b.name === DB_NAME);
  const missing = [
    // BACKENDS has already warned (or, under CI, failed) when the database server does not answer.
    ...(backend ? [] : [`${DB_NAME} among the test back ends`]),
    ...(redisUp ? [] : [`Redis at ${REDIS_URL}`]),
  ];
  if (missing.length && process.env.CI) throw new Error(`CI needs ${missing.join(' and ')}, which does not answer`);
  if (missing.length) console.warn(`\n*** SKIPPING cluster tests on ${DB_NAME}: no ${missing.join(', no ')} ***\n`);

  /**
   * Three real `atrium server` processes on loopback share one database table prefix and one
   * Redis key prefix; every point of the scale-out issue is checked across them.
   */
  describe.skipIf(missing.length > 0)(`several processes on ${DB_NAME} + Redis`, () => {
    const tablePrefix = `cl${randomBytes(4).toString('hex')}_`;
    const keyPrefix = `atrium-test:${randomBytes(4).toString('hex')}:`;
    let root: string;
    const dirs: string[] = [];
    const ports: number[] = [];
    const procs: Array<ServerProcess | undefined> = [];
    let web: FileServer;
    let digest: string;

    const base = (i: number) => `http://127.0.0.1:${ports[i]}`;
    const api = (i: number, method: string, route: string, token?: string, body?: unknown) => callApi(base(i), method, route, { token, body });
    const login = async (i: number, username = 'admin', password = PASSWORD) => {
      const r = await api(i, 'POST', '/api/auth/login', undefined, { username, password });
      expect(r.code, r.message).toBe(200);
      return r.data.token as string;
    };
    const names = async (i: number, token: string, p: string) => {
      const r = await api(i, 'POST', '/api/fs/list', token, { path: p });
      expect(r.code, r.message).toBe(200);
      return (r.data.content ?? []).map((o: { name: string }) => o.name) as string[];
    };

    beforeAll(async () => {
      root = mkdtempSync(path.join(os.tmpdir(), 'atrium-cluster-'));
      const jwt = randomBytes(12).toString('hex');
      for (const name of ['a', 'b', 'c']) {
        const dir = path.join(root, name);
        mkdirSync(dir);
        const config = {
          jwt_secret: jwt,
          database: backend!.database(tablePrefix, dir),
          redis: { url: REDIS_URL, key_prefix: keyPrefix },
          log: { enable: false },
        };
        writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config));
        dirs.push(dir);
        ports.push(await freePort());
      }
      await atrium('admin', 'set', PASSWORD, '--data', dirs[0]!);
      for (let i = 0; i < 3; i++) procs[i] = await startServerProcess(dirs[i]!, ports[i]!, START);

      const source = path.join(root, 'source.bin');
      const fd = openSync(source, 'w');
      const block = randomBytes(1024 * 1024);
      for (let i = 0; i < SIZE / block.length; i++) {
        block.writeUInt32BE(i, 0);
        writeSync(fd, block);
      }
      closeSync(fd);
      digest = createHash('sha256').update(readFileSync(source)).digest('hex');
      // About 6 s in all: slow enough to kill the process running it mid-way.
      web = await startFileServer({ files: { '/big.bin': { file: source, etag: '"big-1"' } }, rate: 8 * 1024 * 1024 });
    }, 300_000);

    afterAll(async () => {
      await Promise.allSettled(procs.map((p) => p?.stop()));
      await web?.close();
      const handle = openDatabase(loadConfig(dirs[0]!, {}).config.database);
      await dropAll(handle).catch(() => {});
      await handle.close();
      await dropRedisKeys(keyPrefix);
      rmSync(root, { recursive: true, force: true });
    }, 30_000);

    it('a token issued by one process works on the others; a storage created on A is mounted on B and C', async () => {
      const tokenA = await login(0);
      expect((await api(1, 'GET', '/api/me', tokenA)).data.username).toBe('admin');
      const shared = path.join(root, 'shared');
      mkdirSync(path.join(shared, 'docs'), { recursive: true });
      writeFileSync(path.join(shared, 'docs/one.txt'), 'one');
      const created = await api(0, 'POST', '/api/admin/storage/create', tokenA, localStorage('/shared', shared, { cache_expiration: 30 }));
      expect(created.code, created.message).toBe(200);
      for (const i of [1, 2]) {
        await waitFor(async () => ((await names(i, tokenA, '/')).includes('shared') ? true : undefined), 5000, `the storage on process ${i}`);
        expect(await names(i, tokenA, '/shared/docs')).toEqual(['one.txt']);
        const row = (await api(i, 'GET', `/api/admin/storage/get?id=${created.data.id}`, tokenA)).data;
        expect(row.status).toBe('work');
      }

      // Moved on A: B serves the new mount path, not the old one.
      const row = (await api(0, 'GET', `/api/admin/storage/get?id=${created.data.id}`, tokenA)).data;
      expect((await api(0, 'POST', '/api/admin/storage/update', tokenA, { ...row, mount_path: '/team' })).code).toBe(200);
      await waitFor(async () => ((await names(1, tokenA, '/')).includes('team') ? true : undefined), 5000, 'the moved storage on B');
      expect(await names(1, tokenA, '/')).not.toContain('shared');
    });

    it('a write on A drops the cached listing on B at once', async () => {
      const token = await login(1);
      const folder = path.join(root, 'shared/docs');
      // The Local driver checks a folder's mtime; pinning it makes B depend on the invalidation
      // alone, as it would for a storage without such a check.
      const pinned = new Date('2026-01-01T00:00:00Z');
      utimesSync(folder, pinned, pinned);
      expect(await names(1, token, '/team/docs')).toEqual(['one.txt']);
      // Outside Atrium: nobody invalidates, so B's cached listing stays as it was.
      writeFileSync(path.join(folder, 'outside.txt'), 'x');
      utimesSync(folder, pinned, pinned);
      expect(await names(1, token, '/team/docs')).toEqual(['one.txt']);

      const put = await fetch(`${base(0)}/api/fs/put`, {
        method: 'PUT',
        headers: { authorization: token, 'file-path': encodeURIComponent('/team/docs/two.txt'), 'content-length': '3' },
        body: 'two',
      });
      expect(((await put.json()) as { code: number }).code).toBe(200);
      utimesSync(folder, pinned, pinned);
      await waitFor(async () => ((await names(1, token, '/team/docs')).includes('two.txt') ? true : undefined), 2000, 'the fresh listing on B');
      expect(await names(1, token, '/team/docs')).toEqual(['one.txt', 'outside.txt', 'two.txt']);
      expect(await names(2, token, '/team/docs')).toEqual(['one.txt', 'outside.txt', 'two.txt']);
    });

    it('settings, path rules and users changed on one process hold on the others', async () => {
      const admin = await login(0);
      const title = `Cluster ${randomBytes(3).toString('hex')}`;
      expect((await api(0, 'POST', '/api/admin/setting/save', admin, [{ key: 'site_title', value: title }])).code).toBe(200);
      for (const i of [1, 2]) {
        await waitFor(async () => ((await api(i, 'GET', '/api/public/settings')).data.site_title === title ? true : undefined), 3000, `the setting on process ${i}`);
      }

      expect((await api(0, 'POST', '/api/admin/user/create', admin, { username: 'erin', password: 'e1', permission: 8 })).code).toBe(200);
      const erin = await login(2, 'erin', 'e1');
      expect(await names(2, erin, '/team/docs')).toContain('two.txt');
      const meta = await api(1, 'POST', '/api/admin/meta/create', admin, { path: '/team/docs', hide: '^two\\.txt$' });
      expect(meta.code, meta.message).toBe(200);
      for (const i of [0, 2]) {
        await waitFor(async () => ((await names(i, erin, '/team/docs')).includes('two.txt') ? undefined : true), 3000, `the rule on process ${i}`);
        expect(await names(i, erin, '/team/docs')).toEqual(['one.txt', 'outside.txt']);
      }
    });

    it('logout and a password change on one process end the sessions on all', async () => {
      const admin = await login(0);
      const t1 = await login(0, 'erin', 'e1');
      expect((await api(1, 'GET', '/api/me', t1)).code).toBe(200);
      expect((await api(0, 'GET', '/api/auth/logout', t1)).code).toBe(200);
      expect(await api(1, 'GET', '/api/me', t1)).toMatchObject({ code: 401, message: 'token is invalidated' });
      expect((await api(2, 'GET', '/api/me', t1)).code).toBe(401);

      const t2 = await login(2, 'erin', 'e1');
      expect((await api(1, 'GET', '/api/me', t2)).code).toBe(200);
      const users = (await api(1, 'GET', '/api/admin/user/list', admin)).data.content;
      const erin = users.find((u: { username: string }) => u.username === 'erin');
      expect((await api(1, 'POST', '/api/admin/user/update', admin, { ...erin, password: 'e2' })).code).toBe(200);
      for (const i of [0, 1, 2]) expect((await api(i, 'GET', '/api/me', t2)).code).toBe(401);
      expect((await api(0, 'POST', '/api/auth/login', undefined, { username: 'erin', password: 'e1' })).code).toBe(400);
      await login(2, 'erin', 'e2');
    });

    it('the search index (database tables) built on A answers on B and follows a write on C', async (ctx) => {
      const admin = await login(0);
      const search = (i: number, keywords: string) => api(i, 'POST', '/api/fs/search', admin, { keywords, page: 1, per_page: 100 });
      const probe = await search(1, 'one');
      if (probe.code === 404 && /^route /.test(probe.message)) {
        console.warn('\n*** SKIPPING cross-process search: this build has no /api/fs/search (the search issue is not merged) ***\n');
        ctx.skip();
      }
      const saved = await api(0, 'POST', '/api/admin/setting/save', admin, [{ key: 'search_index', value: 'database' }, { key: 'auto_update_index', value: 'true' }]);
      expect(saved.code, saved.message).toBe(200);
      await waitFor(async () => ((await search(2, 'one')).message === 'search not available' ? undefined : true), 3000, 'the search setting on C');
      expect((await api(0, 'POST', '/api/admin/index/build', admin)).code).toBe(200);
      await waitFor(async () => ((await api(1, 'GET', '/api/admin/index/progress', admin)).data?.is_done ? true : undefined), 30_000, 'the index build');
      const where = (r: { data: { content: Array<{ parent: string; name: string }> } }) => r.data.content.map((h) => `${h.parent}/${h.name}`);
      expect(where(await search(1, 'one.txt'))).toContain('/team/docs/one.txt');
      const put = await fetch(`${base(2)}/api/fs/put`, {
        method: 'PUT',
        headers: { authorization: admin, 'file-path': encodeURIComponent('/team/docs/findme-cluster.txt'), 'content-length': '1' },
        body: 'f',
      });
      expect(((await put.json()) as { code: number }).code).toBe(200);
      await waitFor(async () => (where(await search(0, 'findme-cluster')).includes('/team/docs/findme-cluster.txt') ? true : undefined), 10_000, 'the new file in the index');
    });

    /**
     * Saved on A, the setting reaches B and C over the bus a moment later; a task queued at once
     * could be taken by a process that has not heard of it yet. Wait until each one reads it.
     */
    async function allowPrivateDownloadsEverywhere(admin: string): Promise<void> {
      expect((await api(0, 'POST', '/api/admin/setting/save', admin, [{ key: 'offline_download_allow_private', value: 'true' }])).code).toBe(200);
      for (const i of [0, 1, 2]) {
        await waitFor(async () => {
          const item = await api(i, 'GET', '/api/admin/setting/get?key=offline_download_allow_private', admin);
          return item.data?.value === 'true' ? true : undefined;
        }, 3000, `the setting on process ${i}`);
      }
    }

    it('tasks are listed by every process; cancel and delete work from a process not running the task', async () => {
      const admin = await login(0);
      await allowPrivateDownloadsEverywhere(admin);
      const added = await api(0, 'POST', '/api/fs/add_offline_download', admin, { urls: [`${web.base}/big.bin`], path: '/team/canceled', tool: 'SimpleHttp', delete_policy: 'delete_always' });
      expect(added.code, added.message).toBe(200);
      const id = added.data.tasks[0].id as string;
      for (const i of [0, 1, 2]) {
        const undone = (await api(i, 'GET', '/api/admin/task/offline_download/undone', admin)).data as Array<{ id: string }>;
        expect(undone.map((t) => t.id)).toContain(id);
      }
      await waitFor(async () => ((await api(2, 'POST', `/api/admin/task/offline_download/info?tid=${id}`, admin)).data?.state === 1 ? true : undefined), 20_000, 'the download to run');
      // Canceled through C and through B in turn: whichever runs it gets the message.
      expect((await api(2, 'POST', `/api/admin/task/offline_download/cancel?tid=${id}`, admin)).code).toBe(200);
      const canceled = await waitFor(async () => {
        const info = (await api(1, 'POST', `/api/admin/task/offline_download/info?tid=${id}`, admin)).data;
        return info?.state === 4 ? info : undefined;
      }, 10_000, 'the cancel');
      expect(canceled).toMatchObject({ state: 4, error: 'context canceled' });
      expect(existsSync(path.join(root, 'shared/canceled/big.bin'))).toBe(false);
      expect((await api(1, 'POST', `/api/admin/task/offline_download/delete?tid=${id}`, admin)).code).toBe(200);
      for (const i of [0, 1, 2]) {
        expect((await api(i, 'POST', `/api/admin/task/offline_download/info?tid=${id}`, admin)).code).toBe(404);
      }
    });

    it('a share deleted or disabled on A is refused on B at once', async () => {
      const token = await login(0);
      const dir = path.join(root, 'share-src');
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, 'note.txt'), 'shared note');
      expect((await api(0, 'POST', '/api/admin/storage/create', token, localStorage('/sharecl', dir))).code).toBe(200);
      await waitFor(async () => ((await names(1, token, '/')).includes('sharecl') ? true : undefined), 5000, 'the storage on B');
      const created = await api(0, 'POST', '/api/share/create', token, { files: ['/sharecl/note.txt'] });
      expect(created.code, created.message).toBe(200);
      const sid = created.data.id as string;
      // A refusal is OpenList's error page with a real status; asking for JSON gives the envelope.
      const download = (i: number) => fetch(`${base(i)}/sd/${sid}`, { headers: { accept: 'application/json' } }).then(async (r) => r.text());
      expect(await download(1)).toBe('shared note');
      expect((await api(0, 'POST', `/api/share/disable?id=${sid}`, token)).code).toBe(200);
      expect(JSON.parse(await download(1)).message).toBe('the share has expired or is no longer valid');
      expect((await api(2, 'POST', `/api/share/enable?id=${sid}`, token)).code).toBe(200);
      expect(await download(1)).toBe('shared note');
      expect((await api(0, 'POST', `/api/share/delete?id=${sid}`, token)).code).toBe(200);
      // No wait: B and C read the share from the shared database on every request.
      for (const i of [1, 2]) expect(JSON.parse(await download(i)).message).toBe('the share does not exist');
      expect((await api(1, 'POST', '/api/fs/list', undefined, { path: `/@s/${sid}` })).message).toBe('the share does not exist');

      // A download already running on B is cut when A deletes its share.
      const big = 32 * 1024 * 1024;
      writeFileSync(path.join(dir, 'big.bin'), Buffer.alloc(big, 3));
      const second = await api(0, 'POST', '/api/share/create', token, { files: ['/sharecl/big.bin'] });
      expect(second.code, second.message).toBe(200);
      const res = await new Promise<http.IncomingMessage>((resolve, reject) => http.get(`${base(1)}/sd/${second.data.id}`, resolve).on('error', reject));
      expect(res.statusCode).toBe(200);
      let received = 0;
      let slow = true;
      const ended = new Promise<void>((resolve) => {
        res.on('data', (c: Buffer) => {
          received += c.length;
          if (slow) res.pause();
        });
        res.on('close', () => resolve());
        res.on('error', () => resolve());
      });
      await new Promise((r) => setTimeout(r, 300));
      expect((await api(0, 'POST', `/api/share/delete?id=${second.data.id}`, token)).code).toBe(200);
      await new Promise((r) => setTimeout(r, 500)); // the announcement travels through Redis
      slow = false;
      res.resume();
      await ended;
      expect(received).toBeLessThan(big);
      expect(res.complete).toBe(false);
    });

    const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;

    it.skipIf(missingPrograms('litmus through round-robin nginx', 'litmus', 'nginx') !== undefined)('litmus locks passes 41/41 through a round-robin nginx over the three processes', async () => {
      const admin = await login(0);
      const work = path.join(root, 'litmus3');
      mkdirSync(work);
      expect((await api(0, 'POST', '/api/admin/storage/create', admin, localStorage('/lit3', work))).code).toBe(200);
      const user = { username: 'litmus3', password: 'litmus-pass', permission: 256 | 512 | 8 | 16 | 32 | 64 | 128 };
      expect((await api(0, 'POST', '/api/admin/user/create', admin, user)).code).toBe(200);
      for (const i of [1, 2]) {
        await waitFor(async () => ((await fetch(`${base(i)}/dav/lit3/`, { method: 'PROPFIND', headers: { depth: '0', authorization: basic('litmus3', 'litmus-pass') } })).status === 207 ? true : undefined), 5000, `the storage on process ${i}`);
      }
      const nginx = await startNginxRoundRobin(ports.map((p) => `127.0.0.1:${p}`));
      try {
        const { stdout } = await promisify(execFile)('litmus', ['-k', `${nginx.base}/dav/lit3/`, 'litmus3', 'litmus-pass'], {
          env: { ...process.env, TESTS: 'locks' },
          cwd: mkdtempSync(path.join(root, 'litmus3-logs-')),
          timeout: 90_000,
        }).catch((err: { stdout?: string; message: string }) => ({ stdout: err.stdout ?? err.message }));
        expect(stdout, stdout).toMatch(/summary for `locks': of 41 tests run: 41 passed/);
      } finally {
        await nginx.stop();
      }
    }, 120_000);

    it('steady state on three processes: queries and Redis commands per request (printed for docs/cluster.md)', async () => {
      const admin = await login(0);
      expect((await api(0, 'POST', '/api/admin/setting/save', admin, [{ key: 'metrics_token', value: 'mtok3' }])).code).toBe(200);
      const metrics = (i: number) => fetch(`${base(i)}/metrics`, { headers: { authorization: 'Bearer mtok3' } }).then((r) => r.text());
      for (const i of [1, 2]) await waitFor(async () => ((await fetch(`${base(i)}/metrics`, { headers: { authorization: 'Bearer mtok3' } })).status === 200 ? true : undefined), 5000, 'the metrics token');
      const metricsQueries = async () => {
        let n = 0;
        for (const i of [0, 1, 2]) n += Number(/^atrium_db_queries_total (\d+)/m.exec(await metrics(i))![1]);
        return n;
      };
      // A /metrics read counts the tasks of each kind (a few queries): its own cost, measured back
      // to back and taken off each reading, so the figures are the requests' alone.
      const probeCost = -(await metricsQueries()) + (await metricsQueries());
      let probes = 0;
      const allQueries = async () => (await metricsQueries()) - probeCost * ++probes;
      // Commands under the cluster's key prefix (test/helpers/redis-monitor.ts).
      const commands = await countCommands(REDIS_URL, keyPrefix);
      const counted = () => commands.counted();
      const token = await login(2);
      const N = 100;
      // Requests spread over the three processes, as a round-robin balancer sends them.
      const run = async (what: (i: number) => Promise<unknown>) => {
        const [q0, r0, t0] = [await allQueries(), await counted(), Date.now()];
        for (let n = 0; n < N; n++) await what(n % 3);
        const ms = Date.now() - t0;
        return { queries: (await allQueries()) - q0, redis: (await counted()) - r0, ms };
      };
      try {
        // The background rate over ~2.5 s of nothing: a shorter window can hold no staleness check at all (0 queries).
        const idle = await run(() => new Promise((r) => setTimeout(r, 25)));
        const listing = await run((i) => api(i, 'POST', '/api/fs/list', token, { path: '/' }));
        const dav = await run((i) => fetch(`${base(i)}/dav/`, { method: 'PROPFIND', headers: { depth: '0', authorization: basic('admin', PASSWORD) } }).then((r) => r.arrayBuffer()));
        console.log(`steady-state costs for ${N} requests over three processes: ${JSON.stringify({ idle, listing, dav })}`);
        // Besides the staleness checks (idle's rate), each process reads the caller's session, user
        // and group memberships again once its cached copy is AUTH_CACHE_TTL_MS old: a count that grows
        // with the run's wall time (a loaded machine stretches it), not with the requests.
        const rereads = (c: { ms: number }) => 3 * 3 * Math.ceil(c.ms / AUTH_CACHE_TTL_MS);
        const background = (c: { ms: number }) => (idle.queries / idle.ms) * c.ms * 1.5 + 6 + rereads(c);
        expect(listing.queries).toBeLessThanOrEqual(background(listing) + N / 10);
        expect(listing.redis).toBeLessThanOrEqual(N / 2);
        // WebDAV Basic auth: the throttle's GET in Redis and the live locks' select, per request
        expect(dav.queries).toBeLessThanOrEqual(N + background(dav));
        expect(dav.redis).toBeLessThanOrEqual(N + N / 2);
      } finally {
        commands.close();
      }
    }, 60_000);

    it('an offline download queued on A, whose process is killed mid-way, completes on B', async () => {
      let admin = await login(0);
      await allowPrivateDownloadsEverywhere(admin);
      const seenBefore = web.ranges.get('/big.bin')?.length ?? 0;
      // Only A takes jobs while the download starts, so it is A that dies holding it.
      await procs[1]!.stop();
      await procs[2]!.stop();
      procs[1] = procs[2] = undefined;
      const added = await api(0, 'POST', '/api/fs/add_offline_download', admin, { urls: [`${web.base}/big.bin`], path: '/team/dl', tool: 'SimpleHttp', delete_policy: 'delete_on_upload_succeed' });
      expect(added.code, added.message).toBe(200);
      const id = added.data.tasks[0].id as string;
      await waitFor(async () => {
        const info = await api(0, 'POST', `/api/admin/task/offline_download/info?tid=${id}`, admin);
        return info.data?.state === 1 && info.data.progress > 20 ? true : undefined;
      }, 20_000, 'the download to run on A');
      await procs[0]!.kill9();
      procs[0] = undefined;
      // B comes up after A died: its worker finds A's job stalled once A's lock runs out.
      procs[1] = await startServerProcess(dirs[1]!, ports[1]!, START);

      admin = await login(1);
      const target = path.join(root, 'shared/dl/big.bin');
      expect(existsSync(target)).toBe(false);
      // B lists it as unfinished (from the shared database) until its job comes back from A's expired lock.
      expect([0, 1]).toContain((await api(1, 'POST', `/api/admin/task/offline_download/info?tid=${id}`, admin)).data.state);
      const finished = await waitFor(async () => {
        const info = await api(1, 'POST', `/api/admin/task/offline_download/info?tid=${id}`, admin);
        return [2, 4, 7].includes(info.data?.state) ? info.data : undefined;
      }, 90_000, 'the download to finish on B');
      expect(finished).toMatchObject({ state: 2, error: '', progress: 100 });
      await waitFor(async () => {
        const done = (await api(1, 'GET', '/api/admin/task/offline_download_transfer/done', admin)).data;
        return done.length > 0 && done[0].state === 2 ? true : undefined;
      }, 30_000, 'the transfer on B');
      expect(createHash('sha256').update(readFileSync(target)).digest('hex')).toBe(digest);
      // B went on from A's partial file (a Range request), not from byte 0.
      const ranges = web.ranges.get('/big.bin')!.slice(seenBefore);
      expect(ranges[0]).toBe('');
      expect(ranges.some((r) => /^bytes=[1-9]\d*-$/.test(r))).toBe(true);
    }, 180_000);
  });
}

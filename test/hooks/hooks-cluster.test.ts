import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpEvent } from '../../src/audit/events.js';
import { loadConfig } from '../../src/config/load.js';
import { openDatabase } from '../../src/db/index.js';
import { dropAll } from '../../src/db/migrations.js';
import { BACKENDS } from '../helpers/backends.js';
import { dropRedisKeys, REDIS_URL, redisReachable } from '../helpers/redis.js';
import { atrium, callApi, freePort, type ServerProcess, startServerProcess } from '../helpers/process.js';
import { type Receiver, signedBy, startReceiver, until } from './receiver.js';

const PASSWORD = 'hooks-cluster-pass';
const SECRET = 'cluster-secret';
const PER_PROCESS = 15;
/** A hook made on one process holds on the others within the cluster's staleness bound (docs/cluster.md). */
const BOUND_MS = 2000;

const noRedis = !(await redisReachable());
if (noRedis && process.env.CI) throw new Error(`CI needs Redis at ${REDIS_URL}, which does not answer`);
if (noRedis) console.warn(`\n*** SKIPPING hooks cluster tests: no Redis at ${REDIS_URL} ***\n`);

/**
 * Two real `atrium server` processes on one PostgreSQL (and MariaDB/MySQL) database and Redis: every
 * operation fires its hook exactly once, whichever process performed it and whichever sends it.
 */
for (const backend of BACKENDS.filter((b) => b.name !== 'sqlite')) {
  describe.skipIf(noRedis)(`hooks on two processes sharing ${backend.name} and Redis`, () => {
    const tablePrefix = `hk${randomBytes(4).toString('hex')}_`;
    const keyPrefix = `atrium-test:${tablePrefix}`;
    let root: string;
    const dirs: string[] = [];
    const ports: number[] = [];
    const procs: ServerProcess[] = [];
    let rx: Receiver;
    const api = (i: number, method: string, route: string, token?: string, body?: unknown) => callApi(`http://127.0.0.1:${ports[i]}`, method, route, { token, body });
    const login = async (i: number) => {
      const r = await api(i, 'POST', '/api/auth/login', undefined, { username: 'admin', password: PASSWORD });
      expect(r.code, r.message).toBe(200);
      return r.data.token as string;
    };

    beforeAll(async () => {
      root = mkdtempSync(path.join(os.tmpdir(), 'atrium-hooks-cluster-'));
      const jwt = randomBytes(12).toString('hex');
      for (const name of ['a', 'b']) {
        const dir = path.join(root, name);
        mkdirSync(dir);
        writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ jwt_secret: jwt, database: backend.database(tablePrefix, dir), redis: { url: REDIS_URL, key_prefix: keyPrefix }, log: { enable: false } }));
        dirs.push(dir);
        ports.push(await freePort());
      }
      await atrium('admin', 'set', PASSWORD, '--data', dirs[0]!);
      procs.push(await startServerProcess(dirs[0]!, ports[0]!, { timeoutMs: 60_000 }));
      const admin = await login(0);
      expect((await api(0, 'POST', '/api/admin/setting/save', admin, [{ key: 'url_fetch_allow_private', value: 'true' }])).code).toBe(200);
      procs.push(await startServerProcess(dirs[1]!, ports[1]!, { timeoutMs: 60_000 }));
      rx = await startReceiver();
    }, 180_000);

    afterAll(async () => {
      await Promise.allSettled(procs.map((p) => p.stop()));
      await rx?.close();
      if (dirs[0]) {
        const handle = openDatabase(loadConfig(dirs[0], {}).config.database);
        await dropAll(handle).catch(() => {});
        await handle.close();
      }
      await dropRedisKeys(keyPrefix).catch(() => {});
      if (root) rmSync(root, { recursive: true, force: true });
    }, 30_000);

    it('each operation, on either process, is delivered once', async () => {
      const admin = await login(0);
      const h = await api(0, 'POST', '/api/admin/hook/create', admin, { name: 'once', events: ['mkdir'], paths: ['/once/**'], action: { type: 'http', url: rx.url, secret: SECRET } });
      expect(h.code, h.message).toBe(200);
      // The hook made on A is listed on B (it is read from the database).
      expect((await api(1, 'GET', `/api/admin/hook/get?id=${h.data.id}`, admin)).data.name).toBe('once');
      // B matches events against its copy of the hooks, reloaded on A's announcement: a probe on B
      // is delivered within the bound (probes made before B reloaded are not, and are not expected).
      const started = Date.now();
      const probes: string[] = [];
      const isProbe = (hit: { body: Buffer }) => (JSON.parse(hit.body.toString()) as OpEvent).path.startsWith('/once/probe');
      while (!rx.hits.some(isProbe)) {
        expect(Date.now() - started, 'a hook made on A fires on B').toBeLessThan(BOUND_MS);
        const p = `/once/probe${probes.length}`;
        expect((await api(1, 'POST', '/api/fs/mkdir', admin, { path: p })).code).toBe(200);
        probes.push(p);
        await new Promise((r) => setTimeout(r, 50));
      }
      const expected: string[] = [];
      for (let n = 0; n < PER_PROCESS; n++) {
        for (const i of [0, 1]) {
          const p = `/once/p${i}-${n}`;
          expect((await api(i, 'POST', '/api/fs/mkdir', admin, { path: p })).code).toBe(200);
          expected.push(p);
        }
      }
      await until(() => rx.hits.filter((hit) => !isProbe(hit)).length >= expected.length || undefined, 30_000, 'every delivery');
      // Time for a second delivery of any event to show up.
      await new Promise((r) => setTimeout(r, 2500));
      const paths = rx.hits.map((hit) => (JSON.parse(hit.body.toString()) as OpEvent).path);
      const probed = paths.filter((p) => p.startsWith('/once/probe'));
      expect(new Set(probed).size, 'each probe delivered at most once').toBe(probed.length);
      expect(probed.every((p) => probes.includes(p))).toBe(true);
      expect(paths.filter((p) => !p.startsWith('/once/probe')).sort()).toEqual(expected.sort());
      expect(rx.hits.every((hit) => signedBy(hit, SECRET))).toBe(true);
      const after = (await api(1, 'GET', `/api/admin/hook/get?id=${h.data.id}`, admin)).data;
      expect(after).toMatchObject({ pending: 0, dead: 0 });
    }, 90_000);
  });
}

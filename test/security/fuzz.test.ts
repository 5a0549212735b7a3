import { rmSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { PATH_ATTACKS } from './attacks.js';
import { appRoutes } from './routes.js';

/** Requests per route and caller; the seed is fixed so a failure replays (override with ATRIUM_FUZZ_SEED). */
const RUNS = Number(process.env.ATRIUM_FUZZ_RUNS ?? 25);
const SEED = Number(process.env.ATRIUM_FUZZ_SEED ?? 20261124);
/** A request that takes longer than this counts as a hang. */
const HANG_MS = 5000;

/**
 * Routes whose work reaches beyond this machine's loopback when given arbitrary input (they fetch
 * URLs or connect to daemons): fuzzed only as non-admin callers, who are refused before any
 * fetch. Their input checks have their own tests (offline, url-guard).
 */
const NETWORK_ROUTES = new Set(['/api/fs/add_offline_download', '/api/admin/setting/set_aria2', '/api/admin/setting/set_qbit', '/api/admin/setting/set_transmission']);
/** Would lock the fuzzing admin out of the rest of the run (a new permanent token). */
const SELF_LOCKING = new Set(['/api/admin/setting/reset_token']);

const FIELDS = [
  'path', 'paths', 'names', 'dir', 'src_dir', 'dst_dir', 'name', 'new_name', 'src_name', 'page', 'per_page', 'password', 'refresh',
  'urls', 'tool', 'delete_policy', 'id', 'tid', 'key', 'keys', 'group', 'groups', 'username', 'permission', 'base_path', 'disabled',
  'mount_path', 'driver', 'addition', 'order', 'rename_objects', 'src_name_regex', 'new_name_regex', 'scope', 'keywords', 'parent',
  'max_depth', 'method', 'data', 'otp_code', 'code', 'secret', 'title', 'value', 'hide', 'write', 'overwrite', 'uid', 'type',
];

const wildString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom(...PATH_ATTACKS, '', ' ', '\u0000', '%00', '(', '[', '*', '.*', '(a+)+$', '\\', '{}', 'null', 'NaN', '-1', '1e400', 'x'.repeat(5000)),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
);
const wildValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    wildString,
    fc.integer(),
    fc.constantFrom(0, -1, 1, 2 ** 31, -(2 ** 53), Number.MAX_SAFE_INTEGER, 1.5),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.constantFrom(...FIELDS), tie('value'), { maxKeys: 4 }),
  ),
})).value;
const body = fc.oneof(
  fc.dictionary(fc.constantFrom(...FIELDS), wildValue, { maxKeys: 8 }),
  fc.array(wildValue, { maxLength: 5 }),
  wildValue,
);
/** Raw text sent as the body: broken JSON, huge nesting, wrong types. */
const rawBody = fc.oneof(fc.string({ maxLength: 200 }), fc.constantFrom('{', '{"path":', '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[', '{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{"x":1}}}'));

describe('fuzzing every API route', () => {
  let s: TestServer;
  let root: string;
  let adminToken: string;
  let userToken: string;
  let requests = 0;

  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
    const admin = await s.login();
    root = makeTree({ 'a.txt': 'a', 'dir/b.txt': 'b', 'dir/sub/c.txt': 'c' });
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/s', root) })).code).toBe(200);
    await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'fuzzy', password: 'f', permission: 0xffff } });
    userToken = await s.login('fuzzy', 'f');
    // The permanent token: no session that a fuzzed logout could end.
    adminToken = s.core.settings.get('token');
  });
  afterAll(async () => {
    await s.destroy();
    rmSync(root, { recursive: true, force: true });
  });

  /** One request: answered within HANG_MS, never a 5xx, never an unhandled error, JSON envelope on /api. */
  /** The /api routes whose route-table entry says they do not answer in the envelope. */
  const notEnvelope = (): Set<string> => new Set(s.app.routeTable.routes.filter((r) => r.doc?.rawResponse).map((r) => r.url));
  const send = async (method: string, url: string, token: string | undefined, payload: string | undefined, query?: Record<string, string>) => {
    requests++;
    const headers: Record<string, string> = {};
    if (token) headers.authorization = token;
    if (payload !== undefined) headers['content-type'] = 'application/json';
    let timer: NodeJS.Timeout | undefined;
    const res = await Promise.race([
      s.inject({ method: method as 'GET', url, headers, payload, query }),
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${method} ${url} hung for ${HANG_MS} ms with ${payload ?? JSON.stringify(query)}`)), HANG_MS))),
    ]).finally(() => clearTimeout(timer));
    const what = `${method} ${url} ${(payload ?? JSON.stringify(query) ?? '').slice(0, 300)}`;
    expect(res.statusCode, `${what} → ${res.body.slice(0, 300)}`).toBeLessThan(500);
    expect(res.body, what).not.toMatch(/internal error|"stack"|at [\w.<>]+ \(.*:\d+:\d+\)/);
    // Routes documented as answering something else than the envelope (tus, the OpenAPI document) are held to the rest only.
    if (url.startsWith('/api/') && !notEnvelope().has(url)) {
      const env = res.json();
      expect(typeof env.code, what).toBe('number');
      expect(typeof env.message, what).toBe('string');
    }
  };

  /** Keeps fuzzed storages on the Local driver inside a scratch folder: no driver reaches the network or the host's files. */
  const confine = (url: string, input: unknown): unknown => {
    if (!url.startsWith('/api/admin/storage/') || typeof input !== 'object' || input === null || Array.isArray(input)) return input;
    return { ...input, driver: 'Local', addition: JSON.stringify({ root_folder_path: root }) };
  };

  it('no input makes any route crash, hang or answer 5xx, as admin, as a user and as the guest', async () => {
    const routes = appRoutes(s.app).filter((r) => r.url.startsWith('/api/'));
    expect(routes.length).toBeGreaterThan(60);
    for (const { url, methods } of routes) {
      for (const method of methods) {
        for (const [who, token] of [
          ['admin', adminToken],
          ['user', userToken],
          ['guest', undefined],
        ] as const) {
          if (who === 'admin' && (NETWORK_ROUTES.has(url) || SELF_LOCKING.has(url))) continue;
          const arb =
            method === 'GET'
              ? fc.dictionary(fc.constantFrom(...FIELDS), wildString, { maxKeys: 5 }).map((q) => ({ query: q as Record<string, string>, payload: undefined }))
              : fc.oneof(
                  body.map((b) => ({ query: undefined, payload: JSON.stringify(confine(url, b)) })),
                  rawBody.map((raw) => ({ query: undefined, payload: raw })),
                );
          await fc.assert(
            fc.asyncProperty(arb, async ({ query, payload }) => {
              await send(method, url, token, payload, query);
            }),
            { numRuns: who === 'admin' ? RUNS : Math.ceil(RUNS / 3), seed: SEED, endOnFailure: true },
          );
        }
      }
    }
    console.log(`fuzz: ${requests} requests over ${routes.length} routes, seed ${SEED}`);
    expect(requests).toBeGreaterThan(routes.length * RUNS);
  }, 300_000);

  it('raw links take arbitrary paths and queries without crashing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(wildString, { minLength: 1, maxLength: 5 }), fc.dictionary(fc.constantFrom('sign', 'type', 'expire'), wildString, { maxKeys: 3 }), async (segments, query) => {
        for (const prefix of ['/d', '/p']) {
          const url = `${prefix}/${segments.map((x) => encodeURIComponent(x)).join('/')}`;
          await send('GET', url, adminToken, undefined, query as Record<string, string>);
        }
      }),
      { numRuns: RUNS * 4, seed: SEED },
    );
  });
});

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type ClusterEvent, RedisBus } from '../../src/cluster/bus.js';
import { loadConfig } from '../../src/config/load.js';
import { bootstrap, openCore } from '../../src/core.js';
import { buildApp } from '../../src/server/app.js';
import { REDIS_URL, redisReachable } from '../helpers/redis.js';

const silent = pino({ level: 'silent' });

const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(path.join(os.tmpdir(), 'atrium-cluster-cfg-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const haveRedis = await redisReachable();
if (!haveRedis && process.env.CI) throw new Error(`CI needs Redis at ${REDIS_URL}, which does not answer`);
if (!haveRedis) console.warn(`\n*** SKIPPING Redis bus tests: no Redis at ${REDIS_URL} ***\n`);

describe('config redis', () => {
  it('defaults to no Redis (one process) and is written into config.json', () => {
    const d = tmp();
    const { config, file } = loadConfig(d, {});
    expect(config.redis).toEqual({ url: '', key_prefix: 'atrium:' });
    expect(JSON.parse(readFileSync(file, 'utf8')).redis).toEqual({ url: '', key_prefix: 'atrium:' });
  });

  it('takes REDIS_URL and REDIS_KEY_PREFIX from the environment without writing them', () => {
    const d = tmp();
    const { config, file } = loadConfig(d, { ATRIUM_REDIS_URL: 'redis://:pw@10.0.0.5:6380/2', ALIST_REDIS_KEY_PREFIX: 'site-a:' });
    expect(config.redis).toEqual({ url: 'redis://:pw@10.0.0.5:6380/2', key_prefix: 'site-a:' });
    expect(JSON.parse(readFileSync(file, 'utf8')).redis.url).toBe('');
  });

  it('refuses a URL that is not redis:// or rediss://, and odd key prefixes, naming the field', () => {
    const d = tmp();
    writeFileSync(path.join(d, 'config.json'), JSON.stringify({ redis: { url: 'http://127.0.0.1:6379' } }));
    expect(() => loadConfig(d, {})).toThrow(/field "redis\.url" must be a redis:\/\/ or rediss:\/\/ URL/);
    writeFileSync(path.join(d, 'config.json'), JSON.stringify({ redis: { key_prefix: 'a b' } }));
    expect(() => loadConfig(d, {})).toThrow(/field "redis\.key_prefix"/);
    writeFileSync(path.join(d, 'config.json'), JSON.stringify({ redis: { url: 6379 } }));
    expect(() => loadConfig(d, {})).toThrow(/field "redis\.url" must be a string/);
  });

  it('a server whose Redis does not answer refuses to start, saying so without the password', async () => {
    const d = tmp();
    writeFileSync(path.join(d, 'config.json'), JSON.stringify({ redis: { url: 'redis://:hunter2@127.0.0.1:1', key_prefix: 't:' }, log: { enable: false } }));
    const core = openCore(loadConfig(d, {}), { log: silent });
    try {
      await bootstrap(core, { adminPassword: 'x' });
      const err = await buildApp(core).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(err?.message).toMatch(/^cannot connect to Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:1 \(config redis\.url\)/);
      expect(err?.message).not.toContain('hunter2');
    } finally {
      await core.close();
    }
  });
});

describe.skipIf(!haveRedis)('Redis bus', () => {
  it('delivers an event to the other processes on the same prefix only, never back to its sender', async () => {
    const prefix = `atrium-test:${Math.random().toString(36).slice(2)}:`;
    const [a, b, other] = await Promise.all([RedisBus.open(REDIS_URL, prefix, silent), RedisBus.open(REDIS_URL, prefix, silent), RedisBus.open(REDIS_URL, `${prefix}x:`, silent)]);
    const got: Record<string, ClusterEvent[]> = { a: [], b: [], other: [] };
    a.subscribe((e) => got.a!.push(e));
    b.subscribe((e) => got.b!.push(e));
    other.subscribe((e) => got.other!.push(e));
    try {
      a.publish({ t: 'listing', storage: 3, path: '/docs', recursive: true });
      b.publish({ t: 'settings' });
      const end = Date.now() + 3000;
      while ((got.a!.length < 1 || got.b!.length < 1) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 100));
      expect(got.b).toEqual([{ t: 'listing', storage: 3, path: '/docs', recursive: true }]);
      expect(got.a).toEqual([{ t: 'settings' }]);
      expect(got.other).toEqual([]);
    } finally {
      await Promise.all([a.close(), b.close(), other.close()]);
    }
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildCli } from '../../src/cli/index.js';
import { loadConfig } from '../../src/config/load.js';
import { bootstrap, openCore } from '../../src/core.js';

/** `atrium audit`, run in this process against a data folder holding a few events. */
describe('atrium audit', () => {
  let dir: string;
  const run = async (...args: string[]): Promise<string[]> => {
    const lines: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void lines.push(a.join(' ')));
    try {
      await buildCli().parseAsync(['node', 'atrium', '--data', dir, 'audit', ...args]);
    } finally {
      log.mockRestore();
    }
    return lines;
  };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'atrium-audit-cli-'));
    writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ log: { enable: false } }));
    const core = openCore(loadConfig(dir, {}), { log: pino({ level: 'silent' }) });
    await bootstrap(core, { adminPassword: 'cli-pass-1' });
    const t = Date.parse('2026-03-01T10:00:00Z');
    await core.repos.auditEvents.insert([
      { time: t, user: 'ann', front: 'sftp', op: 'upload', path: '/a/x.txt', bytes: 42, result: 'ok', ip: '10.0.0.1' },
      { time: t + 1000, user: 'bob', front: 'api', op: 'remove', path: '/b/y.txt', result: 'Forbidden', request_id: 'req-9' },
      { time: t + 2000, user: 'ann', front: 'raw', op: 'download', path: '/a/x.txt', bytes: 42, result: 'ok' },
    ]);
    await core.close();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('prints a table, newest first, with the filters', async () => {
    const all = await run();
    expect(all[0]).toMatch(/^time\s+user\s+front\s+op\s+path\s+dst_path\s+bytes\s+result\s+ip$/);
    expect(all.slice(1, 4).map((l) => l.split(/\s+/)[1])).toEqual(['ann', 'bob', 'ann']);
    expect(all.at(-1)).toBe('3 of 3 event(s)');
    const ann = await run('--user', 'ann', '--op', 'upload');
    expect(ann).toHaveLength(3);
    expect(ann[1]).toMatch(/^2026-03-01T10:00:00.000Z\s+ann\s+sftp\s+upload\s+\/a\/x.txt\s+42\s+ok\s+10.0.0.1$/);
  });

  it('--json prints one event per line; --since, --until, --path, --result and --limit filter', async () => {
    const lines = await run('--json', '--path', '/b', '--result', 'Forbidden');
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      { id: expect.any(Number), time: '2026-03-01T10:00:01.000Z', user: 'bob', front: 'api', op: 'remove', path: '/b/y.txt', dst_path: '', bytes: 0, result: 'Forbidden', ip: '', request_id: 'req-9' },
    ]);
    expect((await run('--json', '--since', '2026-03-01T10:00:01Z', '--until', '2026-03-01T10:00:02Z')).map((l) => JSON.parse(l).user)).toEqual(['bob']);
    expect(await run('--json', '--limit', '1')).toHaveLength(1);
  });

  it('refuses bad filters with a message', async () => {
    await expect(run('--since', 'last week')).rejects.toThrow('since is not an ISO 8601 time: last week');
    await expect(run('--front', 'gopher')).rejects.toThrow('unknown front "gopher"');
    await expect(run('--limit', '0')).rejects.toThrow('--limit must be a whole number from 1 to 1000');
  });
});

import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { listen, requireProgram } from './dav-helpers.js';

/**
 * litmus (Debian's package) against /dav, as a regular user with the WebDAV and write bits.
 * The floor is `rclone serve webdav`'s row in stack-probe.md (the x/net/webdav lineage the
 * original shares): basic 15/16, copymove 13/13, props 10/14, locks 30/34, http 4/4. Atrium
 * passes every test litmus runs, so the exact counts are asserted.
 */
const SUITES = { basic: 16, copymove: 13, props: 30, locks: 41, http: 4 } as const;
const RCLONE_ROW = { basic: 15, copymove: 13, props: 10, locks: 30, http: 4 } as const;
const present = requireProgram('litmus', 'the litmus WebDAV conformance suites');

describe.runIf(present)('litmus against /dav', () => {
  let s: TestServer;
  let root: string;
  let base: string;
  /** litmus writes debug.log and child.log into its working folder. */
  let logs: string;

  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
    const admin = await s.login();
    root = makeTree({ 'work/': '' });
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/disk', root) })).code).toBe(200);
    const user = { username: 'litmus', password: 'litmus-pass', permission: 256 | 512 | 8 | 16 | 32 | 64 | 128 };
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: user })).code).toBe(200);
    base = await listen(s);
    logs = mkdtempSync(path.join(os.tmpdir(), 'atrium-litmus-'));
  });
  afterAll(async () => {
    await s?.destroy();
    rmSync(root, { recursive: true, force: true });
    if (logs) rmSync(logs, { recursive: true, force: true });
  });

  it('passes every suite in full, at or above the rclone WebDAV server', async () => {
    const { stdout } = await promisify(execFile)('litmus', ['-k', `${base}/dav/disk/work/`, 'litmus', 'litmus-pass'], {
      env: { ...process.env, TESTS: Object.keys(SUITES).join(' ') },
      cwd: logs,
      timeout: 90_000,
    }).catch((err: { stdout?: string; message: string }) => ({ stdout: err.stdout ?? err.message }));
    const summary: Record<string, { run: number; passed: number }> = {};
    for (const m of stdout.matchAll(/summary for `(\w+)': of (\d+) tests run: (\d+) passed/g)) {
      summary[m[1]!] = { run: Number(m[2]), passed: Number(m[3]) };
    }
    for (const [suite, total] of Object.entries(SUITES)) {
      expect(summary[suite], `${suite}\n${stdout}`).toEqual({ run: total, passed: total });
      expect(summary[suite]!.passed).toBeGreaterThanOrEqual(RCLONE_ROW[suite as keyof typeof RCLONE_ROW]);
    }
    expect(stdout).not.toMatch(/\bFAIL\b/);
  });
});

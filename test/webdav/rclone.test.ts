import { execFile } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { listen, requireProgram } from './dav-helpers.js';

const run = promisify(execFile);
const present = requireProgram('rclone', "the rclone webdav backend's round trip");

/** 1 000 files in 20 folders (two levels), sizes 0 B – 64 KiB, names with spaces, # and non-ASCII. */
function sourceTree(): Record<string, Buffer> {
  const tree: Record<string, Buffer> = {};
  for (let i = 0; i < 1000; i++) {
    const dir = `d${i % 10}/${i % 20 < 10 ? 'plain' : 'ü sub #2'}`;
    tree[`${dir}/file ${i}${i % 3 === 0 ? ' é' : ''}.bin`] = randomBytes(i % 97 === 0 ? 0 : randomInt(65536));
  }
  return tree;
}

describe.runIf(present)('rclone webdav backend round trip', () => {
  let s: TestServer;
  let root: string;
  let src: string;
  let back: string;
  let env: NodeJS.ProcessEnv;
  const tree = sourceTree();

  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
    const admin = await s.login();
    root = makeTree({});
    src = makeTree(tree);
    back = mkdtempSync(path.join(os.tmpdir(), 'atrium-rclone-back-'));
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/disk', root) })).code).toBe(200);
    const user = { username: 'sync', password: 'sync pass:1', permission: 256 | 512 | 8 | 16 | 32 | 64 | 128 };
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: user })).code).toBe(200);
    const base = await listen(s);
    const obscured = (await run('rclone', ['obscure', user.password])).stdout.trim();
    env = {
      ...process.env,
      RCLONE_CONFIG: '/dev/null',
      RCLONE_CONFIG_X_TYPE: 'webdav',
      RCLONE_CONFIG_X_URL: `${base}/dav/disk`,
      RCLONE_CONFIG_X_VENDOR: 'other',
      RCLONE_CONFIG_X_USER: user.username,
      RCLONE_CONFIG_X_PASS: obscured,
    };
  });
  afterAll(async () => {
    await s?.destroy();
    for (const d of [root, src, back]) if (d) rmSync(d, { recursive: true, force: true });
  });

  const rclone = (...args: string[]) => run('rclone', [...args, '--transfers', '16', '--checkers', '16'], { env, maxBuffer: 16 << 20, timeout: 110_000 });

  it('copies 1 000 files in and out; rclone check is clean both ways', async () => {
    await rclone('copy', src, 'X:tree');
    const inCheck = await rclone('check', src, 'X:tree');
    expect(inCheck.stderr).toContain('0 differences found');
    expect(inCheck.stderr).toContain('1000 matching files');
    // The bytes on the storage's disk are the source's, and no temporary file is left behind
    const names = Object.keys(tree);
    for (const rel of [names[0]!, names[513]!, names[999]!]) {
      expect(readFileSync(path.join(root, 'tree', rel)).equals(tree[rel]!)).toBe(true);
    }
    expect(readdirSync(path.join(root, '.atrium-tmp'))).toEqual([]);

    await rclone('copy', 'X:tree', back);
    const outCheck = await rclone('check', src, back);
    expect(outCheck.stderr).toContain('0 differences found');
    expect(outCheck.stderr).toContain('1000 matching files');
  }, 240_000);
});

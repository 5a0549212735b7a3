import { existsSync, readFileSync, statfsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectClean, type RcloneRig, rclone as runRclone, remoteEnv, run, sourceTree, startRcloneRig } from '../helpers/rclone.js';
import { listen, requireProgram } from './dav-helpers.js';

const present = requireProgram('rclone', "the rclone webdav backend's round trip");

describe.runIf(present)('rclone webdav backend round trip', () => {
  let rig: RcloneRig;
  let env: NodeJS.ProcessEnv;
  let davBase = '';
  const tree = sourceTree();

  beforeAll(async () => {
    rig = await startRcloneRig(tree, 'atrium-rclone-back');
    const { s, admin } = rig;
    const user = { username: 'sync', password: 'sync pass:1', permission: 256 | 512 | 8 | 16 | 32 | 64 | 128 };
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: user })).code).toBe(200);
    const base = await listen(s);
    davBase = base;
    const obscured = (await run('rclone', ['obscure', user.password])).stdout.trim();
    env = remoteEnv({ TYPE: 'webdav', URL: `${base}/dav/disk`, VENDOR: 'other', USER: user.username, PASS: obscured });
  });
  afterAll(async () => {
    await rig?.close();
  });

  const rclone = (...args: string[]) => runRclone(env, [...args, '--transfers', '16', '--checkers', '16'], 110_000);

  it('copies 1 000 files in and out; rclone check is clean both ways', async () => {
    const { root, src, back } = rig;
    await rclone('copy', src, 'X:tree');
    expectClean(await rclone('check', src, 'X:tree'), '1000 matching files');
    // The bytes on the storage's disk are the source's, and no temporary file is left behind
    const names = Object.keys(tree);
    for (const rel of [names[0]!, names[513]!, names[999]!]) {
      expect(readFileSync(path.join(root, 'tree', rel)).equals(tree[rel]!)).toBe(true);
    }
    expect(existsSync(path.join(root, '.atrium-tmp'))).toBe(false);

    await rclone('copy', 'X:tree', back);
    expectClean(await rclone('check', src, back), '1000 matching files');
  }, 240_000);

  it('rclone about shows the storage\'s space (RFC 4331 quota properties; never in allprop)', async () => {
    const about = JSON.parse((await rclone('about', 'X:', '--json')).stdout) as { total?: number; used?: number; free?: number };
    // The Local storage's file system, as statfs reports it in the same second.
    const fsStat = statfsSync(rig.root);
    const free = fsStat.bavail * fsStat.bsize;
    expect(about.free).toBeGreaterThan(0);
    expect(Math.abs(about.free! - free)).toBeLessThan(64 * 1024 * 1024);
    expect(about.used).toBeGreaterThan(0);
    // allprop does not carry them
    const all = await fetch(`${davBase}/dav/disk/`, { method: 'PROPFIND', headers: { depth: '0', authorization: `Basic ${Buffer.from('sync:sync pass:1').toString('base64')}` } });
    expect(all.status).toBe(207);
    expect(await all.text()).not.toContain('quota-available-bytes');
  }, 60_000);
});

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectClean, type RcloneRig, rclone as runRclone, remoteEnv, run, sourceTree, startRcloneRig } from '../helpers/rclone.js';
import { listen, requireProgram } from './dav-helpers.js';

const present = requireProgram('rclone', "the rclone webdav backend's round trip");

describe.runIf(present)('rclone webdav backend round trip', () => {
  let rig: RcloneRig;
  let env: NodeJS.ProcessEnv;
  const tree = sourceTree();

  beforeAll(async () => {
    rig = await startRcloneRig(tree, 'atrium-rclone-back');
    const { s, admin } = rig;
    const user = { username: 'sync', password: 'sync pass:1', permission: 256 | 512 | 8 | 16 | 32 | 64 | 128 };
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: user })).code).toBe(200);
    const base = await listen(s);
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
    expect(readdirSync(path.join(root, '.atrium-tmp'))).toEqual([]);

    await rclone('copy', 'X:tree', back);
    expectClean(await rclone('check', src, back), '1000 matching files');
  }, 240_000);
});

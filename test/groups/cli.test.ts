import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { atrium } from '../helpers/process.js';

const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(path.join(os.tmpdir(), 'atrium-cli-groups-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function fails(...args: string[]): Promise<{ code: number; stderr: string }> {
  return atrium(...args).then(
    (r) => {
      throw new Error(`expected a failure, got: ${r.stdout}`);
    },
    (e: { code: number; stderr: string }) => e,
  );
}

/** `atrium group`, and groups carried by export/import and migrate (issue #41), through the real binary. */
describe('atrium group', () => {
  it('adds, changes, joins, leaves and deletes groups; refuses a clash; export/import and migrate carry them', async () => {
    const data = tmp();
    await atrium('user', 'add', 'ann', 'ann-pass-1', '--base-path', '/home/ann', '--data', data);
    expect((await atrium('group', 'add', 'red', '--permission', '8', '--root', 'team=/teams/red', '--root', 'old=/archive', '--data', data)).stdout).toContain('group red added (id 1)');
    expect((await atrium('group', 'add', 'blue', '--root', 'blue=/teams/blue', '--data', data)).stdout).toContain('group blue added');
    expect((await atrium('group', 'join', 'red', 'ann', '--data', data)).stdout).toContain('user ann joined group red');
    expect((await atrium('group', 'join', 'blue', 'ann', '--data', data)).stdout).toContain('joined');
    const list = await atrium('group', 'list', '--data', data);
    expect(list.stdout).toMatch(/1\s+red\s+8\s+team=\/teams\/red, old=\/archive\s+ann/);
    expect(list.stdout).toMatch(/2\s+blue\s+0\s+blue=\/teams\/blue\s+ann/);
    expect(list.stdout).toContain('2 group(s)');

    // a root name twice in ann's tree is refused with the API's message, nothing saved
    const clash = await fails('group', 'set', 'blue', '--root', 'team=/elsewhere', '--data', data);
    expect(clash.code).toBe(2);
    expect(clash.stderr).toContain('roots: the name team is in both group red and group blue of user ann');
    expect((await fails('group', 'add', 'bad', '--root', 'nopath', '--data', data)).stderr).toContain('--root takes NAME=PATH');
    expect((await fails('group', 'join', 'nosuch', 'ann', '--data', data)).stderr).toContain('no group named "nosuch"');

    expect((await atrium('group', 'set', 'blue', '--rename', 'navy', '--permission', '128', '--data', data)).stdout).toContain('group navy saved');
    expect((await atrium('group', 'list', '--data', data)).stdout).toMatch(/2\s+navy\s+128\s+blue=\/teams\/blue\s+ann/);

    // export and import into a fresh installation: groups by name, memberships by group name
    const file = path.join(data, 'backup.json');
    expect((await atrium('export', file, '--data', data)).stdout).toMatch(/2 groups/);
    const exported = JSON.parse(readFileSync(file, 'utf8'));
    expect(exported.groups).toEqual([
      { name: 'red', permission: 8, roots: [{ path: '/teams/red', name: 'team' }, { path: '/archive', name: 'old' }], quota_bytes: 0, quota_files: 0, upload_rate: 0, download_rate: 0, max_transfers: 0, max_sessions: 0 },
      { name: 'navy', permission: 128, roots: [{ path: '/teams/blue', name: 'blue' }], quota_bytes: 0, quota_files: 0, upload_rate: 0, download_rate: 0, max_transfers: 0, max_sessions: 0 },
    ]);
    expect(exported.users.find((u: { username: string }) => u.username === 'ann').groups).toEqual(['red', 'navy']);
    const other = tmp();
    await atrium('group', 'add', 'navy', '--permission', '1', '--data', other);
    expect((await atrium('import', file, '--data', other)).stdout).toContain('groups: 1 added, 1 updated');
    const imported = await atrium('group', 'list', '--data', other);
    expect(imported.stdout).toMatch(/navy\s+128\s+blue=\/teams\/blue\s+ann/);
    expect(imported.stdout).toMatch(/red\s+8\s+team=\/teams\/red, old=\/archive\s+ann/);

    // migrate copies the groups and memberships
    expect((await atrium('migrate', '--to', 'sqlite:copy.db', '--switch', '--data', data)).stdout).toMatch(/access_groups: 2 rows[\s\S]*group_members: 2 rows/);
    expect((await atrium('group', 'list', '--data', data)).stdout).toMatch(/navy\s+128\s+blue=\/teams\/blue\s+ann/);

    expect((await atrium('group', 'leave', 'red', 'ann', '--data', data)).stdout).toContain('user ann left group red');
    expect((await atrium('group', 'delete', 'navy', '--data', data)).stdout).toContain('group navy deleted');
    expect((await atrium('group', 'list', '--data', data)).stdout).toMatch(/1\s+red\s+8\s+team=\/teams\/red, old=\/archive\s*\n1 group\(s\)/);
  }, 240_000); // some twenty CLI processes, each starting Node and opening the database
});

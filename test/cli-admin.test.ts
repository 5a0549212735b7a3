import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ProgressLine } from '../src/cli/progress.js';
import { loadConfig } from '../src/config/load.js';
import { bootstrap, openCore } from '../src/core.js';
import { credentialHash } from '../src/auth/passkeys.js';
import { atrium, freePort, startServerProcess } from './helpers/process.js';

const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(path.join(os.tmpdir(), 'atrium-cli-admin-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Runs the CLI expecting a failure; resolves with its exit code and stderr. */
async function fails(...args: string[]): Promise<{ code: number; stderr: string }> {
  return atrium(...args).then(
    (r) => {
      throw new Error(`expected a failure, got: ${r.stdout}`);
    },
    (e: { code: number; stderr: string }) => e,
  );
}

async function login(base: string, username: string, password: string) {
  const res = await fetch(`${base}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  return (await res.json()) as { code: number; message: string; data: { token: string } | null };
}

describe('atrium user', () => {
  it('adds, lists, sets passwords and disables users; the server honours them', async () => {
    const data = tmp();
    expect((await atrium('user', 'add', 'ann', 'ann-pass-1', '--permission', '8', '--base-path', '/ann', '--data', data)).stdout).toContain('user ann added (id 3)');
    const bob = await atrium('user', 'add', 'bob', '--data', data);
    const bobPassword = /password: (\S+)/.exec(bob.stdout)?.[1];
    expect(bobPassword).toMatch(/^[A-Za-z0-9]{12}$/);
    expect((await atrium('user', 'passwd', 'ann', 'ann-pass-2', '--data', data)).stdout).toContain('password set for user ann');
    expect((await atrium('user', 'disable', 'bob', '--data', data)).stdout).toContain('user bob disabled');

    const list = await atrium('user', 'list', '--data', data);
    expect(list.stdout).toMatch(/3\s+ann\s+general\s+enabled\s+\/ann\s+8/);
    expect(list.stdout).toMatch(/4\s+bob\s+general\s+disabled\s+\/\s+0/);
    expect(list.stdout).toContain('4 user(s)');

    const port = await freePort();
    const server = await startServerProcess(data, port);
    try {
      expect((await login(server.base, 'ann', 'ann-pass-1')).code).toBe(400);
      expect((await login(server.base, 'ann', 'ann-pass-2')).code).toBe(200);
      const refused = await login(server.base, 'bob', bobPassword!);
      expect(refused.code).not.toBe(200);
      expect(refused.message).toMatch(/disabled/);
    } finally {
      await server.stop();
    }
    expect((await atrium('user', 'enable', 'bob', '--data', data)).stdout).toContain('user bob enabled');
    expect((await atrium('user', 'delete', 'bob', '--data', data)).stdout).toContain('user bob deleted');
    expect((await atrium('user', 'list', '--data', data)).stdout).not.toContain('bob');
  });

  it('refuses bad input with the API checks and exit code 2', async () => {
    const data = tmp();
    await atrium('user', 'add', 'ann', 'pw', '--data', data);
    const cases: Array<[string[], RegExp]> = [
      [['user', 'add', 'ann', 'pw2'], /username ann is already taken/],
      [['user', 'add', 'x', 'pw', '--permission', 'lots'], /permission/],
      [['user', 'disable', 'admin'], /admin user can not be disabled/],
      [['user', 'delete', 'guest'], /cannot delete admin or guest/],
      [['user', 'passwd', 'nobody', 'pw'], /no user named "nobody"/],
      [['user', 'passwd', 'ann', ''], /password is empty/],
      [['user', 'add'], /missing required argument 'username'/],
      [['user', 'frobnicate'], /unknown command/],
      [['no-such-command'], /unknown command/],
      [['server', '--port', 'eighty'], /--port must be a port number/],
      [['user', 'list', '--no-such-option'], /unknown option/],
    ];
    for (const [args, message] of cases) {
      const r = await fails(...args, '--data', data);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(message);
    }
  });
});

describe('atrium storage', () => {
  it('adds a mounted storage, disables, enables and removes it, with the API checks', async () => {
    const data = tmp();
    const media = path.join(data, 'media');
    mkdirSync(media);
    writeFileSync(path.join(media, 'song.mp3'), 'la la');
    const added = await atrium('storage', 'add', '/media', 'Local', '--set', `root_folder_path=${media}`, '--remark', 'music', '--data', data);
    expect(added.stdout).toContain('storage /media added (id 2, work)');
    expect((await atrium('storage', 'list', '--data', data)).stdout).toMatch(/2\s+\/media\s+Local\s+work\s+0\s+music/);

    for (const [args, message] of [
      [['storage', 'add', '/x', 'NoSuchDriver'], /no driver named: NoSuchDriver/],
      [['storage', 'add', '/x', 'Local', '--addition', '[1]'], /must be a JSON object/],
      [['storage', 'add', '/x', 'Local', '--addition', '{nope'], /--addition is not JSON/],
      [['storage', 'add', '/x', 'Local', '--set', 'novalue'], /--set needs key=value/],
      [['storage', 'add', '/x', 'Local', '--order', 'first'], /order/],
      [['storage', 'remove', '/nowhere'], /no storage mounted at \/nowhere/],
      [['storage', 'enable', '2'], /this storage have enabled/],
    ] as Array<[string[], RegExp]>) {
      const r = await fails(...args, '--data', data);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(message);
    }
    // A mount path already used is a refused input (kind Exists): exit 2, the API's message.
    const dup = await fails('storage', 'add', '/media', 'Local', '--set', `root_folder_path=${media}`, '--data', data);
    expect(dup.code).toBe(2);
    expect(dup.stderr).toContain('mount path /media is already used');

    await atrium('storage', 'disable', '/media', '--data', data);
    expect((await atrium('storage', 'list', '--data', data)).stdout).toMatch(/2\s+\/media\s+Local\s+disabled/);
    await atrium('storage', 'enable', '2', '--data', data);
    expect((await atrium('storage', 'list', '--data', data)).stdout).toMatch(/2\s+\/media\s+Local\s+work/);
    expect((await atrium('storage', 'remove', '/media', '--data', data)).stdout).toContain('storage /media removed');
    const after = await atrium('storage', 'list', '--data', data);
    expect(after.stdout).not.toContain('/media');
    expect(after.stdout).toContain('1 storage(s)');
    // The files of a removed storage are left alone.
    expect(readFileSync(path.join(media, 'song.mp3'), 'utf8')).toBe('la la');
  });
});

describe('atrium index build', () => {
  it('needs the database index, then indexes every object, reporting plain lines off a terminal', async () => {
    const data = tmp();
    await atrium('admin', 'set', 'pw-123456', '--data', data);
    const off = await fails('index', 'build', '--data', data);
    expect(off.code).toBe(2);
    expect(off.stderr).toContain('the search_index setting is "none"');

    const files = path.join(data, 'files');
    for (let d = 0; d < 5; d++) {
      mkdirSync(path.join(files, `dir${d}`), { recursive: true });
      for (let f = 0; f < 40; f++) writeFileSync(path.join(files, `dir${d}`, `file-${f}.txt`), String(f));
    }
    const r = await atrium('index', 'build', '--enable', '--data', data);
    expect(r.stdout).toMatch(/^indexed 205 objects in [\d.]+s$/m);
    expect(r.stdout).not.toContain('\r');

    const port = await freePort();
    const server = await startServerProcess(data, port);
    try {
      const token = (await login(server.base, 'admin', 'pw-123456')).data!.token;
      const res = await fetch(`${server.base}/api/fs/search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: token },
        body: JSON.stringify({ parent: '/', keywords: 'file-39', page: 1, per_page: 100 }),
      });
      const body = (await res.json()) as { code: number; data: { content: Array<{ parent: string; name: string }>; total: number } };
      expect(body.code).toBe(200);
      expect(body.data.total).toBe(5);
    } finally {
      await server.stop();
    }
  });

  it('draws one line in place on a terminal, and plain lines elsewhere', () => {
    const written: string[] = [];
    const fake = (isTTY: boolean) => ({ isTTY, write: (s: string) => written.push(s) }) as unknown as NodeJS.WriteStream;
    const tty = new ProgressLine(fake(true), 'indexed objects');
    tty.update(10);
    tty.update(2500);
    tty.done('indexed 2500 objects');
    expect(written[0]).toMatch(/^\r\[[ =]{24}\] indexed objects: 10 \(/);
    expect(written[1]).toMatch(/^\r\[[ =]{24}\] indexed objects: 2,500 \(/);
    expect(written[0]!.slice(0, 27)).not.toBe(written[1]!.slice(0, 27)); // the bar moves
    expect(written[2]).toBe('\rindexed 2500 objects\x1b[K\n');

    written.length = 0;
    const plain = new ProgressLine(fake(false), 'indexed objects', 0);
    plain.update(10);
    plain.update(10); // unchanged: nothing
    plain.update(20);
    plain.done('indexed 20 objects');
    expect(written).toEqual([expect.stringMatching(/^indexed objects: 10 \(\d+\/s\)\n$/), expect.stringMatching(/^indexed objects: 20 \(\d+\/s\)\n$/), 'indexed 20 objects\n']);
  });
});

describe('atrium export / import', () => {
  it('carries settings, users (their passwords too), storages, metas, SSH keys, shares and passkeys to a new installation', async () => {
    const a = tmp();
    const media = path.join(a, 'media');
    mkdirSync(media);
    await atrium('user', 'add', 'ann', 'ann-pass-1', '--permission', '8', '--data', a);
    await atrium('storage', 'add', '/media', 'Local', '--set', `root_folder_path=${media}`, '--data', a);
    const core = openCore(loadConfig(a), { quiet: true });
    try {
      await bootstrap(core);
      await core.settings.saveMany([{ key: 'site_title', value: 'Exported site' }]);
      await core.metas.create({ path: '/media', password: 'secret', p_sub: true, write: false, w_sub: false, hide: '', h_sub: false, readme: '# hi', r_sub: false, header: '', header_sub: false });
      const ann = (await core.repos.users.byUsername('ann'))!;
      await core.repos.sshKeys.create({ userId: ann.id, title: 'laptop', fingerprint: 'SHA256:abc', keyStr: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIK ann@laptop', addedTime: 1700000000000, lastUsedTime: 0 });
      await core.repos.shares.create({ id: 'annShare0123456789abcd', files: ['/media'], expires: 0, pwd: 'code', accessed: 2, maxAccessed: 10, creatorId: ann.id, disabled: false, remark: 'for bob', readme: '', header: '', createdAt: 1700000000000 });
      await core.repos.webauthn.create({
        userId: ann.id,
        credentialHash: credentialHash('AQIDBA'),
        credentialId: 'AQIDBA',
        publicKey: 'pQECAyYgASFYIA',
        signCount: 7,
        transports: ['internal', 'hybrid'],
        aaguid: '00000000-0000-0000-0000-000000000000',
        backedUp: true,
        name: 'Passkey 1',
        creatorIp: '127.0.0.1',
        creatorUa: 'test',
        addedTime: 1700000000000,
        lastUsedTime: 1700000001000,
      });
    } finally {
      await core.close();
    }

    const file = path.join(a, 'backup.json');
    const exported = await atrium('export', file, '--data', a);
    expect(exported.stdout).toMatch(/exported \d+ settings, 3 users, 0 groups, 2 storages, 1 metas, 1 SSH keys, 1 shares, 1 passkeys/);
    const backup = JSON.parse(readFileSync(file, 'utf8'));
    expect(Object.keys(backup)).toEqual(expect.arrayContaining(['encrypted', 'settings', 'users', 'storages', 'metas', 'ssh_keys', 'shares', 'passkeys']));

    const b = tmp();
    const imported = await atrium('import', file, '--data', b);
    expect(imported.stdout).toContain('users: 1 added, 2 updated');
    expect(imported.stdout).toContain('storages: 1 added, 1 updated');
    expect(imported.stdout).toContain('metas: 1 added');
    expect(imported.stdout).toContain('SSH keys: 1 added');
    expect(imported.stdout).toContain('shares: 1 added, 0 updated, 0 without their creator');
    expect(imported.stdout).toContain('passkeys: 1 added, 0 already there or without their user');

    const again = path.join(b, 'again.json');
    await atrium('export', again, '--data', b);
    const second = JSON.parse(readFileSync(again, 'utf8'));
    const strip = (x: any) => {
      const out = structuredClone(x);
      delete out.atrium;
      for (const s of out.storages) {
        delete s.modified;
        delete s.status;
      }
      // Each installation has its own default Local root; the rest must match.
      out.storages = out.storages.filter((s: any) => s.mount_path !== '/');
      return out;
    };
    expect(strip(second)).toEqual(strip(backup));

    const port = await freePort();
    const server = await startServerProcess(b, port);
    try {
      expect((await login(server.base, 'ann', 'ann-pass-1')).code).toBe(200);
      const settings = await (await fetch(`${server.base}/api/public/settings`)).json();
      expect(settings.data.site_title).toBe('Exported site');
    } finally {
      await server.stop();
    }
  });

  it("imports the OpenList manage page's backup file (its users have no password hash and are listed)", async () => {
    const data = tmp();
    const media = path.join(data, 'media');
    mkdirSync(media);
    const openlist = {
      encrypted: '',
      settings: [{ key: 'site_title', value: 'From OpenList', help: '', type: 'string', options: '', group: 1, flag: 0, index: 0 }],
      users: [{ id: 3, username: 'carol', password: '', base_path: '/', role: 0, disabled: false, permission: 0, sso_id: '' }],
      storages: [
        { id: 7, mount_path: '/media', order: 0, driver: 'Local', cache_expiration: 30, status: 'work', addition: JSON.stringify({ root_folder_path: media }), remark: '', modified: '2025-01-01T00:00:00Z', disabled: false, disable_index: false, enable_sign: false, order_by: 'name', order_direction: 'asc', extract_folder: '', web_proxy: false, webdav_policy: 'native_proxy', proxy_range: false, down_proxy_url: '', disable_proxy_sign: false },
      ],
      metas: [{ id: 1, path: '/media', password: '', p_sub: false, write: true, w_sub: true, hide: '', h_sub: false, readme: '', r_sub: false, header: '', header_sub: false }],
      labels: [],
      label_file_bindings: [],
      roles: [],
    };
    const file = path.join(data, 'openlist.json');
    writeFileSync(file, JSON.stringify(openlist));
    const r = await atrium('import', file, '--data', data);
    expect(r.stdout).toContain('imported 1 settings');
    expect(r.stdout).toContain('storages: 1 added');
    expect(r.stdout).toContain('metas: 1 added');
    expect(r.stdout).toContain('users not restored (no password hash in the file): carol');
    expect((await atrium('storage', 'list', '--data', data)).stdout).toMatch(/\/media\s+Local/);
    expect((await atrium('user', 'list', '--data', data)).stdout).not.toContain('carol');
  });

  it('refuses a file that is not a backup, with exit code 2', async () => {
    const data = tmp();
    const bad = path.join(data, 'bad.json');
    writeFileSync(bad, JSON.stringify({ users: 3 }));
    expect(await fails('import', bad, '--data', data)).toMatchObject({ code: 2, stderr: expect.stringContaining('not a backup file: users') });
    writeFileSync(bad, '{not json');
    expect(await fails('import', bad, '--data', data)).toMatchObject({ code: 2, stderr: expect.stringContaining('is not JSON') });
    expect(await fails('import', path.join(data, 'missing.json'), '--data', data)).toMatchObject({ code: 2, stderr: expect.stringContaining('cannot read') });
    writeFileSync(bad, JSON.stringify({ storages: [{ mount_path: '/x' }] }));
    expect(await fails('import', bad, '--data', data)).toMatchObject({ code: 2, stderr: expect.stringContaining('storages[0] (/x): driver is required') });
    // A JSON object with none of a backup's sections is not one, and a new --data is left unmade.
    writeFileSync(bad, JSON.stringify({ hello: 1 }));
    const fresh = path.join(data, 'new-install');
    expect(await fails('import', bad, '--data', fresh)).toMatchObject({ code: 2, stderr: expect.stringContaining('not a backup file: it has none of settings, users') });
    expect(existsSync(fresh)).toBe(false);
  });

  it("importing into a new data folder prints no initial password once the backup's admin replaces it", async () => {
    const a = tmp();
    await atrium('admin', 'set', 'Exported-admin-1', '--data', a);
    const file = path.join(a, 'backup.json');
    await atrium('export', file, '--data', a);
    const b = path.join(tmp(), 'restored');
    const r = await atrium('import', file, '--data', b);
    expect(r.stderr).not.toContain('initial password');
    expect(r.stderr).toContain('the admin user and its password come from the backup');
    // A silent logger: the log file's stream would open after the folder is cleaned up.
    const core = openCore(loadConfig(b), { log: pino({ level: 'silent' }) });
    try {
      await expect(core.accounts.checkPassword('admin', 'Exported-admin-1', '127.0.0.9')).resolves.toMatchObject({ username: 'admin' });
    } finally {
      await core.close();
    }
  });
});

describe('atrium: the newcomer path', () => {
  it('a --data that is a file is a one-line usage error; a mistyped --data leaves no installation when the command fails', async () => {
    const dir = tmp();
    const file = path.join(dir, 'a-file');
    writeFileSync(file, 'x');
    for (const args of [['storage', 'list'], ['admin', 'set', 'Pass-word-1'], ['server']]) {
      const r = await fails(...args, '--data', file);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr.trim(), args.join(' ')).toBe(`atrium: --data ${file} is not a folder`);
    }
    const typo = path.join(dir, 'dtaa');
    expect(await fails('storage', 'remove', '7', '--data', typo)).toMatchObject({ code: 2, stderr: expect.stringContaining('no storage with id 7') });
    expect(existsSync(typo)).toBe(false);
    // A command that succeeds on a new folder keeps it (admin set before the first start).
    await atrium('admin', 'set', 'Pass-word-1', '--data', typo);
    expect(existsSync(path.join(typo, 'config.json'))).toBe(true);
  });

  it('storage add whose storage fails to start keeps nothing', async () => {
    const data = tmp();
    const r = await fails('storage', 'add', '/gone', 'Local', '--set', `root_folder_path=${path.join(data, 'no-such-folder')}`, '--data', data);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('failed init storage');
    const list = await atrium('storage', 'list', '--data', data);
    expect(list.stdout).not.toContain('/gone');
    expect(list.stdout).toContain('1 storage(s)');
  });

  it('a second server on a SQLite database another server holds is refused, naming it; after a kill -9 the lock is taken over', async () => {
    const data = tmp();
    const port = await freePort();
    const first = await startServerProcess(data, port);
    try {
      const second = await fails('server', '--data', data, '--port', String(await freePort()));
      expect(second.code).toBe(2);
      expect(second.stderr).toContain(`is in use by another atrium server (pid ${first.child.pid}`);
    } finally {
      await first.kill9();
    }
    const again = await startServerProcess(data, port);
    expect((await fetch(`${again.base}/ping`)).status).toBe(200);
    expect(await again.stop()).toBe(0);
    expect(existsSync(path.join(data, 'data.db.server'))).toBe(false);
  });
});

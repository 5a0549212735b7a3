import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProtocolListener } from '../../src/protocols/listeners.js';
import { PARTIAL } from '../../src/uploads/partials.js';
import { BACKENDS } from '../helpers/backends.js';
import { hasProgram } from '../helpers/daemons.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { call, connectSftp, startSftp } from '../helpers/sftp.js';
import { waitFor, waitUntil } from '../helpers/wait.js';

const FTP_BITS = 1024 | 2048 | 8 | 16 | 32 | 128;
const run = promisify(execFile);
const missing = ['sftp', 'sshpass'].filter((p) => !hasProgram(p));
if (missing.length > 0 && process.env.CI) throw new Error(`CI needs ${missing.join(', ')} (.ci/packages.sh installs them)`);

/** OpenSSH sftp: a put cut off mid-transfer stays its user's partial, and `reput` finishes it. */
describe.skipIf(missing.length > 0)('SFTP: interrupted uploads resume with OpenSSH reput', () => {
  let s: TestServer;
  let srv: ProtocolListener;
  let root: string;
  let work: string;
  let writerId: number;
  const body = randomBytes(4 * 1024 * 1024 + 33);
  const partialsOf = () => s.core.repos.uploads.receivingOf(writerId, PARTIAL);
  const sftpArgs = (commands: string[], extra: string[] = []) => {
    const file = path.join(work, `batch-${randomBytes(4).toString('hex')}`);
    writeFileSync(file, `${commands.join('\n')}\n`);
    return ['-p', 'w-pass', 'sftp', '-P', String(srv.port), '-o', 'UserKnownHostsFile=/dev/null', '-o', 'StrictHostKeyChecking=no', '-o', 'LogLevel=ERROR', '-o', 'BatchMode=no', '-o', 'PreferredAuthentications=password', '-o', 'PubkeyAuthentication=no', ...extra, '-b', file, 'writer@127.0.0.1'];
  };

  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
    const admin = await s.login();
    root = makeTree({ 'keep.txt': 'x' });
    work = mkdtempSync(path.join(os.tmpdir(), 'atrium-sftp-resume-'));
    writeFileSync(path.join(work, 'big.bin'), body);
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/s', root) })).code).toBe(200);
    for (const u of [
      { username: 'writer', password: 'w-pass', permission: FTP_BITS },
      { username: 'other', password: 'o-pass', permission: FTP_BITS },
    ]) {
      expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: u })).code).toBe(200);
    }
    writerId = (await s.core.repos.users.byUsername('writer'))!.id;
    srv = await startSftp(s);
  });
  afterAll(async () => {
    await srv?.close();
    await s?.destroy();
    rmSync(root, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  it('put cut off mid-transfer, then reput: identical bytes; meanwhile another user sees no file under the name', async () => {
    // throttled to 4 Mbit/s, then the client and its ssh are killed together (the connection drops)
    const put = spawn('sshpass', sftpArgs(['put big.bin /s/big.bin'], ['-l', '4000']), { cwd: work, stdio: 'ignore', detached: true });
    await waitFor(async () => {
      const row = (await partialsOf())[0];
      return row !== undefined && existsSync(s.core.uploads.staging.file(row.id)) && statSync(s.core.uploads.staging.file(row.id)).size > 500_000;
    }, 20_000);
    process.kill(-put.pid!, 'SIGKILL');
    await waitFor(async () => ((await partialsOf())[0]?.received ?? 0) > 0, 20_000);
    const row = (await partialsOf())[0]!;
    expect(row.received).toBeLessThan(body.length);
    expect(existsSync(path.join(root, 'big.bin'))).toBe(false);

    // another user: no such file, not listed
    const o = await connectSftp(srv.port, { username: 'other', password: 'o-pass' });
    try {
      await expect(call(o.sftp, 'stat', '/s/big.bin')).rejects.toMatchObject({ code: 2 });
      expect((await call<Array<{ filename: string }>>(o.sftp, 'readdir', '/s')).map((e) => e.filename)).toEqual(['keep.txt']);
    } finally {
      o.end();
    }
    // the writer: its partial, with the bytes so far
    const { stdout } = await run('sshpass', sftpArgs(['ls -l /s']), { cwd: work });
    expect(stdout).toMatch(new RegExp(`${row.received} .*big\\.bin`));

    await run('sshpass', sftpArgs(['reput big.bin /s/big.bin']), { cwd: work });
    expect(readFileSync(path.join(root, 'big.bin')).equals(body)).toBe(true);
    expect(await partialsOf()).toEqual([]);
    expect(existsSync(s.core.uploads.staging.dir(row.id))).toBe(false);
  }, 60_000);

  it('over an existing file: another user keeps reading the old file while the writer sees its partial', async () => {
    writeFileSync(path.join(root, 'old.bin'), 'old content');
    const put = spawn('sshpass', sftpArgs(['put big.bin /s/old.bin'], ['-l', '4000']), { cwd: work, stdio: 'ignore', detached: true });
    await waitFor(async () => {
      const r = (await partialsOf())[0];
      return r !== undefined && existsSync(s.core.uploads.staging.file(r.id)) && statSync(s.core.uploads.staging.file(r.id)).size > 300_000;
    }, 20_000);
    process.kill(-put.pid!, 'SIGKILL');
    await waitFor(async () => ((await partialsOf())[0]?.received ?? 0) > 0, 20_000);
    const row = (await partialsOf())[0]!;
    const o = await connectSftp(srv.port, { username: 'other', password: 'o-pass' });
    const w = await connectSftp(srv.port, { username: 'writer', password: 'w-pass' });
    try {
      expect((await call<{ size: number }>(o.sftp, 'stat', '/s/old.bin')).size).toBe(11);
      expect((await call<{ size: number }>(w.sftp, 'stat', '/s/old.bin')).size).toBe(row.received);
    } finally {
      o.end();
      w.end();
    }
    expect(readFileSync(path.join(root, 'old.bin'), 'utf8')).toBe('old content');
    await run('sshpass', sftpArgs(['reput big.bin /s/old.bin']), { cwd: work });
    expect(readFileSync(path.join(root, 'old.bin')).equals(body)).toBe(true);
    expect(await partialsOf()).toEqual([]);
  }, 60_000);

  it('a partial past upload_expire_hours is no longer shown and is swept; a new put then stores the file', async () => {
    const put = spawn('sshpass', sftpArgs(['put big.bin /s/second.bin'], ['-l', '4000']), { cwd: work, stdio: 'ignore', detached: true });
    await waitFor(async () => {
      const r = (await partialsOf())[0];
      return r !== undefined && existsSync(s.core.uploads.staging.file(r.id)) && statSync(s.core.uploads.staging.file(r.id)).size > 200_000;
    }, 20_000);
    process.kill(-put.pid!, 'SIGKILL');
    await waitFor(async () => ((await partialsOf())[0]?.received ?? 0) > 0, 20_000);
    const row = (await partialsOf())[0]!;
    await s.core.repos.uploads.setPartial(row.id, row.received, Date.now() - 25 * 3_600_000);
    // a change made in the database directly: the node reads the user's partials again after 2 s
    await new Promise((r) => setTimeout(r, 2100));
    const w = await connectSftp(srv.port, { username: 'writer', password: 'w-pass' });
    try {
      await expect(call(w.sftp, 'stat', '/s/second.bin')).rejects.toMatchObject({ code: 2 });
    } finally {
      w.end();
    }
    expect(await s.core.uploads.sweep()).toBeGreaterThanOrEqual(1);
    expect(await partialsOf()).toEqual([]);
    expect(existsSync(s.core.uploads.staging.dir(row.id))).toBe(false);
    await run('sshpass', sftpArgs(['put big.bin /s/second.bin']), { cwd: work });
    expect(readFileSync(path.join(root, 'second.bin')).equals(body)).toBe(true);
  }, 60_000);
});

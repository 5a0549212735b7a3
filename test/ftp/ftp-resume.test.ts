import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'basic-ftp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProtocolListener } from '../../src/protocols/listeners.js';
import { startFtpServer } from '../../src/protocols/ftp/server.js';
import { PARTIAL } from '../../src/uploads/partials.js';
import { BACKENDS } from '../helpers/backends.js';
import { hasProgram } from '../helpers/daemons.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { waitFor, waitUntil } from '../helpers/wait.js';

const FTP_BITS = 1024 | 2048 | 8 | 16 | 32 | 128;
const run = promisify(execFile);
const missing = ['lftp', 'curl'].filter((p) => !hasProgram(p));
if (missing.length > 0 && process.env.CI) throw new Error(`CI needs ${missing.join(', ')} (.ci/packages.sh installs them)`);

/** Interrupted FTP uploads kept as the user's partial and resumed (lftp `put -c`, curl `--append`). */
describe.skipIf(missing.length > 0)('FTP: interrupted uploads resume', () => {
  let s: TestServer;
  let srv: ProtocolListener;
  let root: string;
  let work: string;
  let writerId: number;
  const body = randomBytes(3 * 1024 * 1024 + 17);
  const partialsOf = () => s.core.repos.uploads.receivingOf(writerId, PARTIAL);
  // The bytes staged for the user's first partial (0 while its row is made before its file).
  const stagedBytes = async () => {
    const row = (await partialsOf())[0];
    return row ? (statSync(s.core.uploads.staging.file(row.id), { throwIfNoEntry: false })?.size ?? 0) : 0;
  };
  const lftpArgs = (script: string) => ['-c', `set ftp:ssl-allow no; set ftp:passive-mode on; set net:max-retries 1; open -u writer,w-pass -p ${srv.port} 127.0.0.1; ${script}`];
  const other = async () => {
    const c = new Client(10_000);
    await c.access({ host: '127.0.0.1', port: srv.port, user: 'other', password: 'o-pass' });
    return c;
  };

  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
    const admin = await s.login();
    root = makeTree({ 'keep.txt': 'x' });
    work = mkdtempSync(path.join(os.tmpdir(), 'atrium-ftp-resume-'));
    writeFileSync(path.join(work, 'big.bin'), body);
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/s', root) })).code).toBe(200);
    for (const u of [
      { username: 'writer', password: 'w-pass', permission: FTP_BITS },
      { username: 'other', password: 'o-pass', permission: FTP_BITS },
    ]) {
      expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: u })).code).toBe(200);
    }
    writerId = (await s.core.repos.users.byUsername('writer'))!.id;
    srv = await startFtpServer(s.core, '127.0.0.1:0');
  });
  afterAll(async () => {
    await srv?.close();
    await s?.destroy();
    rmSync(root, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  it('lftp put killed mid-transfer keeps a partial only its user sees; put -c resumes it to identical bytes', async () => {
    const lftp = spawn('lftp', lftpArgs('set net:limit-rate 400000; put big.bin -o /s/big.bin'), { cwd: work, stdio: 'ignore' });
    await waitFor(async () => (await partialsOf()).length === 1, 20_000);
    // some bytes are in, then the client dies (both its connections close at once)
    const row = (await partialsOf())[0]!;
    await waitUntil(() => existsSync(s.core.uploads.staging.file(row.id)) && statSync(s.core.uploads.staging.file(row.id)).size > 300_000, 20_000);
    lftp.kill('SIGKILL');
    await waitFor(async () => ((await partialsOf())[0]?.received ?? 0) > 0, 20_000);
    const kept = (await partialsOf())[0]!.received;
    expect(kept).toBeLessThan(body.length);
    // no file under the real name; the writer sees the partial's size, another user nothing
    expect(existsSync(path.join(root, 'big.bin'))).toBe(false);
    const o = await other();
    try {
      await expect(o.size('/s/big.bin')).rejects.toThrow(/550/);
      expect((await o.list('/s')).map((e) => e.name)).toEqual(['keep.txt']);
    } finally {
      o.close();
    }
    const { stdout } = await run('lftp', lftpArgs('quote SIZE /s/big.bin; cls -l /s'), { cwd: work });
    expect(stdout).toContain(`213 ${kept}`);
    expect(stdout).toMatch(new RegExp(`${kept} .*big\\.bin`));
    // put -c: SIZE, REST <kept>, STOR; the file appears whole, the partial is gone
    await run('lftp', lftpArgs('put -c big.bin -o /s/big.bin'), { cwd: work });
    expect(readFileSync(path.join(root, 'big.bin')).equals(body)).toBe(true);
    expect(await partialsOf()).toEqual([]);
    expect(existsSync(s.core.uploads.staging.dir(row.id))).toBe(false);
  }, 60_000);

  // A killed client's two connections close together; on a loaded machine the control one can be
  // seen past the 50 ms grace, and the cut upload then counts as finished (as any FTP server has
  // to take it): the attempt is made again rather than the grace stretched for every upload.
  it('curl --append (APPE) continues a partial, then appends to the stored file', { retry: 2, timeout: 60_000 }, async () => {
    rmSync(path.join(root, 'appended.bin'), { force: true }); // what a failed attempt stored
    writeFileSync(path.join(work, 'head.bin'), body.subarray(0, 1_000_000));
    writeFileSync(path.join(work, 'tail.bin'), body.subarray(1_000_000));
    const url = `ftp://writer:w-pass@127.0.0.1:${srv.port}/s/appended.bin`;
    // an interrupted STOR: the client's control connection is gone when its data ends
    const cut = spawn('curl', ['-sS', '--limit-rate', '300k', '-T', path.join(work, 'head.bin'), url], { stdio: 'ignore' });
    await waitFor(async () => (await stagedBytes()) > 200_000, 20_000).catch((err: unknown) => {
      cut.kill('SIGKILL'); // a retry must not meet this attempt's client still uploading
      throw err;
    });
    cut.kill('SIGKILL');
    await waitFor(async () => ((await partialsOf())[0]?.received ?? 0) > 0, 20_000);
    const kept = (await partialsOf())[0]!.received;
    expect(existsSync(path.join(root, 'appended.bin'))).toBe(false);
    writeFileSync(path.join(work, 'rest.bin'), body.subarray(kept));
    await run('curl', ['-sS', '--append', '-T', path.join(work, 'rest.bin'), url]);
    expect(readFileSync(path.join(root, 'appended.bin')).equals(body)).toBe(true);
    // APPE onto the stored file (no partial) appends to it, stored atomically again
    await run('curl', ['-sS', '--append', '-T', path.join(work, 'tail.bin'), url]);
    expect(readFileSync(path.join(root, 'appended.bin')).equals(Buffer.concat([body, body.subarray(1_000_000)]))).toBe(true);
    expect(await partialsOf()).toEqual([]);
  });

  it('a partial expires with upload_expire_hours: no longer shown nor resumed, its bytes swept', async () => {
    const cut = spawn('lftp', lftpArgs('set net:limit-rate 300000; put big.bin -o /s/expiring.bin'), { cwd: work, stdio: 'ignore' });
    await waitFor(async () => (await stagedBytes()) > 100_000, 20_000).catch((err: unknown) => {
      cut.kill('SIGKILL');
      throw err;
    });
    cut.kill('SIGKILL');
    await waitFor(async () => ((await partialsOf())[0]?.received ?? 0) > 0, 20_000);
    const row = (await partialsOf())[0]!;
    // the last write 25 hours ago (the default expiry is 24 hours)
    await s.core.repos.uploads.setPartial(row.id, row.received, Date.now() - 25 * 3_600_000);
    // a change made in the database directly: the node reads the user's partials again after 2 s
    await new Promise((r) => setTimeout(r, 2100));
    const { stdout } = await run('lftp', lftpArgs('cls -l /s; quote SIZE /s/expiring.bin'), { cwd: work }).catch((e: { stdout: string }) => e);
    expect(stdout).not.toContain('expiring.bin');
    expect((await run('lftp', lftpArgs('quote SIZE /s/expiring.bin'), { cwd: work })).stdout).toMatch(/^550 /);
    expect(await s.core.uploads.sweep()).toBeGreaterThanOrEqual(1);
    expect(await partialsOf()).toEqual([]);
    expect(existsSync(s.core.uploads.staging.dir(row.id))).toBe(false);
  }, 60_000);
});

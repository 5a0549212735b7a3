import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client as FtpClient } from 'basic-ftp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProtocolListener } from '../../src/protocols/listeners.js';
import { startFtpServer } from '../../src/protocols/ftp/server.js';
import { BACKENDS, ONE_BACKEND } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { connectSftp, type SftpSession, startSftp } from '../helpers/sftp.js';
import { basic, listen } from '../webdav/dav-helpers.js';
import { waitFor } from '../helpers/wait.js';

// read, write, WebDAV read+manage, FTP/SFTP read+write
const ALL = 8 | 16 | 32 | 64 | 128 | 256 | 512 | 1024 | 2048;
const PASS = 'pass word 1';
const KIB = 1024;

interface SessionRow {
  session_id: string;
  user_id: number;
  username: string;
  kind: string;
  current: boolean;
}

/** A user with `fields` set (limits among them); answers the user's id. */
async function makeUser(s: TestServer, admin: string, name: string, fields: Record<string, unknown>): Promise<number> {
  const r = await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: name, password: PASS, base_path: '/disk', permission: ALL, ...fields } });
  expect(r.code, r.message).toBe(200);
  return (await s.core.repos.users.byUsername(name))!.id;
}

/**
 * Per-user and per-group limits (issue #41): the fields on user and group objects, the smallest
 * that applies, and max_sessions counted in the database (web sign-ins) on every engine.
 */
describe.each(BACKENDS)('account limits: fields and sessions ($name)', (backend) => {
  let s: TestServer;
  let root: string;
  let admin: string;

  beforeAll(async () => {
    s = await startServer(backend);
    root = makeTree({ 'a.txt': 'a' });
    admin = await s.login();
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/disk', root) })).code).toBe(200);
  });
  afterAll(async () => {
    await s?.destroy();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('users and groups carry the limits; the effective one is the smallest set; a bad value is refused', async () => {
    const g = await s.api('POST', '/api/admin/group/create', { token: admin, body: { name: 'slow', upload_rate: 1000, download_rate: 0, max_transfers: 3, max_sessions: 9 } });
    expect(g.code, g.message).toBe(200);
    const group = (await s.api('GET', '/api/admin/group/list', { token: admin })).data.content.find((x: { name: string }) => x.name === 'slow');
    expect(group).toMatchObject({ upload_rate: 1000, download_rate: 0, max_transfers: 3, max_sessions: 9 });
    const id = await makeUser(s, admin, 'lim', { upload_rate: 5000, download_rate: 2000, max_transfers: 0, max_sessions: 4, group_ids: [group.id] });
    const u = (await s.api('GET', `/api/admin/user/get?id=${id}`, { token: admin })).data;
    expect(u).toMatchObject({ upload_rate: 5000, download_rate: 2000, max_transfers: 0, max_sessions: 4 });
    expect(u.effective_limits).toEqual({ upload_rate: 1000, download_rate: 2000, max_transfers: 3, max_sessions: 4 });
    const bad = await s.api('POST', '/api/admin/user/update', { token: admin, body: { id, username: 'lim', max_sessions: -1 } });
    expect(bad.code).toBe(400);
    expect(bad.message).toMatch(/max_sessions/);
    // an update that leaves the limits out keeps them
    expect((await s.api('POST', '/api/admin/user/update', { token: admin, body: { id, username: 'lim', permission: ALL } })).code).toBe(200);
    expect((await s.api('GET', `/api/admin/user/get?id=${id}`, { token: admin })).data).toMatchObject({ upload_rate: 5000, max_sessions: 4 });
  });

  it('max_sessions: the next sign-in is refused with a clear error; ending one (own or by the admin) admits it again', async () => {
    const id = await makeUser(s, admin, 'two', { max_sessions: 2 });
    const first = await s.login('two', PASS);
    await s.login('two', PASS);
    const third = await s.api('POST', '/api/auth/login', { body: { username: 'two', password: PASS } });
    expect(third.code).toBe(429);
    expect(third.message).toMatch(/too many sessions: this account may have 2 at a time/);

    const mine = (await s.api('GET', '/api/me/sessions', { token: first })).data as SessionRow[];
    expect(mine.map((r) => r.kind)).toEqual(['web', 'web']);
    expect(mine.filter((r) => r.current)).toHaveLength(1);
    const other = mine.find((r) => !r.current)!;
    // another user's session id is not found for this user
    const stranger = await s.login();
    const strangerId = ((await s.api('GET', '/api/me/sessions', { token: stranger })).data as SessionRow[]).find((r) => r.current)!.session_id;
    expect((await s.api('POST', '/api/me/sessions/evict', { token: first, body: { session_id: strangerId } })).code).toBe(404);

    expect((await s.api('POST', '/api/me/sessions/evict', { token: first, body: { session_id: other.session_id } })).code).toBe(200);
    const again = await s.login('two', PASS);
    // the admin sees both and ends every one of them
    const listed = (await s.api('GET', `/api/admin/session/list?user_id=${id}`, { token: admin })).data as SessionRow[];
    expect(listed).toHaveLength(2);
    expect(listed.every((r) => r.username === 'two' && r.user_id === id)).toBe(true);
    const ended = await s.api('POST', '/api/admin/session/evict', { token: admin, body: { user_id: id, all: true } });
    expect(ended.data).toEqual({ ended: 2 });
    for (const t of [first, again]) expect((await s.api('GET', '/api/me', { token: t })).code).toBe(401);
    await s.login('two', PASS);
  });
});

/**
 * The limits as they run (SQLite: the database decides nothing here): rates shared by one user's
 * transfers on every front and compared with an unlimited user's in the same run, max_transfers,
 * and max_sessions over SFTP and FTP, with sessions listed and ended.
 */
describe.each(ONE_BACKEND)('account limits at work ($name)', (backend) => {
  let s: TestServer;
  let root: string;
  let admin: string;
  let base: string;
  let sftpSrv: ProtocolListener;
  let ftpSrv: ProtocolListener;
  const sftps: SftpSession[] = [];
  const ftps: FtpClient[] = [];
  const body = Buffer.alloc(256 * KIB, 7);
  const dav = (user: string, p: string, init: RequestInit = {}) => fetch(`${base}/dav${p}`, { ...init, headers: { authorization: basic(user, PASS), ...(init.headers ?? {}) } });
  /** Seconds a WebDAV GET of `p` by `user` takes, with the bytes checked. */
  const timedGet = async (user: string, p: string) => {
    const t0 = performance.now();
    const r = await dav(user, p);
    expect(r.status).toBe(200);
    expect(Buffer.from(await r.arrayBuffer()).equals(body)).toBe(true);
    return (performance.now() - t0) / 1000;
  };

  beforeAll(async () => {
    s = await startServer(backend);
    root = makeTree({});
    for (const n of ['one.bin', 'two.bin', 'three.bin']) writeFileSync(path.join(root, n), body);
    admin = await s.login();
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/disk', root) })).code).toBe(200);
    // 128 KiB/s each way for "slow" (from its group), none for "fast"
    const g = await s.api('POST', '/api/admin/group/create', { token: admin, body: { name: 'metered', upload_rate: 128 * KIB, download_rate: 128 * KIB } });
    expect(g.code, g.message).toBe(200);
    const group = (await s.api('GET', '/api/admin/group/list', { token: admin })).data.content.find((x: { name: string }) => x.name === 'metered');
    await makeUser(s, admin, 'slow', { group_ids: [group.id] });
    await makeUser(s, admin, 'fast', {});
    await makeUser(s, admin, 'single', { max_transfers: 1, download_rate: 64 * KIB });
    await makeUser(s, admin, 'pair', { max_sessions: 2 });
    base = await listen(s);
    sftpSrv = await startSftp(s);
    ftpSrv = await startFtpServer(s.core, '127.0.0.1:0');
  });
  afterAll(async () => {
    for (const c of ftps) c.close();
    for (const x of sftps) x.end();
    await sftpSrv?.close();
    await ftpSrv?.close();
    await s?.destroy();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('two parallel downloads of one user share the download rate; another user is not slowed', async () => {
    const unlimited = await timedGet('fast', '/one.bin');
    const t0 = performance.now();
    const [a, b, other] = await Promise.all([timedGet('slow', '/one.bin'), timedGet('slow', '/two.bin'), timedGet('fast', '/three.bin')]);
    const both = (performance.now() - t0) / 1000;
    // 512 KiB at 128 KiB/s with a tenth of a second sent ahead: at least ~3.9 s for the pair
    expect(Math.max(a, b)).toBeGreaterThan(3.5);
    const rate = (2 * body.length) / Math.max(a, b);
    expect(rate).toBeLessThan(1.2 * 128 * KIB);
    // the other user's download, run alongside, is as fast as an unlimited one, not paced
    expect(other).toBeLessThan(Math.max(a, b) / 4);
    expect(unlimited).toBeLessThan(Math.max(a, b) / 4);
    expect(both).toBeGreaterThanOrEqual(Math.max(a, b));
  }, 60_000);

  it('an upload is paced by the upload rate, and the bytes land whole', async () => {
    const t0 = performance.now();
    const r = await dav('slow', '/up.bin', { method: 'PUT', body });
    expect(r.status).toBeLessThan(300);
    const took = (performance.now() - t0) / 1000;
    expect(took).toBeGreaterThan(1.5); // 256 KiB at 128 KiB/s
    expect(readFileSync(path.join(root, 'up.bin')).equals(body)).toBe(true);
  }, 30_000);

  it('max_transfers: a second transfer while one runs is refused (WebDAV 429), and admitted once it ended', async () => {
    const singleId = (await s.core.repos.users.byUsername('single'))!.id;
    const running = timedGet('single', '/one.bin'); // 256 KiB at 64 KiB/s: ~4 s
    await waitFor(() => s.core.meters.transfers(singleId) === 1, 10_000);
    const second = await dav('single', '/two.bin');
    expect(second.status).toBe(429);
    expect(await second.text()).toMatch(/too many transfers/);
    await running;
    const third = await dav('single', '/two.bin', { headers: { range: 'bytes=0-9' } });
    expect(third.status).toBe(206);
  }, 30_000);

  it('max_sessions over SFTP and FTP: the session past the limit is refused; listed and ended from the API', async () => {
    const port = sftpSrv.port;
    sftps.push(await connectSftp(port, { username: 'pair', password: PASS }));
    const ftp = new FtpClient(10_000);
    ftps.push(ftp);
    await ftp.access({ host: '127.0.0.1', port: ftpSrv.port, user: 'pair', password: PASS });
    // a third one: SFTP refuses the login, FTP answers 421 with the reason
    await expect(connectSftp(port, { username: 'pair', password: PASS })).rejects.toThrow(/authentication/i);
    const third = new FtpClient(10_000);
    ftps.push(third);
    await expect(third.access({ host: '127.0.0.1', port: ftpSrv.port, user: 'pair', password: PASS })).rejects.toThrow(/421.*too many sessions/);
    const web = await s.api('POST', '/api/auth/login', { body: { username: 'pair', password: PASS } });
    expect(web.code).toBe(429);

    // the admin sees the two connections and ends the SFTP one: its connection closes
    const pairId = (await s.core.repos.users.byUsername('pair'))!.id;
    const listed = (await s.api('GET', `/api/admin/session/list?user_id=${pairId}`, { token: admin })).data as SessionRow[];
    expect(listed.map((r) => r.kind).sort()).toEqual(['ftp', 'sftp']);
    const closed = new Promise<void>((resolve) => sftps[0]!.client.once('close', () => resolve()));
    expect((await s.api('POST', '/api/admin/session/evict', { token: admin, body: { session_id: listed.find((r) => r.kind === 'sftp')!.session_id } })).code).toBe(200);
    await closed;
    // room again: a web sign-in now works, and lists itself beside the FTP session
    const token = await s.login('pair', PASS);
    const mine = (await s.api('GET', '/api/me/sessions', { token })).data as SessionRow[];
    expect(mine.map((r) => r.kind).sort()).toEqual(['ftp', 'web']);
  }, 60_000);
});

import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WopiTokens } from '../../src/wopi/tokens.js';
import { utf7Decode, utf7Encode } from '../../src/wopi/utf7.js';
import { actionUrl, parseDiscovery } from '../../src/wopi/discovery.js';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { call, connectSftp, type SftpSession, startSftp } from '../helpers/sftp.js';
import { dropRedisKeys, REDIS_URL, redisReachable } from '../helpers/redis.js';

const PASS = 'wopi editor 1';
// write, rename, WebDAV read + manage, FTP/SFTP read + write
const BITS = 8 | 16 | 256 | 512 | 1024 | 2048;

/** A discovery XML as Collabora/ONLYOFFICE serve it: placeholders in urlsrc, entities escaped. */
const DISCOVERY = (base: string) => `<?xml version="1.0" encoding="utf-8"?>
<wopi-discovery>
  <net-zone name="external-http">
    <app name="Word" favIconUrl="${base}/word.ico">
      <action name="view" ext="docx" urlsrc="${base}/word/view?&lt;ui=UI_LLCC&amp;&gt;&lt;rs=DC_LLCC&amp;&gt;&lt;dchat=DISABLE_CHAT&amp;&gt;&lt;e=EMBEDDED&amp;&gt;"/>
      <action name="edit" ext="docx" requires="locks,update" urlsrc="${base}/word/edit?&lt;ui=UI_LLCC&amp;&gt;&lt;thm=THEME_ID&amp;&gt;"/>
    </app>
    <app name="Pdf">
      <action name="view" ext="pdf" urlsrc="${base}/pdf/view"/>
    </app>
  </net-zone>
</wopi-discovery>`;

describe('WOPI pieces', () => {
  it('UTF-7 round trips names with non-ASCII and plus signs, and decodes what Office sends', () => {
    for (const name of ['Bericht über März.docx', 'a+b.docx', '日本語.xlsx', 'plain.docx', '😀 smile.pptx']) expect(utf7Decode(utf7Encode(name))).toBe(name);
    expect(utf7Decode('Hi Mom -+Jjo--!')).toBe('Hi Mom -\u263a-!');
    expect(utf7Decode('A+ImIDkQ.')).toBe('A\u2262\u0391.');
    expect(utf7Decode('1 +- 1')).toBe('1 + 1');
  });

  it('fills the action URL: known placeholders set, the others removed, WOPISrc added', () => {
    const d = parseDiscovery(DISCOVERY('https://office.example'));
    const view = d.get('docx')!.find((a) => a.name === 'view')!;
    expect(actionUrl(view.urlsrc, { wopiSrc: 'https://h/api/wopi/files/x1', lang: 'de-DE' })).toBe(
      'https://office.example/word/view?ui=de-DE&rs=de-DE&WOPISrc=https%3A%2F%2Fh%2Fapi%2Fwopi%2Ffiles%2Fx1',
    );
    expect(actionUrl(d.get('pdf')![0]!.urlsrc, { wopiSrc: 'w', lang: 'en' })).toBe('https://office.example/pdf/view?WOPISrc=w');
    expect(actionUrl('https://c/cool.html?', { wopiSrc: 'w', lang: 'en' })).toBe('https://c/cool.html?WOPISrc=w');
  });
});

describe.each(BACKENDS)('WOPI host, walking the WOPI validator\'s checks ($name)', (backend) => {
  let s: TestServer;
  let admin: string;
  let root: string;
  let discovery: http.Server;
  let discoveryBase: string;
  let sftpSrv: { port: number; close(): Promise<void> };
  let sftp: SftpSession;
  let user: { id: number } & Record<string, unknown>;

  const onDisk = (rel: string) => readFileSync(path.join(root, rel), 'utf8');
  const setSetting = (key: string, value: string) => s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key, value }] });
  const updateUser = async (changes: Record<string, unknown>) => {
    expect((await s.api('POST', '/api/admin/user/update', { token: admin, body: { ...user, ...changes } })).code).toBe(200);
  };
  let editor: string;
  const session = async (p: string, edit = true, token = editor) => s.api('POST', '/api/wopi/create-session', { token, body: { path: p, edit, service: 'Office' } });

  /** A WOPI client's request: the callback URL from WOPISrc, the token in the query. */
  const wopi = (src: string, token: string, o: { method?: 'GET' | 'POST'; sub?: string; headers?: Record<string, string>; body?: string | Buffer } = {}) =>
    s.inject({
      method: o.method ?? 'GET',
      url: `${new URL(src).pathname}${o.sub ?? ''}?access_token=${encodeURIComponent(token)}`,
      headers: { ...(o.body !== undefined ? { 'content-type': 'application/octet-stream' } : {}), ...o.headers },
      payload: o.body,
    });
  const op = (src: string, token: string, override: string, headers: Record<string, string> = {}, body?: string) =>
    wopi(src, token, { method: 'POST', headers: { 'x-wopi-override': override, ...headers }, body: body ?? '' });
  const putFile = (src: string, token: string, bytes: string, lock?: string) =>
    wopi(src, token, { method: 'POST', sub: '/contents', headers: { 'x-wopi-override': 'PUT', ...(lock !== undefined ? { 'x-wopi-lock': lock } : {}) }, body: bytes });

  beforeAll(async () => {
    s = await startServer(backend);
    admin = await s.login();
    root = makeTree({ 'docs/report.docx': 'report v1', 'docs/empty.docx': '', 'docs/other.docx': 'other v1', 'docs/notes.txt': 'x' });
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/disk', root) })).code).toBe(200);
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'ed', password: PASS, base_path: '/disk', permission: BITS } })).code).toBe(200);
    expect((await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'viv', password: PASS, base_path: '/disk', permission: 0 } })).code).toBe(200);
    user = (await s.api('GET', '/api/admin/user/list', { token: admin })).data.content.find((u: { username: string }) => u.username === 'ed');
    editor = await s.login('ed', PASS);
    discovery = http.createServer((req, res) => {
      if (req.url === '/hosting/discovery') res.writeHead(200, { 'content-type': 'text/xml' }).end(DISCOVERY(discoveryBase));
      else res.writeHead(404).end();
    });
    await new Promise<void>((r) => discovery.listen(0, '127.0.0.1', r));
    discoveryBase = `http://127.0.0.1:${(discovery.address() as AddressInfo).port}`;
    sftpSrv = await startSftp(s);
    sftp = await connectSftp(sftpSrv.port, { username: 'ed', password: PASS });
  });
  afterAll(async () => {
    sftp?.end();
    await sftpSrv?.close();
    await new Promise((r) => discovery?.close(r));
    await s?.destroy();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('create-session: refused while WOPI is off and for a loopback discovery without url_fetch_allow_private; then the action URL, WOPISrc and a 10-hour token', async () => {
    expect(await session('/docs/report.docx')).toMatchObject({ code: 400, message: 'WOPI is not enabled' });
    await setSetting('wopi_enabled', 'true');
    await setSetting('wopi_services', JSON.stringify([{ name: 'Office', discovery_url: `${discoveryBase}/hosting/discovery`, extensions: ['docx', 'pdf'] }]));
    const blocked = await session('/docs/report.docx');
    expect(blocked.code).toBe(403);
    expect(blocked.message).toContain('url_fetch_allow_private');
    await setSetting('url_fetch_allow_private', 'true');

    const r = await session('/docs/report.docx');
    expect(r.code).toBe(200);
    const d = r.data;
    expect(d.mode).toBe('edit');
    expect(d.action).toBe('edit');
    expect(d.wopi_src).toMatch(/^http:\/\/localhost(:80)?\/api\/wopi\/files\/[A-Za-z0-9_-]{16,}$/);
    expect(d.editor_url).toBe(`${discoveryBase}/word/edit?ui=en-US&WOPISrc=${encodeURIComponent(d.wopi_src)}`);
    // OpenList's meaning of action_url: the action without its query (its front end appends `?WOPISrc=…&lang=…`)
    expect(d.action_url).toBe(`${discoveryBase}/word/edit`);
    const asOpenListBuildsIt = new URL(`${d.action_url}?${new URLSearchParams({ WOPISrc: d.wopi_src_url, lang: 'en-us', ui: 'en-us', thm: '1' })}`);
    expect(asOpenListBuildsIt.pathname).toBe('/word/edit');
    expect(asOpenListBuildsIt.searchParams.getAll('WOPISrc')).toEqual([d.wopi_src]);
    expect(d.access_token_ttl).toBeGreaterThan(Date.now() + 9.9 * 3600_000);
    expect(d.access_token_ttl).toBeLessThanOrEqual(Date.now() + 10 * 3600_000);
    // OpenList's front end reads these names
    expect(d.session).toEqual({ id: d.wopi_src.split('/').pop(), access_token: d.access_token, expires: d.access_token_ttl });
    expect(d.wopi_src_url).toBe(d.wopi_src);
    // the id is stable: the same file, another session (and another user) → the same WOPISrc
    expect((await session('/docs/report.docx', false)).data.wopi_src).toBe(d.wopi_src);
    const viewer = await s.login('viv', PASS);
    const v = await session('/docs/report.docx', true, viewer);
    expect(v.data).toMatchObject({ mode: 'view', action: 'view', wopi_src: d.wopi_src });
    expect(v.data.editor_url).toContain('/word/view?ui=en-US&rs=en-US&WOPISrc=');
    expect(v.data.action_url).toBe(`${discoveryBase}/word/view`);
    // no service for .txt, and a folder is not a document
    expect((await session('/docs/notes.txt')).code).toBe(400);
    expect((await session('/docs')).code).toBe(400);
    expect((await session('/docs/missing.docx')).code).not.toBe(200);
    // a file behind a folder password: the office's calls could not give it, so no session
    expect((await s.api('POST', '/api/admin/meta/create', { token: admin, body: { path: '/disk/vault', password: 'vault-pw', p_sub: true } })).code).toBe(200);
    makeTree({ 'locked.docx': 'in the vault' }, path.join(root, 'vault'));
    const vault = await s.api('POST', '/api/wopi/create-session', { token: editor, body: { path: '/vault/locked.docx', edit: true, password: 'vault-pw' } });
    expect(vault).toMatchObject({ code: 403, message: expect.stringContaining('folder password') });
  });

  it('CheckFileInfo: the required properties and what the user may do now; GetFile: the bytes with X-WOPI-ItemVersion', async () => {
    const { wopi_src: src, access_token: t } = (await session('/docs/report.docx')).data;
    const r = await wopi(src, t);
    expect(r.statusCode).toBe(200);
    const info = r.json();
    expect(info).toMatchObject({
      BaseFileName: 'report.docx',
      Size: 9,
      UserId: String(user.id),
      UserFriendlyName: 'ed',
      UserCanWrite: true,
      ReadOnly: false,
      SupportsLocks: true,
      SupportsGetLock: true,
      SupportsUpdate: true,
      SupportsRename: true,
      UserCanRename: true,
      SupportsExtendedLockLength: true,
      UserCanNotWriteRelative: false,
      BreadcrumbFolderName: 'docs',
      FileExtension: '.docx',
    });
    expect(typeof info.OwnerId).toBe('string');
    expect(typeof info.Version).toBe('string');
    expect(new Date(info.LastModifiedTime).toISOString()).toBe(info.LastModifiedTime);
    for (const v of Object.values(info)) expect(v).not.toBeNull();

    const g = await wopi(src, t, { sub: '/contents' });
    expect(g.statusCode).toBe(200);
    expect(g.body).toBe('report v1');
    expect(g.headers['x-wopi-itemversion']).toBe(info.Version);
    expect((await wopi(src, t, { sub: '/contents', headers: { 'x-wopi-maxexpectedsize': '3' } })).statusCode).toBe(412);

    // a view session: read-only, and every change refused
    const view = (await session('/docs/report.docx', false)).data;
    expect((await wopi(src, view.access_token)).json()).toMatchObject({ UserCanWrite: false, ReadOnly: true, UserCanRename: false, UserCanNotWriteRelative: true });
    expect((await op(src, view.access_token, 'LOCK', { 'x-wopi-lock': 'v' })).statusCode).toBe(401);
    expect((await putFile(src, view.access_token, 'nope', 'v')).statusCode).toBe(401);
    expect(onDisk('docs/report.docx')).toBe('report v1');
  });

  it('locks: Lock, GetLock, mismatches (409 + X-WOPI-Lock), RefreshLock, UnlockAndRelock, PutFile with and without the lock, Unlock', async () => {
    const { wopi_src: src, access_token: t } = (await session('/docs/report.docx')).data;
    // an unlocked file with content: PutFile is a conflict naming no lock
    let r = await putFile(src, t, 'no lock');
    expect(r.statusCode).toBe(409);
    expect(r.headers['x-wopi-lock']).toBe('');
    expect(onDisk('docs/report.docx')).toBe('report v1');

    expect((await op(src, t, 'GET_LOCK')).headers['x-wopi-lock']).toBe('');
    expect((await op(src, t, 'LOCK', { 'x-wopi-lock': 'lock-A' })).statusCode).toBe(200);
    expect((await op(src, t, 'GET_LOCK')).headers['x-wopi-lock']).toBe('lock-A');
    // the same lock again is a refresh
    expect((await op(src, t, 'LOCK', { 'x-wopi-lock': 'lock-A' })).statusCode).toBe(200);
    for (const override of ['LOCK', 'REFRESH_LOCK', 'UNLOCK']) {
      r = await op(src, t, override, { 'x-wopi-lock': 'lock-B' });
      expect([override, r.statusCode]).toEqual([override, 409]);
      expect(r.headers['x-wopi-lock']).toBe('lock-A');
    }
    r = await putFile(src, t, 'wrong lock', 'lock-B');
    expect(r.statusCode).toBe(409);
    expect(r.headers['x-wopi-lock']).toBe('lock-A');
    expect(onDisk('docs/report.docx')).toBe('report v1');

    const before = (await wopi(src, t)).json().Version;
    r = await putFile(src, t, 'report v2 saved', 'lock-A');
    expect(r.statusCode).toBe(200);
    expect(onDisk('docs/report.docx')).toBe('report v2 saved');
    const after = (await wopi(src, t)).json();
    expect(after.Version).not.toBe(before);
    expect(after.Size).toBe(15);
    expect(r.headers['x-wopi-itemversion']).toBe(after.Version);
    expect(r.json()).toEqual({ LastModifiedTime: after.LastModifiedTime });

    // UnlockAndRelock: the old lock must match
    r = await op(src, t, 'LOCK', { 'x-wopi-lock': 'lock-C', 'x-wopi-oldlock': 'lock-X' });
    expect(r.statusCode).toBe(409);
    expect(r.headers['x-wopi-lock']).toBe('lock-A');
    expect((await op(src, t, 'LOCK', { 'x-wopi-lock': 'lock-C', 'x-wopi-oldlock': 'lock-A' })).statusCode).toBe(200);
    expect((await op(src, t, 'GET_LOCK')).headers['x-wopi-lock']).toBe('lock-C');
    expect((await op(src, t, 'REFRESH_LOCK', { 'x-wopi-lock': 'lock-C' })).statusCode).toBe(200);
    // the lock is a row of the lock table WebDAV uses (30 minutes, depth 0, exclusive)
    const rows = await s.core.db.db.selectFrom('dav_locks').selectAll().where('root', '=', '/disk/docs/report.docx').execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ depth: '0', scope: 'exclusive' });
    expect(Number(rows[0]!.timeout)).toBe(1800);
    expect(rows[0]!.owner).toContain('lock-C');

    expect((await op(src, t, 'UNLOCK', { 'x-wopi-lock': 'lock-C' })).statusCode).toBe(200);
    r = await op(src, t, 'UNLOCK', { 'x-wopi-lock': 'lock-C' });
    expect(r.statusCode).toBe(409);
    expect(r.headers['x-wopi-lock']).toBe('');
    expect((await op(src, t, 'GET_LOCK')).headers['x-wopi-lock']).toBe('');
    expect((await op(src, t, 'LOCK', { 'x-wopi-lock': 'x'.repeat(1025) })).statusCode).toBe(400);
    expect((await op(src, t, 'DELETE')).statusCode).toBe(501);
  });

  it('PutFile of an empty unlocked file is allowed; a body past wopi_max_file_size is 413', async () => {
    const { wopi_src: src, access_token: t } = (await session('/docs/empty.docx')).data;
    expect((await putFile(src, t, 'first bytes')).statusCode).toBe(200);
    expect(onDisk('docs/empty.docx')).toBe('first bytes');
    // no longer empty: a lock is needed now
    expect((await putFile(src, t, 'second')).statusCode).toBe(409);
    await setSetting('wopi_max_file_size', '16');
    expect((await op(src, t, 'LOCK', { 'x-wopi-lock': 'L' })).statusCode).toBe(200);
    expect((await putFile(src, t, 'x'.repeat(17), 'L')).statusCode).toBe(413);
    expect(onDisk('docs/empty.docx')).toBe('first bytes');
    // a chunked body (no Content-Length) is counted as it arrives
    await s.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (s.app.server.address() as AddressInfo).port;
    const chunked = (parts: string[]) =>
      new Promise<number>((resolve, reject) => {
        const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: `${new URL(src).pathname}/contents?access_token=${encodeURIComponent(t)}`, headers: { 'x-wopi-override': 'PUT', 'x-wopi-lock': 'L', 'transfer-encoding': 'chunked' } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        for (const part of parts) req.write(part);
        req.end();
      });
    const status = await chunked(['xxxxxxxx', 'xxxxxxxx', 'xxxxxxxx']);
    expect(status).toBe(413);
    expect(onDisk('docs/empty.docx')).toBe('first bytes');
    expect(await chunked(['chunked ', 'in two'])).toBe(200);
    expect(onDisk('docs/empty.docx')).toBe('chunked in two');
    expect((await putFile(src, t, 'x'.repeat(16), 'L')).statusCode).toBe(200);
    expect(onDisk('docs/empty.docx')).toBe('x'.repeat(16));
    await setSetting('wopi_max_file_size', '104857600');
    expect((await op(src, t, 'UNLOCK', { 'x-wopi-lock': 'L' })).statusCode).toBe(200);
  });

  it('a WOPI lock refuses an API PUT, a WebDAV PUT and an SFTP write of the file; released, they write', async () => {
    const { wopi_src: src, access_token: t } = (await session('/docs/other.docx')).data;
    expect((await op(src, t, 'LOCK', { 'x-wopi-lock': 'held' })).statusCode).toBe(200);
    const apiPut = async (text: string) =>
      JSON.parse((await s.inject({ method: 'PUT', url: '/api/fs/put', headers: { authorization: editor, 'file-path': encodeURIComponent('/docs/other.docx'), 'content-type': 'application/octet-stream' }, payload: text })).body);
    const davPut = async (text: string) =>
      (await s.inject({ method: 'PUT', url: '/dav/docs/other.docx', headers: { authorization: `Basic ${Buffer.from(`ed:${PASS}`).toString('base64')}` }, payload: text })).statusCode;
    const sftpPut = async (text: string) => {
      try {
        const h = await call<Buffer>(sftp.sftp, 'open', '/docs/other.docx', 'w');
        await call(sftp.sftp, 'write', h, Buffer.from(text), 0, text.length, 0);
        await call(sftp.sftp, 'close', h);
        return 'ok';
      } catch (err) {
        return (err as Error).message;
      }
    };
    expect(await apiPut('api')).toMatchObject({ code: 403, message: expect.stringContaining('file is locked') });
    expect(await davPut('dav')).toBe(423);
    expect(await sftpPut('sftp')).toContain('file is locked');
    expect(onDisk('docs/other.docx')).toBe('other v1');
    // a WebDAV lock on the file is a conflict for WOPI too
    expect((await op(src, t, 'UNLOCK', { 'x-wopi-lock': 'held' })).statusCode).toBe(200);
    expect((await apiPut('api v2')).code).toBe(200);
    expect(await davPut('dav v3')).toBeLessThan(300);
    expect(onDisk('docs/other.docx')).toBe('dav v3');
    // the other way round: a WebDAV lock on the file is a conflict for WOPI (no WOPI lock id to name)
    const auth = { authorization: `Basic ${Buffer.from(`ed:${PASS}`).toString('base64')}` };
    const lockBody = '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>';
    const davLock = await s.inject({ method: 'LOCK' as 'GET', url: '/dav/docs/other.docx', headers: { ...auth, timeout: 'Second-600' }, payload: lockBody });
    expect(davLock.statusCode).toBe(200);
    let r = await op(src, t, 'LOCK', { 'x-wopi-lock': 'wopi' });
    expect(r.statusCode).toBe(409);
    expect(r.headers['x-wopi-lock']).toBe('');
    expect(r.headers['x-wopi-lockfailurereason']).toContain('WebDAV');
    r = await putFile(src, t, 'over a dav lock', 'wopi');
    expect(r.statusCode).toBe(409);
    expect(onDisk('docs/other.docx')).toBe('dav v3');
    expect((await s.inject({ method: 'UNLOCK' as 'GET', url: '/dav/docs/other.docx', headers: { ...auth, 'lock-token': davLock.headers['lock-token'] as string } })).statusCode).toBe(204);
  });

  it('PUT_RELATIVE: a suggested extension or name (the host picks a free name), an exact name (409 + X-WOPI-ValidRelativeTarget, overwrite, locked target), both headers 501', async () => {
    const { wopi_src: src, access_token: t } = (await session('/docs/report.docx')).data;
    let r = await op(src, t, 'PUT_RELATIVE', { 'x-wopi-suggestedtarget': '.pdf', 'x-wopi-size': '3' }, 'pdf');
    expect(r.statusCode).toBe(200);
    let j = r.json();
    expect(j.Name).toBe('report.pdf');
    expect(onDisk('docs/report.pdf')).toBe('pdf');
    // its Url is a WOPISrc with a token of its own, for the new file
    const url = new URL(j.Url);
    expect(url.pathname).toMatch(/^\/api\/wopi\/files\/[A-Za-z0-9_-]+$/);
    expect(url.pathname).not.toBe(new URL(src).pathname);
    const fresh = await s.inject({ method: 'GET', url: `${url.pathname}${url.search}` });
    expect(fresh.json()).toMatchObject({ BaseFileName: 'report.pdf', Size: 3 });
    // the same again: the name is taken, so the host makes it free
    r = await op(src, t, 'PUT_RELATIVE', { 'x-wopi-suggestedtarget': '.pdf' }, 'pdf2');
    expect(r.json().Name).toBe('report (1).pdf');
    r = await op(src, t, 'PUT_RELATIVE', { 'x-wopi-suggestedtarget': utf7Encode('Bericht über/März.docx') }, 'utf7');
    expect(r.json().Name).toBe('Bericht über_März.docx');
    expect(onDisk('docs/Bericht über_März.docx')).toBe('utf7');

    // exact name taken, no overwrite: 409 with a free name (UTF-7)
    r = await op(src, t, 'PUT_RELATIVE', { 'x-wopi-relativetarget': utf7Encode('other.docx') }, 'replace');
    expect(r.statusCode).toBe(409);
    expect(utf7Decode(r.headers['x-wopi-validrelativetarget'] as string)).toBe('other (1).docx');
    expect(onDisk('docs/other.docx')).toBe('dav v3');
    // overwrite, but the target is WOPI-locked: 409 with its lock
    const other = (await session('/docs/other.docx')).data;
    expect((await op(other.wopi_src, other.access_token, 'LOCK', { 'x-wopi-lock': 'other-lock' })).statusCode).toBe(200);
    r = await op(src, t, 'PUT_RELATIVE', { 'x-wopi-relativetarget': 'other.docx', 'x-wopi-overwriterelativetarget': 'true' }, 'replace');
    expect(r.statusCode).toBe(409);
    expect(r.headers['x-wopi-lock']).toBe('other-lock');
    expect((await op(other.wopi_src, other.access_token, 'UNLOCK', { 'x-wopi-lock': 'other-lock' })).statusCode).toBe(200);
    r = await op(src, t, 'PUT_RELATIVE', { 'x-wopi-relativetarget': 'other.docx', 'x-wopi-overwriterelativetarget': 'true' }, 'replaced');
    expect(r.statusCode).toBe(200);
    expect(r.json().Name).toBe('other.docx');
    expect(onDisk('docs/other.docx')).toBe('replaced');
    // the id of a file is one, whoever made it
    expect(new URL(r.json().Url).pathname).toBe(new URL(other.wopi_src).pathname);
    // an exact name that is not a name
    r = await op(src, t, 'PUT_RELATIVE', { 'x-wopi-relativetarget': 'a/b.docx' }, 'x');
    expect(r.statusCode).toBe(400);
    r = await op(src, t, 'PUT_RELATIVE', { 'x-wopi-relativetarget': 'x.docx', 'x-wopi-suggestedtarget': '.docx' }, 'x');
    expect(r.statusCode).toBe(501);
    expect(existsSync(path.join(root, 'docs/x.docx'))).toBe(false);
  });

  it('RENAME_FILE: the lock is checked, the extension kept, the id and the lock follow the file; an invalid name is 400 + X-WOPI-InvalidFileNameError', async () => {
    writeFileSync(path.join(root, 'docs/draft.docx'), 'draft');
    const { wopi_src: src, access_token: t } = (await session('/docs/draft.docx')).data;
    expect((await op(src, t, 'LOCK', { 'x-wopi-lock': 'R' })).statusCode).toBe(200);
    let r = await op(src, t, 'RENAME_FILE', { 'x-wopi-lock': 'other', 'x-wopi-requestedname': 'final' });
    expect(r.statusCode).toBe(409);
    expect(r.headers['x-wopi-lock']).toBe('R');
    r = await op(src, t, 'RENAME_FILE', { 'x-wopi-lock': 'R', 'x-wopi-requestedname': 'bad/name' });
    expect(r.statusCode).toBe(400);
    expect(r.headers['x-wopi-invalidfilenameerror']).toBeTruthy();
    r = await op(src, t, 'RENAME_FILE', { 'x-wopi-lock': 'R', 'x-wopi-requestedname': utf7Encode('Endfassung ä') });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({ Name: 'Endfassung ä' });
    expect(existsSync(path.join(root, 'docs/draft.docx'))).toBe(false);
    expect(onDisk('docs/Endfassung ä.docx')).toBe('draft');
    // the same WOPISrc and token name the renamed file; its lock came along
    expect((await wopi(src, t)).json().BaseFileName).toBe('Endfassung ä.docx');
    expect((await op(src, t, 'GET_LOCK')).headers['x-wopi-lock']).toBe('R');
    expect((await putFile(src, t, 'final text', 'R')).statusCode).toBe(200);
    expect(onDisk('docs/Endfassung ä.docx')).toBe('final text');
    // the lock protects the new name on the other fronts
    const apiPut = await s.inject({ method: 'PUT', url: '/api/fs/put', headers: { authorization: editor, 'file-path': encodeURIComponent('/docs/Endfassung ä.docx'), 'content-type': 'application/octet-stream' }, payload: 'x' });
    expect(apiPut.json().message).toContain('file is locked');
    // a taken name is made free
    r = await op(src, t, 'RENAME_FILE', { 'x-wopi-lock': 'R', 'x-wopi-requestedname': 'other' });
    expect(r.json()).toEqual({ Name: 'other (1)' });
    expect((await op(src, t, 'UNLOCK', { 'x-wopi-lock': 'R' })).statusCode).toBe(200);
  });

  it('fair under load: callbacks from one office address count for the user each token names', async () => {
    const ed = (await session('/docs/report.docx')).data;
    const viv = (await session('/docs/report.docx', false, await s.login('viv', PASS))).data;
    await setSetting('max_requests_per_user', '1');
    await setSetting('max_request_wait', '1');
    if (!s.app.server.listening) await s.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (s.app.server.address() as AddressInfo).port;
    expect((await op(ed.wopi_src, ed.access_token, 'LOCK', { 'x-wopi-lock': 'F' })).statusCode).toBe(200);
    const before = onDisk('docs/report.docx');
    // ed's save holds ed's one slot while its body trickles in
    let answered: number | undefined;
    const held = http.request({ host: '127.0.0.1', port, method: 'POST', path: `${new URL(ed.wopi_src).pathname}/contents?access_token=${encodeURIComponent(ed.access_token)}`, headers: { 'x-wopi-override': 'PUT', 'x-wopi-lock': 'F', 'transfer-encoding': 'chunked' } }, (res) => {
      res.resume();
      answered = res.statusCode;
    });
    held.on('error', () => undefined);
    held.write('partial');
    await new Promise((r) => setTimeout(r, 200));
    try {
      // viv's editor, from the same address, is not queued behind ed
      expect((await wopi(viv.wopi_src, viv.access_token)).statusCode).toBe(200);
      // ed's next call waits for ed's slot, then is told to retry
      expect((await wopi(ed.wopi_src, ed.access_token)).statusCode).toBe(429);
    } finally {
      held.destroy();
      await setSetting('max_requests_per_user', '0');
      await setSetting('max_request_wait', '30');
    }
    expect(answered).toBeUndefined();
    // the cut save left the file as it was
    await new Promise((r) => setTimeout(r, 100));
    expect(onDisk('docs/report.docx')).toBe(before);
    expect((await op(ed.wopi_src, ed.access_token, 'UNLOCK', { 'x-wopi-lock': 'F' })).statusCode).toBe(200);
  });

  it('tokens: missing, forged, expired, for another file, an unknown id', async () => {
    const a = (await session('/docs/report.docx')).data;
    const b = (await session('/docs/empty.docx')).data;
    expect((await s.inject({ method: 'GET', url: new URL(a.wopi_src).pathname })).statusCode).toBe(401);
    expect((await wopi(a.wopi_src, `${a.access_token}x`)).statusCode).toBe(401);
    expect((await wopi(a.wopi_src, 'garbage')).statusCode).toBe(401);
    // a token for another file
    expect((await wopi(a.wopi_src, b.access_token)).statusCode).toBe(401);
    expect((await putFile(a.wopi_src, b.access_token, 'cross')).statusCode).toBe(401);
    // expired: issued 10 h and a minute ago
    const past = new WopiTokens(s.core.config.jwt_secret, () => Date.now() - 10 * 3600_000 - 60_000);
    const fileId = a.session.id;
    const old = past.issue({ fileId, userId: user.id, pwdTs: (await s.core.repos.users.byId(user.id))!.pwdTs, mode: 'edit' }).token;
    expect((await wopi(a.wopi_src, old)).statusCode).toBe(401);
    // a valid token for an id the host never gave
    const now = new WopiTokens(s.core.config.jwt_secret);
    const ghost = now.issue({ fileId: 'no-such-id', userId: user.id, pwdTs: 0, mode: 'edit' }).token;
    expect((await s.inject({ method: 'GET', url: `/api/wopi/files/no-such-id?access_token=${ghost}` })).statusCode).toBe(404);
  });

  it('decided now: a user disabled, with a new password, or without the write bit between two calls is refused at the next call (bytes on disk unchanged)', async () => {
    writeFileSync(path.join(root, 'docs/live.docx'), 'live v1');
    const { wopi_src: src, access_token: t } = (await session('/docs/live.docx')).data;
    expect((await op(src, t, 'LOCK', { 'x-wopi-lock': 'live' })).statusCode).toBe(200);
    expect((await putFile(src, t, 'live v2', 'live')).statusCode).toBe(200);

    await updateUser({ disabled: true });
    expect((await wopi(src, t)).statusCode).toBe(401);
    expect((await putFile(src, t, 'while disabled', 'live')).statusCode).toBe(401);
    expect(onDisk('docs/live.docx')).toBe('live v2');
    await updateUser({ disabled: false });
    expect((await wopi(src, t)).statusCode).toBe(200);

    await updateUser({ permission: BITS & ~8 });
    const info = (await wopi(src, t)).json();
    expect(info).toMatchObject({ UserCanWrite: false, ReadOnly: true });
    expect((await putFile(src, t, 'without write', 'live')).statusCode).toBe(401);
    expect(onDisk('docs/live.docx')).toBe('live v2');
    await updateUser({ permission: BITS });
    expect((await wopi(src, t)).json().UserCanWrite).toBe(true);

    // a password change ends every token issued before it
    const ed = (await s.core.repos.users.byId(user.id))!;
    await s.core.repos.users.update({ ...ed, pwdTs: ed.pwdTs + 1 });
    expect((await wopi(src, t)).statusCode).toBe(401);
    expect((await putFile(src, t, 'after password change', 'live')).statusCode).toBe(401);
    expect(onDisk('docs/live.docx')).toBe('live v2');
    await s.core.repos.users.update(ed);
    expect((await op(src, t, 'UNLOCK', { 'x-wopi-lock': 'live' })).statusCode).toBe(200);

    // WOPI turned off: every callback refused
    await setSetting('wopi_enabled', 'false');
    expect((await wopi(src, t)).statusCode).toBe(401);
    await setSetting('wopi_enabled', 'true');
  });

  it("a share's visitor opens a shared document read-only, without an account; a changed code, a disabled share or wopi_share_view off ends the session", async () => {
    writeFileSync(path.join(root, 'docs/shared.docx'), 'shared v1');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(path.join(root, 'docs/locked'), { recursive: true });
    writeFileSync(path.join(root, 'docs/locked/inner.docx'), 'inner');
    expect((await s.api('POST', '/api/admin/meta/create', { token: admin, body: { path: '/disk/docs/locked', password: 'lockpw', p_sub: true } })).code).toBe(200);
    const made = await s.api('POST', '/api/share/create', { token: admin, body: { files: ['/disk/docs'], pwd: 'code1', remark: '', max_accessed: 0, expires: null } });
    expect(made.code, made.message).toBe(200);
    const sid = made.data.id as string;
    const visit = (rel: string, body: Record<string, unknown>) => s.api('POST', '/api/wopi/create-session', { body: { path: `/@s/${sid}${rel}`, service: 'Office', edit: true, ...body } });

    expect((await visit('/shared.docx', { password: 'wrong' })).code).not.toBe(200);
    const r = await visit('/shared.docx', { password: 'code1' });
    expect(r.code, r.message).toBe(200);
    // edit asked, view given: a visitor never writes
    expect(r.data).toMatchObject({ mode: 'view', action: 'view', action_url: `${discoveryBase}/word/view` });
    const { wopi_src: src, access_token: t } = r.data;
    const info = (await wopi(src, t)).json();
    expect(info).toMatchObject({ BaseFileName: 'shared.docx', Size: 9, UserCanWrite: false, ReadOnly: true, UserCanNotWriteRelative: true, IsAnonymousUser: true, UserFriendlyName: 'Guest', UserId: `share-${sid}` });
    expect(info.BreadcrumbFolderUrl).toMatch(new RegExp(`/@s/${sid}/$`));
    // the creator's paths are never shown to the visitor's office
    expect(JSON.stringify(info)).not.toContain('/disk');
    const got = await wopi(src, t, { sub: '/contents' });
    expect(got.statusCode).toBe(200);
    expect(got.body).toBe('shared v1');
    expect((await op(src, t, 'LOCK', { 'x-wopi-lock': 'visitor' })).statusCode).toBe(401);
    expect((await putFile(src, t, 'visitor write')).statusCode).toBe(401);
    expect((await op(src, t, 'RENAME_FILE', { 'x-wopi-requestedname': 'renamed' })).statusCode).toBe(401);
    expect(onDisk('docs/shared.docx')).toBe('shared v1');
    // an editor's lock: the visitor reads its id (GetLock) but can not release it
    const { wopi_src: edSrc, access_token: edToken } = (await session('/docs/shared.docx')).data;
    expect(edSrc).toBe(src);
    expect((await op(edSrc, edToken, 'LOCK', { 'x-wopi-lock': 'editing' })).statusCode).toBe(200);
    expect((await op(src, t, 'GET_LOCK')).headers['x-wopi-lock']).toBe('editing');
    expect((await op(src, t, 'UNLOCK', { 'x-wopi-lock': 'editing' })).statusCode).toBe(401);
    expect((await op(edSrc, edToken, 'GET_LOCK')).headers['x-wopi-lock']).toBe('editing');
    expect((await op(edSrc, edToken, 'UNLOCK', { 'x-wopi-lock': 'editing' })).statusCode).toBe(200);
    // a token of a visit is for that file only, and never an edit token
    const forged = t.replace(/^[^.]+/, Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(t.split('.')[0], 'base64url').toString()), m: 'edit' })).toString('base64url'));
    expect((await wopi(src, forged)).statusCode).toBe(401);

    // a file behind a folder password inside the share: the callbacks carry no password, so it is refused at once
    expect((await visit('/locked/inner.docx', { password: 'code1', folder_password: 'lockpw' })).code).toBe(403);

    // the share's code changed: the session ends; a visit with the new code opens it again
    const share = (await s.api('GET', `/api/share/get?id=${sid}`, { token: admin })).data;
    expect((await s.api('POST', '/api/share/update', { token: admin, body: { ...share, pwd: 'code2' } })).code).toBe(200);
    expect((await wopi(src, t)).statusCode).toBe(401);
    const again = await visit('/shared.docx', { password: 'code2' });
    expect(again.code).toBe(200);
    const [src2, t2] = [again.data.wopi_src as string, again.data.access_token as string];
    expect(src2).toBe(src);
    expect((await wopi(src2, t2)).statusCode).toBe(200);
    // disabled: ended; enabled again: back
    expect((await s.api('POST', `/api/share/disable?id=${sid}`, { token: admin })).code).toBe(200);
    expect((await wopi(src2, t2)).statusCode).toBe(401);
    expect((await s.api('POST', `/api/share/enable?id=${sid}`, { token: admin })).code).toBe(200);
    expect((await wopi(src2, t2)).statusCode).toBe(200);
    // the setting off: no new visit, and the open one ends
    await setSetting('wopi_share_view', 'false');
    expect((await visit('/shared.docx', { password: 'code2' })).code).toBe(403);
    expect((await wopi(src2, t2)).statusCode).toBe(401);
    await setSetting('wopi_share_view', 'true');
    expect((await wopi(src2, t2)).statusCode).toBe(200);
  });
});

/**
 * Two processes of a cluster (in-process servers on one PostgreSQL prefix and one Redis): a
 * session opened on the first is answered by the second — the token is checked with the shared
 * jwt_secret, the file id is in the database, and the lock one takes is the other's.
 */
const pg = BACKENDS.find((b) => b.name === 'postgres');
const redisUp = await redisReachable();
describe.skipIf(!pg || !redisUp)('WOPI callbacks on another process of a cluster (PostgreSQL + Redis)', () => {
  const prefix = `w${randomBytes(4).toString('hex')}_`;
  const keyPrefix = `atrium-test:${randomBytes(4).toString('hex')}:`;
  const config = { jwt_secret: `wopi-cluster-${randomBytes(8).toString('hex')}`, redis: { url: REDIS_URL, key_prefix: keyPrefix } };
  let a: TestServer;
  let b: TestServer;
  let root: string;

  beforeAll(async () => {
    a = await startServer(pg!, { prefix, config });
    b = await startServer(pg!, { prefix, config });
    root = makeTree({ 'shared.docx': 'shared v1' });
    const admin = await a.login();
    expect((await a.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/c', root) })).code).toBe(200);
    for (const [key, value] of [['wopi_enabled', 'true'], ['url_fetch_allow_private', 'true']]) await a.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key, value }] });
  });
  afterAll(async () => {
    await b?.stop();
    await a?.destroy();
    await dropRedisKeys(keyPrefix);
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('a session of process A: CheckFileInfo, Lock and PutFile on B; A sees the lock and refuses an API PUT', async () => {
    const discovery = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/xml' }).end(DISCOVERY('http://office.invalid')));
    await new Promise<void>((r) => discovery.listen(0, '127.0.0.1', r));
    try {
      const admin = await a.login();
      const url = `http://127.0.0.1:${(discovery.address() as AddressInfo).port}/hosting/discovery`;
      await a.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'wopi_services', value: JSON.stringify([{ name: 'Office', discovery_url: url }]) }] });
      const d = (await a.api('POST', '/api/wopi/create-session', { token: admin, body: { path: '/c/shared.docx', edit: true } })).data;
      const at = (sub = '') => `${new URL(d.wopi_src).pathname}${sub}?access_token=${encodeURIComponent(d.access_token)}`;
      // B may learn A's settings a moment later (the cluster bus): wait for WOPI to be on there
      for (let i = 0; i < 50 && !b.core.settings.getBool('wopi_enabled'); i++) await new Promise((r) => setTimeout(r, 50));
      expect((await b.inject({ method: 'GET', url: at() })).json().BaseFileName).toBe('shared.docx');
      expect((await b.inject({ method: 'POST', url: at(), headers: { 'x-wopi-override': 'LOCK', 'x-wopi-lock': 'B-lock' } })).statusCode).toBe(200);
      const onA = await a.inject({ method: 'POST', url: at(), headers: { 'x-wopi-override': 'LOCK', 'x-wopi-lock': 'A-lock' } });
      expect(onA.statusCode).toBe(409);
      expect(onA.headers['x-wopi-lock']).toBe('B-lock');
      const put = await b.inject({ method: 'POST', url: at('/contents'), headers: { 'x-wopi-override': 'PUT', 'x-wopi-lock': 'B-lock', 'content-type': 'application/octet-stream' }, payload: 'shared v2' });
      expect(put.statusCode).toBe(200);
      expect(readFileSync(path.join(root, 'shared.docx'), 'utf8')).toBe('shared v2');
      const apiPut = await a.inject({ method: 'PUT', url: '/api/fs/put', headers: { authorization: admin, 'file-path': encodeURIComponent('/c/shared.docx'), 'content-type': 'application/octet-stream' }, payload: 'api' });
      expect(apiPut.json().message).toContain('file is locked');
      expect((await a.inject({ method: 'POST', url: at(), headers: { 'x-wopi-override': 'UNLOCK', 'x-wopi-lock': 'B-lock' } })).statusCode).toBe(200);
      expect((await b.inject({ method: 'POST', url: at(), headers: { 'x-wopi-override': 'GET_LOCK' } })).headers['x-wopi-lock']).toBe('');
    } finally {
      await new Promise((r) => discovery.close(r));
    }
  });
});

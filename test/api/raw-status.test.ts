import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { makeZip } from '../archive/fixtures.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { mount } from '../drivers/mount.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';

/**
 * Raw links answer real HTTP statuses as OpenList v4 does (its common.ErrorPage): never HTTP 200
 * with an error body, so a download tool fetching a refused link stores nothing as the file.
 */
describe('raw link errors: real statuses and OpenList error page', () => {
  let s: TestServer;
  let admin: string;
  let root: string;
  const sign = (p: string, now?: number) => encodeURIComponent(s.core.signer.sign(p, now));
  const get = (url: string, headers: Record<string, string> = {}) => s.inject({ method: 'GET', url, headers });

  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
    admin = await s.login();
    root = makeTree({ 'file.bin': 'x'.repeat(100), 'vault/secret.txt': 'secret words', 'page.html': '<p>hi</p>' });
    writeFileSync(path.join(root, 'box.zip'), makeZip({ 'in.txt': Buffer.from('inside') }));
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/st', root) })).code).toBe(200);
    // a storage of links whose files may not be proxied (no request ever leaves: /p refuses first)
    await mount(s, admin, '/urls', 'UrlTree', { url_structure: 'x.bin:10:http://127.0.0.1:9/x.bin' });
    expect((await s.api('POST', '/api/admin/meta/create', { token: admin, body: { path: '/st/vault', password: 'pw', p_sub: true } })).code).toBe(200);
  });
  afterAll(async () => {
    await s.destroy();
    rmSync(root, { recursive: true, force: true });
  });

  /** Status, HTML page parts and the JSON answer of one refused link. */
  async function refused(url: string) {
    const html = await get(url, { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' });
    const json = await get(url, { accept: 'application/json' });
    const head = await s.inject({ method: 'HEAD', url });
    return {
      status: html.statusCode,
      type: html.headers['content-type'],
      title: /<title>(.*)<\/title>/.exec(html.body)?.[1],
      heading: /<h1>(.*)<\/h1>/.exec(html.body)?.[1],
      message: /<p>(.*)<\/p>/.exec(html.body)?.[1],
      json: { status: json.statusCode, body: json.json() },
      head: { status: head.statusCode, body: head.body },
    };
  }

  const cases: Array<[string, () => string, number, string]> = [
    ['no sign', () => '/d/st/file.bin', 401, 'expire missing'],
    ['a bad sign', () => `/d/st/file.bin?sign=${sign('/st/other.bin')}`, 401, 'sign invalid'],
    ['a malformed sign', () => '/p/st/file.bin?sign=abc:xyz', 401, 'expire invalid'],
    // OpenList answers these three with 500; they are the client's mistake, so 4xx with its message.
    ['a missing object behind a valid sign', () => `/d/st/none.bin?sign=${sign('/st/none.bin')}`, 404, 'failed link: object not found'],
    ['a folder behind a valid sign', () => `/d/st/vault?sign=${sign('/st/vault')}`, 400, 'not a file'],
    ['a folder through the proxy', () => `/p/st/vault?sign=${sign('/st/vault')}`, 400, 'not a file'],
    ['a missing archive entry behind a valid sign', () => `/ad/st/box.zip?inner=/none.txt&sign=${sign('/st/box.zip')}`, 404, '/none.txt is not a file in the archive'],
    ['a refused proxy (forbidden)', () => `/p/urls/x.bin?sign=${sign('/urls/x.bin')}`, 403, 'proxy not allowed'],
  ];

  for (const [what, url, status, message] of cases) {
    it(`${what}: ${status} "${message}"`, async () => {
      const r = await refused(url());
      const line = `${status} ${{ 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 500: 'Internal Server Error' }[status]}`;
      expect(r).toEqual({
        status,
        type: 'text/html; charset=utf-8',
        title: line,
        heading: line,
        message,
        json: { status, body: { code: status, message, data: null } },
        head: { status, body: '' },
      });
    });
  }

  it('an expired sign: 401 "sign expired"', async () => {
    await s.core.settings.set('link_expiration', '1');
    try {
      const r = await refused(`/d/st/file.bin?sign=${sign('/st/file.bin', Date.now() - 3 * 3600_000)}`);
      expect([r.status, r.message, r.json.body.message]).toEqual([401, 'sign expired', 'sign expired']);
    } finally {
      await s.core.settings.set('link_expiration', '0');
    }
  });

  it('a password-protected file: 401 without its sign even with sign_all off; served with it', async () => {
    await s.core.settings.set('sign_all', 'false');
    try {
      expect((await get('/d/st/file.bin')).statusCode).toBe(200);
      const r = await refused('/d/st/vault/secret.txt');
      expect([r.status, r.message]).toEqual([401, 'expire missing']);
      const ok = await get(`/d/st/vault/secret.txt?sign=${sign('/st/vault/secret.txt')}`);
      expect([ok.statusCode, ok.body]).toEqual([200, 'secret words']);
    } finally {
      await s.core.settings.set('sign_all', 'true');
    }
  });

  it('messages are escaped in the page and pass the privacy mask', async () => {
    const html = await get(`/d/st/%3Cb%3E.bin?sign=${sign('/st/<b>.bin')}`);
    expect(html.statusCode).toBe(404);
    expect(html.body).not.toContain('<b>');
    await s.core.settings.set('privacy_regs', 'expire');
    try {
      const masked = await get('/d/st/file.bin', { accept: 'application/json' });
      expect(masked.json().message).toBe('****** missing');
    } finally {
      await s.core.settings.set('privacy_regs', '');
    }
  });
});

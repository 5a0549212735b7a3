import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { STATE } from '../../src/tasks/manager.js';
import { mount } from '../drivers/mount.js';
import { BACKENDS } from '../helpers/backends.js';
import { type FileServer, startFileServer } from '../helpers/file-server.js';
import { localStorage } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';

// UrlTree's URLs are storage content: the server must not fetch loopback/private/link-local
// addresses on their behalf (/p proxy, copies, head_size probes) unless url_fetch_allow_private.
describe('SSRF guard for drivers whose content is URLs', () => {
  let s: TestServer;
  let admin: string;
  let files: FileServer;
  let target: string;
  const body = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 7) % 256));
  const REFUSAL = /a loopback, private or link-local address; downloading from it is not allowed \(setting url_fetch_allow_private\)/;

  const setting = async (value: boolean) =>
    expect((await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'url_fetch_allow_private', value: String(value) }] })).code).toBe(200);
  const proxied = (p: string, range?: string) =>
    s.inject({ method: 'GET', url: `/p${p}?sign=${encodeURIComponent(s.core.signer.sign(p))}`, headers: { accept: 'application/json', ...(range ? { range } : {}) } });
  const requestsSeen = () => [...files.ranges.values()].reduce((n, r) => n + r.length, 0);
  const copy = async (name: string) => {
    const r = await s.api('POST', '/api/fs/copy', { token: admin, body: { src_dir: '/urls', dst_dir: '/local', names: [name] } });
    expect(r.code, r.message).toBe(200);
    const task = s.core.tasks.get(r.data.tasks[0].id)!;
    await task.done;
    return task;
  };

  beforeAll(async () => {
    files = await startFileServer({ files: { '/data/a.bin': { body } } });
    target = mkdtempSync(path.join(os.tmpdir(), 'atrium-ssrf-'));
    s = await startServer(BACKENDS[0]!);
    admin = await s.login();
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/local', target) })).code).toBe(200);
    const structure = [
      `a.bin:${body.length}:${files.base}/data/a.bin`,
      `byname.bin:${body.length}:http://localhost:${files.port}/data/a.bin`,
      'metadata:10:http://169.254.169.254/latest/meta-data/',
    ].join('\n');
    await mount(s, admin, '/urls', 'UrlTree', { url_structure: structure }, { web_proxy: true });
    await mount(s, admin, '/sized', 'UrlTree', { url_structure: `${files.base}/data/a.bin`, head_size: true });
  });
  afterAll(async () => {
    await s?.destroy();
    await files?.close();
    rmSync(target, { recursive: true, force: true });
  });

  it('is off by default: /p, its ranges and a head_size probe are refused and nothing is fetched', async () => {
    expect(s.core.settings.getBool('url_fetch_allow_private')).toBe(false);
    for (const range of [undefined, 'bytes=10-19']) {
      const r = await proxied('/urls/a.bin', range);
      expect(r.statusCode).toBe(403);
      expect(r.json()).toMatchObject({ code: 403, message: expect.stringMatching(REFUSAL) });
      // the address itself is masked by the default privacy_regs
      expect(r.json().message).toMatch(/^\*{9} is a loopback/);
    }
    const listed = await s.api('POST', '/api/fs/list', { token: admin, body: { path: '/sized' } });
    expect(listed.data.content.map((o: any) => [o.name, o.size])).toEqual([['a.bin', 0]]);
    expect(requestsSeen()).toBe(0);
  });

  it('refuses a name that resolves to loopback, and 169.254.169.254 without connecting at all', async () => {
    const byName = await proxied('/urls/byname.bin');
    expect(byName.json()).toMatchObject({ code: 403, message: expect.stringMatching(REFUSAL) });
    expect(byName.json().message).toMatch(/^localhost resolves to (\*{9}|::1), a loopback/);
    const httpSpy = vi.spyOn(http, 'request');
    const httpsSpy = vi.spyOn(https, 'request');
    try {
      const meta = await proxied('/urls/metadata');
      expect(meta.json()).toMatchObject({ code: 403, message: expect.stringMatching(/^\*{15} is a loopback, private or link-local address/) });
      expect(httpSpy).not.toHaveBeenCalled();
      expect(httpsSpy).not.toHaveBeenCalled();
    } finally {
      httpSpy.mockRestore();
      httpsSpy.mockRestore();
    }
    expect(requestsSeen()).toBe(0);
  });

  it('a copy to another storage fails with the refusal and writes nothing', async () => {
    const task = await copy('a.bin');
    expect(task.state).toBe(STATE.FAILED);
    expect(task.error).toMatch(REFUSAL);
    expect(existsSync(path.join(target, 'a.bin'))).toBe(false);
    expect(requestsSeen()).toBe(0);
  });

  it('with url_fetch_allow_private on, /p, ranges, copies and head_size reach the loopback server', async () => {
    await setting(true);
    try {
      const httpSpy = vi.spyOn(http, 'request');
      const whole = await proxied('/urls/a.bin');
      // the spy sees the fetches it must not see while the guard refuses them
      expect(httpSpy).toHaveBeenCalledTimes(1);
      httpSpy.mockRestore();
      expect(whole.statusCode).toBe(200);
      expect(whole.rawPayload.equals(body)).toBe(true);
      const part = await proxied('/urls/byname.bin', 'bytes=10-19');
      expect(part.statusCode).toBe(206);
      expect(part.rawPayload.equals(body.subarray(10, 20))).toBe(true);
      const task = await copy('a.bin');
      expect(task.error).toBe('');
      expect(task.state).toBe(STATE.SUCCEEDED);
      expect(readFileSync(path.join(target, 'a.bin')).equals(body)).toBe(true);
      // head_size probes run when the storage mounts
      await mount(s, admin, '/sized2', 'UrlTree', { url_structure: `${files.base}/data/a.bin`, head_size: true });
      const listed = await s.api('POST', '/api/fs/list', { token: admin, body: { path: '/sized2' } });
      expect(listed.data.content.map((o: any) => [o.name, o.size])).toEqual([['a.bin', body.length]]);
    } finally {
      await setting(false);
    }
  });
});

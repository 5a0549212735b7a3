import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { BACKENDS } from '../helpers/backends.js';

const hasFfmpeg = (() => {
  try {
    execFileSync('ffmpeg', ['-version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
if (!hasFfmpeg && process.env.CI) throw new Error('CI needs ffmpeg for the video thumbnail test');
if (!hasFfmpeg) console.warn('\n*** SKIPPING video thumbnail test: ffmpeg is not installed ***\n');

describe('Local thumbnails', () => {
  let s: TestServer;
  let admin: string;
  let root: string;
  let cache: string;

  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
    admin = await s.login();
    // Local's own thumbnail option, alone: the server's thumbnails of every storage (thumbs/) are tested in test/thumbs.
    expect((await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'thumb_enabled', value: 'false' }] })).code).toBe(200);
    root = makeTree({ 'a.txt': 'text', 'logo.svg': '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>' });
    await sharp({ create: { width: 1200, height: 600, channels: 3, background: '#3366cc' } }).jpeg().toFile(path.join(root, 'photo.jpg'));
    if (hasFfmpeg) {
      execFileSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=duration=2:size=320x240:rate=10', '-pix_fmt', 'yuv420p', path.join(root, 'clip.mp4')]);
    }
    cache = mkdtempSync(path.join(os.tmpdir(), 'atrium-thumbs-'));
    const on = await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/thumbs', root, {}, { thumbnail: true, thumb_cache_folder: cache, thumb_concurrency: '2' }) });
    expect(on.code, on.message).toBe(200);
    const off = await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/plain', root) });
    expect(off.code).toBe(200);
  });
  afterAll(async () => {
    await s.destroy();
    rmSync(root, { recursive: true, force: true });
    rmSync(cache, { recursive: true, force: true });
  });

  const listing = async (p: string) =>
    Object.fromEntries((await s.api('POST', '/api/fs/list', { token: admin, body: { path: p } })).data.content.map((o: any) => [o.name, o]));

  it('lists thumb URLs for images and videos only, and none when thumbnails are off', async () => {
    const on = await listing('/thumbs');
    expect(on['photo.jpg'].thumb).toBe(`/d/thumbs/photo.jpg?type=thumb&sign=${s.core.signer.sign('/thumbs/photo.jpg')}`);
    expect(on['a.txt'].thumb).toBe('');
    if (hasFfmpeg) expect(on['clip.mp4'].thumb).toContain('/d/thumbs/clip.mp4?type=thumb&sign=');
    const off = await listing('/plain');
    expect(off['photo.jpg'].thumb).toBe('');
  });

  it('serves a 144 px wide PNG of an image and caches it', async () => {
    const url = (await listing('/thumbs'))['photo.jpg'].thumb as string;
    const res = await s.inject({ method: 'GET', url });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/png');
    const meta = await sharp(res.rawPayload).metadata();
    expect(meta).toMatchObject({ format: 'png', width: 144, height: 72 });
    expect(readdirSync(cache).filter((n) => n.endsWith('.png'))).toHaveLength(1);
    const again = await s.inject({ method: 'GET', url });
    expect(again.rawPayload.equals(res.rawPayload)).toBe(true);
  });

  it.skipIf(!hasFfmpeg)('serves a frame of a video as its thumbnail', async () => {
    const url = (await listing('/thumbs'))['clip.mp4'].thumb as string;
    const res = await s.inject({ method: 'GET', url });
    expect(res.statusCode, res.body.slice(0, 200)).toBe(200);
    const meta = await sharp(res.rawPayload).metadata();
    expect(meta).toMatchObject({ format: 'png', width: 144 });
  });

  it.skipIf(!hasFfmpeg)('video_thumb_pos takes the frame at those seconds, or at that share of the duration', async () => {
    // one second of red, then one of blue
    const dir = makeTree({});
    execFileSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'color=c=red:s=64x48:d=1:r=10', '-f', 'lavfi', '-i', 'color=c=blue:s=64x48:d=1:r=10',
      '-filter_complex', '[0:v][1:v]concat=n=2:v=1[v]', '-map', '[v]', '-pix_fmt', 'yuv420p', path.join(dir, 'two.mp4')]);
    const dominant = async (mp: string) => {
      const url = (await listing(mp))['two.mp4'].thumb as string;
      const res = await s.inject({ method: 'GET', url });
      expect(res.statusCode, res.body.slice(0, 200)).toBe(200);
      const { channels } = await sharp(res.rawPayload).stats();
      return channels[0]!.mean > channels[2]!.mean ? 'red' : 'blue';
    };
    const cases: Array<[string, string, 'red' | 'blue']> = [['/at-start', '0.3', 'red'], ['/at-share', '75%', 'blue'], ['/at-seconds', '1.6', 'blue'], ['/at-default', '', 'red']];
    for (const [mp, pos, color] of cases) {
      const r = await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage(mp, dir, {}, { thumbnail: true, video_thumb_pos: pos }) });
      expect(r.code, r.message).toBe(200);
      expect(await dominant(mp), `${mp} at ${pos || 'the default 20%'}`).toBe(color);
    }
    const bad = await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/at-bad', dir, {}, { thumbnail: true, video_thumb_pos: 'middle' }) });
    expect(bad.message).toMatch(/video_thumb_pos must be seconds \(e\.g\. 10\) or a percentage of the duration \(e\.g\. 20%\), not middle/);
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves SVGs as they are and refuses thumbnails where none can be made', async () => {
    const svg = await s.inject({ method: 'GET', url: `/d/thumbs/logo.svg?type=thumb&sign=${encodeURIComponent(s.core.signer.sign('/thumbs/logo.svg'))}` });
    expect(svg.body).toContain('<svg');
    const asJson = { accept: 'application/json' };
    const txt = await s.inject({ method: 'GET', url: `/d/thumbs/a.txt?type=thumb&sign=${encodeURIComponent(s.core.signer.sign('/thumbs/a.txt'))}`, headers: asJson });
    expect(txt.statusCode).toBe(500);
    expect(txt.json()).toMatchObject({ code: 500, message: 'failed link: no thumbnail for this kind of file' });
    const off = await s.inject({ method: 'GET', url: `/d/plain/photo.jpg?type=thumb&sign=${encodeURIComponent(s.core.signer.sign('/plain/photo.jpg'))}`, headers: asJson });
    expect([off.statusCode, off.json().message]).toEqual([500, 'failed link: thumbnails are disabled for this storage']);
    expect(existsSync(cache)).toBe(true);
  });

  it('never puts host paths into error messages (overlong names, broken images)', async () => {
    const long = 'n'.repeat(300);
    const r = await s.api('POST', '/api/fs/list', { token: admin, body: { path: `/thumbs/${long}` } });
    expect(r).toEqual({ code: 500, message: 'failed get objs: failed get dir: object not found', data: null });
    const g = await s.api('POST', '/api/fs/get', { token: admin, body: { path: `/thumbs/${long}/${long}.txt` } });
    expect(g.message).toBe('failed get obj: object not found');
    expect(JSON.stringify(g)).not.toContain(root);
  });
});

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { BACKENDS } from '../helpers/backends.js';
import { BUCKET, S3_KEY, startS3rver, type S3Peer } from '../drivers/s3-peer.js';
import { type Peer, scratch, startRcloneServe } from '../drivers/peers.js';

const has = (tool: string, arg = '-version') => {
  try {
    execFileSync(tool, [arg], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};
const TOOLS = has('ffmpeg') && has('pdftoppm', '-v') && has('rclone', 'version');
if (!TOOLS && process.env.CI) throw new Error('CI needs ffmpeg, pdftoppm (poppler-utils) and rclone for the thumbnail tests');

/** A minimal valid one-page PDF (with its cross-reference table) saying `text`. */
function minimalPdf(text: string): Buffer {
  const objs = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 400] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${`BT /F1 24 Tf 40 300 Td (${text}) Tj ET`.length} >>\nstream\nBT /F1 24 Tf 40 300 Td (${text}) Tj ET\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objs.forEach((o, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objs.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size ${objs.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
const crc32 = (b: Buffer) => {
  let c = 0xffffffff;
  for (const x of b) c = CRC_TABLE[(c ^ x) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
};
const chunk = (type: string, data: Buffer) => {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
};
/** A PNG whose header claims width × height (grey, 8 bit) with a few rows of data: a decompression bomb. */
function pngBomb(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 0, 0, 0, 0], 8);
  const sig = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([sig, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(Buffer.alloc((width + 1) * 8))), chunk('IEND', Buffer.alloc(0))]);
}

describe.skipIf(!TOOLS)('thumbnails for every storage', () => {
  let s: TestServer;
  let admin: string;
  let s3: S3Peer;
  let sftp: Peer;
  let dav: Peer;
  const dirs: string[] = [];
  const files: Record<string, Buffer> = {};

  const put = async (p: string, body: Buffer) => {
    const r = await s.inject({ method: 'PUT', url: '/api/fs/put', payload: body, headers: { authorization: admin, 'file-path': encodeURIComponent(p), 'content-type': 'application/octet-stream' } });
    expect(JSON.parse(r.body).code, `${p}: ${r.body}`).toBe(200);
  };
  const listing = async (p: string, body: Record<string, unknown> = {}, token: string | undefined = admin) => {
    const r = await s.api('POST', '/api/fs/list', { token, body: { path: p, refresh: true, ...body } });
    expect(r.code, r.message).toBe(200);
    return Object.fromEntries((r.data.content ?? []).map((o: any) => [o.name, o])) as Record<string, { thumb: string }>;
  };
  /** The path and query of a thumb link (visitor links are absolute). */
  const local = (url: string) => {
    const u = new URL(url, 'http://localhost');
    return `${u.pathname}${u.search}`;
  };
  const fetchThumb = async (url: string) => {
    const res = await s.inject({ method: 'GET', url: local(url) });
    return { res, meta: res.statusCode === 200 ? await sharp(res.rawPayload).metadata() : undefined };
  };
  const stats = () => ({ ...s.core.thumbs.stats, reads: { ...s.core.thumbs.stats.reads } });
  /** Waits until the background worker is idle (no file it was offered left to make). */
  const settle = async () => {
    const t = s.core.thumbs as unknown as { pending: Map<string, string>; active: number; inflight: Map<string, unknown> };
    for (let i = 0; i < 600 && (t.pending.size > 0 || t.active > 0 || t.inflight.size > 0); i++) await new Promise((r) => setTimeout(r, 50));
  };

  beforeAll(async () => {
    const work = mkdtempSync(path.join(os.tmpdir(), 'atrium-thumbfix-'));
    dirs.push(work);
    files['photo.jpg'] = await sharp({ create: { width: 1200, height: 600, channels: 3, background: '#3366cc' } }).jpeg().toBuffer();
    execFileSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=duration=2:size=320x240:rate=10', '-pix_fmt', 'yuv420p', '-movflags', '+faststart', path.join(work, 'clip.mp4')]);
    files['clip.mp4'] = (await import('node:fs')).readFileSync(path.join(work, 'clip.mp4'));
    files['doc.pdf'] = minimalPdf('Atrium');
    await sharp({ create: { width: 400, height: 400, channels: 3, background: '#cc3333' } }).png().toFile(path.join(work, 'cover.png'));
    execFileSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'sine=duration=1', '-i', path.join(work, 'cover.png'), '-map', '0', '-map', '1', '-c:a', 'libmp3lame', '-id3v2_version', '3', '-c:v', 'png', '-disposition:v', 'attached_pic', path.join(work, 'song.mp3')]);
    files['song.mp3'] = (await import('node:fs')).readFileSync(path.join(work, 'song.mp3'));

    s = await startServer(BACKENDS[0]!);
    admin = await s.login();
    // The tests decide when thumbnails are made: one worker, background on (a listing offers its files).
    await s.api('POST', '/api/admin/setting/save', { token: admin, body: [{ key: 'thumb_workers', value: '2' }] });

    s3 = await startS3rver();
    const sftpFiles = scratch('thumbs-sftp');
    sftp = await startRcloneServe('sftp', sftpFiles, ['--user', 'alice', '--pass', 'pw']);
    const davFiles = scratch('thumbs-dav');
    dav = await startRcloneServe('webdav', davFiles, ['--user', 'dav', '--pass', 'pw']);
    dirs.push(sftpFiles, davFiles);
    const localRoot = makeTree({ 'hid/': '', 'locked/': '' });
    const vault = makeTree({});
    dirs.push(localRoot, vault);
    const create = async (body: Record<string, unknown>) => {
      const r = await s.api('POST', '/api/admin/storage/create', { token: admin, body });
      expect(r.code, r.message).toBe(200);
    };
    await create(localStorage('/local', localRoot));
    await create(localStorage('/vault', vault));
    await create({
      mount_path: '/s3',
      driver: 'S3',
      addition: JSON.stringify({ endpoint: `http://127.0.0.1:${s3.port}`, bucket: BUCKET, access_key_id: S3_KEY, secret_access_key: S3_KEY, force_path_style: true, root_folder_path: '/' }),
    });
    await create({ mount_path: '/sftp', driver: 'SFTP', addition: JSON.stringify({ address: `127.0.0.1:${sftp.port}`, username: 'alice', password: 'pw', root_folder_path: '/' }) });
    await create({ mount_path: '/dav', driver: 'WebDav', addition: JSON.stringify({ address: `http://127.0.0.1:${dav.port}`, username: 'dav', password: 'pw', root_folder_path: '/' }) });
    await create({ mount_path: '/crypt', driver: 'Crypt', addition: JSON.stringify({ remote_path: '/vault', password: 'thumb pw', filename_encryption: 'standard', directory_name_encryption: 'true', filename_encoding: 'base64' }) });
    for (const m of ['/local', '/s3', '/sftp', '/dav', '/crypt']) {
      for (const name of ['photo.jpg', 'clip.mp4', 'doc.pdf']) await put(`${m}/${name}`, files[name]!);
    }
    await put('/local/song.mp3', files['song.mp3']!);
    await put('/local/bomb.png', pngBomb(50_000, 50_000));
    await put('/local/hid/secret.jpg', files['photo.jpg']!);
    await put('/local/locked/inner.jpg', files['photo.jpg']!);
    expect((await s.api('POST', '/api/admin/meta/create', { token: admin, body: { path: '/local/hid', hide: '^secret\\.jpg$' } })).code).toBe(200);
    expect((await s.api('POST', '/api/admin/meta/create', { token: admin, body: { path: '/local/locked', password: 'lockpw', p_sub: true } })).code).toBe(200);
  }, 180_000);

  afterAll(async () => {
    await s?.destroy();
    await Promise.all([s3?.destroy(), sftp?.destroy(), dav?.destroy()]);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  const EXPECTED: Record<string, { width: number; height: number }> = {
    'photo.jpg': { width: 144, height: 72 },
    'clip.mp4': { width: 144, height: 108 },
    // The PDF's page is 300 × 400 points: its longest side scaled to the size.
    'doc.pdf': { width: 108, height: 144 },
  };

  for (const mount of ['/local', '/s3', '/sftp', '/dav', '/crypt']) {
    it(`${mount}: an image, a video and a PDF get thumbnails of the asked size, made in the background and then cached`, async () => {
      await settle();
      const before = stats();
      const objs = await listing(mount);
      for (const name of Object.keys(EXPECTED)) expect(objs[name]!.thumb, `${mount}/${name}`).toContain(`/d${mount}/${name}?type=thumb&sign=`);
      // The listing offered them to the background worker: made without anyone asking.
      await settle();
      const afterBackground = stats();
      // (Local also holds an audio file, whose cover is looked for too.)
      expect(afterBackground.made - before.made).toBeGreaterThanOrEqual(3);
      for (const [name, size] of Object.entries(EXPECTED)) {
        const { res, meta } = await fetchThumb(objs[name]!.thumb);
        expect(res.statusCode, `${mount}/${name}: ${res.body.slice(0, 200)}`).toBe(200);
        expect(res.headers['content-type']).toBe('image/webp');
        expect(meta?.format).toBe('webp');
        // pdftoppm rounds the short side its own way: within a pixel.
        expect(Math.max(meta!.width!, meta!.height!)).toBe(144);
        expect(Math.abs(meta!.width! - size.width) + Math.abs(meta!.height! - size.height)).toBeLessThanOrEqual(1);
      }
      // Served from the cache: nothing made, nothing read from the storage.
      const served = stats();
      expect(served.made).toBe(afterBackground.made);
      expect(served.reads.opens).toBe(afterBackground.reads.opens);
      expect(served.hits - afterBackground.hits).toBe(3);
      // Another size is another thumbnail, made on demand.
      const big = await fetchThumb(`${objs['photo.jpg']!.thumb}&size=256`);
      expect(big.meta).toMatchObject({ width: 256, height: 128 });
      expect(stats().made).toBe(served.made + 1);
    }, 120_000);
  }

  it('a listed folder of 200 images is made in the background without listing the folder again per file', async () => {
    await settle();
    const root = path.join(os.tmpdir(), `atrium-thumbmany-${process.pid}`);
    mkdirSync(root, { recursive: true });
    dirs.push(root);
    const small = await sharp({ create: { width: 64, height: 32, channels: 3, background: '#228844' } }).png().toBuffer();
    for (let i = 0; i < 200; i++) writeFileSync(path.join(root, `p${i}.png`), small);
    expect((await s.api('POST', '/api/admin/storage/create', { token: admin, body: localStorage('/many', root) })).code).toBe(200);
    const list = vi.spyOn(s.core.fs, 'list');
    try {
      const made = stats().made;
      expect(Object.keys(await listing('/many'))).toHaveLength(200);
      await settle();
      expect(stats().made - made).toBe(200);
      // The browse's own listing, not one more per file: the background work costs what the folder holds.
      expect(list.mock.calls.filter((c) => c[0] === '/many').length).toBeLessThanOrEqual(2);
      // What the service did is in the metrics.
      const scraped = await s.core.metrics.registry.metrics();
      const metric = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(scraped)?.[1]);
      expect(metric('atrium_thumbnails_made_total')).toBe(stats().made);
      expect(metric('atrium_thumbnails_failed_total')).toBe(stats().failed);
      expect(metric('atrium_thumbnails_cache_hits_total')).toBe(stats().hits);
      expect(metric('atrium_thumbnails_waiting')).toBe(0);
    } finally {
      list.mockRestore();
    }
  }, 120_000);

  it('a video on a remote storage is read through the loopback range server', async () => {
    // A 2 s clip is small; what matters is that ffmpeg read through the range server.
    await settle();
    const before = stats();
    const objs = await listing('/s3');
    const { res } = await fetchThumb(`${objs['clip.mp4']!.thumb}&size=512`);
    expect(res.statusCode).toBe(200);
    expect(stats().reads.opens).toBeGreaterThan(before.reads.opens);
  });

  it('a changed file gets a new thumbnail', async () => {
    for (const mount of ['/local', '/s3']) {
      const first = await fetchThumb((await listing(mount))['photo.jpg']!.thumb);
      expect(first.meta).toMatchObject({ width: 144, height: 72 });
      await new Promise((r) => setTimeout(r, 1100)); // a new modification time on every storage
      await put(`${mount}/photo.jpg`, await sharp({ create: { width: 500, height: 1000, channels: 3, background: '#00aa00' } }).jpeg().toBuffer());
      await settle();
      const made = stats().made;
      const second = await fetchThumb((await listing(mount))['photo.jpg']!.thumb);
      await settle();
      expect(second.meta, mount).toMatchObject({ width: 72, height: 144 });
      expect(stats().made).toBe(made + 1);
      await put(`${mount}/photo.jpg`, files['photo.jpg']!);
    }
  });

  it('an audio file shows the cover embedded in it once found', async () => {
    await listing('/local');
    await settle();
    const objs = await listing('/local');
    expect(objs['song.mp3']!.thumb).toContain('/d/local/song.mp3?type=thumb');
    const { res, meta } = await fetchThumb(objs['song.mp3']!.thumb);
    expect(res.statusCode).toBe(200);
    expect(meta).toMatchObject({ width: 144, height: 144 });
  });

  it('refuses a 50 000 × 50 000 PNG quickly while /ping answers', async () => {
    const url = `/d/local/bomb.png?type=thumb&sign=${s.core.signer.sign('/local/bomb.png')}&size=512`;
    // Refused from the header's size (sharp's pixel limit), never decoded: decoding 2.5 billion
    // pixels would outlast the test's timeout. /ping is answered while the refusal is in flight.
    const [bomb, ping] = await Promise.all([s.inject({ method: 'GET', url }), s.inject({ method: 'GET', url: '/ping' })]);
    expect(bomb.statusCode).not.toBe(200);
    expect(bomb.body).toMatch(/pixels/);
    expect(ping.body).toBe('pong');
    // Known as impossible: listings stop offering it.
    expect((await listing('/local'))['bomb.png']!.thumb).toBe('');
  });

  it("a share's visitor listing carries the share's own thumbnail links", async () => {
    const id = (await s.api('POST', '/api/share/create', { token: admin, body: { files: ['/local'] } })).data.id as string;
    const r = await s.api('POST', '/api/fs/list', { body: { path: `/@s/${id}` } });
    expect(r.code, r.message).toBe(200);
    const objs = Object.fromEntries(r.data.content.map((o: any) => [o.name, o]));
    expect(objs['photo.jpg'].thumb).toMatch(new RegExp(`/sd/${id}/photo\\.jpg\\?type=thumb$`));
    expect(JSON.stringify(r.data)).not.toContain('/local/');
    const { res, meta } = await fetchThumb(objs['photo.jpg'].thumb);
    expect(res.statusCode).toBe(200);
    expect(meta).toMatchObject({ width: 144, height: 72 });

    // Hidden: not listed, and its thumbnail is refused by the share's view.
    const hid = await s.api('POST', '/api/fs/list', { body: { path: `/@s/${id}/hid` } });
    expect(hid.data.content ?? []).toEqual([]);
    expect((await s.inject({ method: 'GET', url: `/sd/${id}/hid/secret.jpg?type=thumb` })).statusCode).not.toBe(200);
    // Password-protected: refused without the folder's password, served with it.
    expect((await s.inject({ method: 'GET', url: `/sd/${id}/locked/inner.jpg?type=thumb` })).statusCode).not.toBe(200);
    const locked = await s.api('POST', '/api/fs/list', { body: { path: `/@s/${id}/locked`, folder_password: 'lockpw' } });
    expect(locked.code, locked.message).toBe(200);
    const inner = locked.data.content.find((o: any) => o.name === 'inner.jpg');
    expect(inner.thumb).toContain('folder_pwd=lockpw');
    expect((await fetchThumb(inner.thumb)).res.statusCode).toBe(200);
  });

  it('a raw thumbnail link of a protected file needs its sign', async () => {
    for (const p of ['/local/locked/inner.jpg', '/local/hid/secret.jpg']) {
      expect((await s.inject({ method: 'GET', url: `/d${p}?type=thumb` })).statusCode, p).not.toBe(200);
      expect((await s.inject({ method: 'GET', url: `/d${p}?type=thumb&sign=${s.core.signer.sign('/local/photo.jpg')}` })).statusCode, p).not.toBe(200);
    }
    // A user who may not read the protected folder gets no thumbnail link for it.
    await s.api('POST', '/api/admin/user/create', { token: admin, body: { username: 'tim', password: 't', permission: 0 } });
    const tim = await s.login('tim', 't');
    const r = await s.api('POST', '/api/fs/list', { token: tim, body: { path: '/local/locked' } });
    expect(r.code).not.toBe(200);
  });
});

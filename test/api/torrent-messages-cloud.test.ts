import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { bencode, makeTorrent } from '../helpers/torrent.js';

const b64 = (b: Buffer) => b.toString('base64');
const sha1 = (b: Buffer) => createHash('sha1').update(b).digest('hex');

/** A multi-file torrent, with OpenList's x-cas extension when `cas` is set. */
function multiFile(cas = false): { file: Buffer; infoHash: string } {
  const info = {
    name: 'album',
    'piece length': 16384,
    pieces: Buffer.alloc(40, 7),
    files: [
      { length: 1000, path: ['cd1', 'track 1.flac'] },
      { length: 2500, path: ['cover.jpg'] },
    ],
  };
  const top: Record<string, unknown> = { announce: 'http://127.0.0.1:1/announce', info };
  if (cas) top['x-cas'] = { file_md5: 'a'.repeat(32), slice_md5: 'b'.repeat(32), slice_size: 10485760, cloud: '189' };
  return { file: bencode(top as never), infoHash: sha1(bencode(info)) };
}

describe('torrent helpers, the Messenger channel and the cloud tools (OpenList 4.2.6 routes)', () => {
  let s: TestServer;
  let admin: string;
  let root: string;
  const post = (url: string, body?: unknown, token = admin) => s.api('POST', url, { token, body });
  const parse = (body: unknown, token = admin) => post('/api/fs/torrent/parse', body, token);

  beforeAll(async () => {
    root = makeTree({ 'in/': '' });
    s = await startServer(BACKENDS[0]!);
    admin = await s.login();
    expect((await post('/api/admin/storage/create', localStorage('/local', root))).code).toBe(200);
    expect((await post('/api/admin/user/create', { username: 'reader', password: 'reader-pass', base_path: '/', permission: 0, role: 0 })).code).toBe(200);
  });
  afterAll(async () => {
    await s?.destroy();
    rmSync(root, { recursive: true, force: true });
  });

  it('parses a single-file .torrent: name, sizes, pieces and the info hash of its info dictionary', async () => {
    const content = Buffer.alloc(600 * 1024, 1);
    const t = makeTorrent('movie.mkv', content, 'http://127.0.0.1:1/movie.mkv');
    const r = await parse({ torrent_data: b64(t.file) });
    expect(r.code, r.message).toBe(200);
    expect(r.data).toEqual({
      name: 'movie.mkv',
      total_size: content.length,
      piece_length: 256 * 1024,
      piece_count: 3,
      info_hash: t.infoHash,
      files: [{ path: 'movie.mkv', size: content.length }],
      has_cas: false,
    });
  });

  it('parses a multi-file torrent with its x-cas extension', async () => {
    const t = multiFile(true);
    const r = await parse({ torrent_data: b64(t.file) });
    expect(r.code, r.message).toBe(200);
    expect(r.data).toMatchObject({
      name: 'album',
      total_size: 3500,
      piece_count: 2,
      info_hash: t.infoHash,
      files: [
        { path: 'cd1/track 1.flac', size: 1000 },
        { path: 'cover.jpg', size: 2500 },
      ],
      has_cas: true,
      cas: { file_md5: 'a'.repeat(32), slice_md5: 'b'.repeat(32), slice_size: 10485760, cloud: '189' },
    });
    expect((await parse({ torrent_data: b64(multiFile(false).file) })).data.has_cas).toBe(false);
  });

  it('hashes the info dictionary as sent, even with its keys out of order', async () => {
    const info = Buffer.from('d6:lengthi5e4:name1:x6:pieces20:aaaaaaaaaaaaaaaaaaaa12:piece lengthi16384ee');
    const file = Buffer.concat([Buffer.from('d4:info'), info, Buffer.from('e')]);
    const r = await parse({ torrent_data: b64(file) });
    expect(r.code, r.message).toBe(200);
    expect(r.data.info_hash).toBe(sha1(info));
    expect(r.data.files).toEqual([{ path: 'x', size: 5 }]);
  });

  it('parses a magnet link (hex and base32 hashes)', async () => {
    const hex = 'c12fe1c06bba254a9dc9f519b335aa7c1367a88a';
    const r = await parse({ magnet: `magnet:?xt=urn:btih:${hex.toUpperCase()}&dn=Some%20Show&xl=12345&tr=udp%3A%2F%2Ft.example%3A80` });
    expect(r.code, r.message).toBe(200);
    expect(r.data).toEqual({ name: 'Some Show', total_size: 12345, piece_length: 0, piece_count: 0, info_hash: hex, files: [{ path: 'Some Show', size: 12345 }], has_cas: false });
    const b32 = 'YEX6DQDLXISUVHOJ6UM3GNNKPQJWPKEK';
    expect((await parse({ magnet: `magnet:?xt=urn:btih:${b32}` })).data).toMatchObject({ info_hash: hex, name: hex, files: [] });
    expect(await parse({ magnet: 'magnet:?xt=urn:btih:1234' })).toMatchObject({ code: 400, message: 'failed to parse magnet: the btih hash is neither 40 hex nor 32 base32 characters' });
    expect(await parse({ magnet: 'http://example.com/x.torrent' })).toMatchObject({ code: 400, message: 'failed to parse magnet: not a magnet: link' });
  });

  it('answers 400 with a clear message for malformed input, within its bounds', async () => {
    const good = makeTorrent('a.bin', Buffer.alloc(10), 'http://127.0.0.1:1/a').file;
    const cases: Array<[unknown, string | RegExp]> = [
      [{}, 'torrent_data is required'],
      [{ torrent_data: 'not base64!' }, 'invalid Base64 encoding'],
      [{ torrent_data: b64(good.subarray(0, good.length - 5)) }, /^failed to parse torrent: (unterminated|unexpected end|string of \d+ bytes runs past the end)/],
      [{ torrent_data: b64(Buffer.from(`${'l'.repeat(200)}${'e'.repeat(200)}`)) }, /^failed to parse torrent: nesting deeper than 16 at byte \d+$/],
      [{ torrent_data: b64(Buffer.from('i012e')) }, 'failed to parse torrent: bad integer "012" at byte 0'],
      [{ torrent_data: b64(Buffer.concat([good, Buffer.from('x')])) }, `failed to parse torrent: unexpected data after the end at byte ${good.length}`],
      [{ torrent_data: b64(bencode({ announce: 'x' })) }, 'failed to parse torrent: missing info dictionary'],
      [{ torrent_data: b64(bencode({ info: { name: 'x', length: 1, 'piece length': 16384, pieces: Buffer.alloc(21) } })) }, 'torrent pieces data invalid: its length must be a multiple of 20'],
      [{ torrent_data: b64(bencode({ info: { name: 'x', 'piece length': 16384, pieces: Buffer.alloc(20), files: [{ length: 1, path: ['..', 'etc'] }] } })) }, 'failed to parse torrent: file 0 has an unsafe path'],
      [{ torrent_data: b64(Buffer.from('d1:ai1e1:ai2ee')) }, /^failed to parse torrent: repeated dictionary key/],
      [{ torrent_data: 'A'.repeat(14 * 1024 * 1024 + 4) }, 'torrent data too large (10 MiB at most)'],
    ];
    for (const [body, message] of cases) {
      const r = await parse(body);
      expect(r.code, JSON.stringify(body).slice(0, 80)).toBe(400);
      if (typeof message === 'string') expect(r.message).toBe(message);
      else expect(r.message).toMatch(message);
    }
  });

  it('rapid_upload checks the write permission and the torrent, then says no storage here can take a CAS rapid upload', async () => {
    const cas = b64(multiFile(true).file);
    expect(await post('/api/fs/torrent/rapid_upload', { torrent_data: b64(multiFile(false).file), path: '/local/in' })).toMatchObject({
      code: 400,
      message: 'the torrent has no CAS extension (x-cas): it cannot be rapid-uploaded',
    });
    expect(await post('/api/fs/torrent/rapid_upload', { torrent_data: cas, path: '/local/in' })).toMatchObject({
      code: 400,
      message: 'the target storage is not a 189 Cloud PC storage: CAS rapid upload is not supported (Atrium has no 189CloudPC driver)',
    });
    expect((await post('/api/fs/torrent/rapid_upload', { torrent_data: cas, path: '/local/nowhere' })).code).toBe(400);
    expect(await post('/api/fs/torrent/rapid_upload', { torrent_data: 'A'.repeat(14 * 1024 * 1024 + 4), path: '/local/in' })).toMatchObject({ code: 413, message: 'torrent data exceeds the maximum size' });
    // a reader without the write bit is refused before the torrent is looked at
    const reader = await s.login('reader', 'reader-pass');
    expect(await post('/api/fs/torrent/rapid_upload', { torrent_data: cas, path: '/local/in' }, reader)).toMatchObject({ code: 403, message: 'permission denied' });
    // parsing needs no write permission
    expect((await parse({ torrent_data: cas }, reader)).code).toBe(200);
  });

  it('the Messenger channel: get/send meet a server part waiting, as OpenList, and answer its errors otherwise', async () => {
    expect(await post('/api/admin/message/get')).toMatchObject({ code: 404, message: 'no message' });
    expect(await post('/api/admin/message/send', { message: 'hello?' })).toMatchObject({ code: 500, message: 'nowhere needed' });

    const taken = s.core.messenger.send({ type: 'image', content: 'data:image/png;base64,AAAA' }, 5);
    const second = s.core.messenger.send({ type: 'string', content: 'scan the code' }, 5);
    expect(await post('/api/admin/message/get')).toMatchObject({ code: 200, data: { type: 'image', content: 'data:image/png;base64,AAAA' } });
    await taken;
    expect((await post('/api/admin/message/get')).data).toEqual({ type: 'string', content: 'scan the code' });
    await second;
    expect((await post('/api/admin/message/get')).code).toBe(404);

    const answer = s.core.messenger.receive(5);
    expect((await post('/api/admin/message/send', { message: '123456' })).code).toBe(200);
    expect(await answer).toBe('123456');
    expect((await post('/api/admin/message/send', { message: 'again' })).code).toBe(500);

    await expect(s.core.messenger.send({ type: 'string', content: 'late' }, 0.05)).rejects.toThrow('send timeout');
    await expect(s.core.messenger.receive(0.05)).rejects.toThrow('receive timeout');
    expect((await post('/api/admin/message/get')).code).toBe(404);

    const reader = await s.login('reader', 'reader-pass');
    expect((await post('/api/admin/message/get', undefined, reader)).code).toBe(403);
  });

  it('the nine cloud tools: set_* saves OpenList’s keys, refuses a temp folder on any storage here, and the tools stay unavailable', async () => {
    const routes: Array<[string, string]> = [
      ['set_115', '115_temp_dir'],
      ['set_115_open', '115_open_temp_dir'],
      ['set_123_pan', '123_temp_dir'],
      ['set_123_open', '123_open_temp_dir'],
      ['set_pikpak', 'pikpak_temp_dir'],
      ['set_thunder', 'thunder_temp_dir'],
      ['set_thunderx', 'thunderx_temp_dir'],
      ['set_thunder_browser', 'thunder_browser_temp_dir'],
      ['set_guangyapan', 'guangyapan_temp_dir'],
    ];
    for (const [route, key] of routes) {
      expect(await post(`/api/admin/setting/${route}`, { temp_dir: '' }), route).toEqual({ code: 200, message: 'success', data: 'ok' });
      expect(s.core.settings.get(key), key).toBe('');
      for (const dir of ['/local/in', '/elsewhere']) {
        // (the default storage at / holds any other path)
        const r = await post(`/api/admin/setting/${route}`, { temp_dir: dir });
        expect(r.code).toBe(400);
        expect(r.message).toMatch(/^unsupported storage driver for offline download, only .+ is supported$/);
      }
      expect(s.core.settings.get(key)).toBe('');
    }
    expect((await post('/api/admin/setting/set_123_open', { temp_dir: '', callback_url: 'https://cb.example/x' })).data).toBe('ok');
    expect(s.core.settings.get('123_open_callback_url')).toBe('https://cb.example/x');
    // the Other page reads them back from the offline-download group
    const listed = await s.api('GET', '/api/admin/setting/list?group=5', { token: admin });
    expect(listed.data.map((x: { key: string }) => x.key)).toEqual(expect.arrayContaining(routes.map(([, key]) => key).concat('123_open_callback_url')));

    const tools = await s.api('GET', '/api/admin/offline_download/tools', { token: admin });
    expect(tools.code).toBe(200);
    const byName = Object.fromEntries(tools.data.map((t: { name: string }) => [t.name, t]));
    expect(byName.SimpleHttp).toEqual({ name: 'SimpleHttp', available: true, reason: '' });
    expect(byName['115 Cloud']).toEqual({ name: '115 Cloud', available: false, reason: 'Atrium has no 115 Cloud storage driver, which this tool downloads through' });
    expect(tools.data.filter((t: { available: boolean }) => !t.available).map((t: { name: string }) => t.name)).toEqual(
      expect.arrayContaining(['115 Cloud', '115 Open', '123Pan', '123 Open', 'PikPak', 'Thunder', 'ThunderX', 'ThunderBrowser', 'GuangYaPan']),
    );
    expect(byName.aria2.available).toBe(false); // no aria2 runs in this test
    expect(byName.aria2.reason).toMatch(/^failed init tool aria2/);
    // never offered for a path, and refused with the reason when named
    expect((await s.api('GET', '/api/public/offline_download_tools')).data).toEqual(['SimpleHttp', 'aria2', 'qBittorrent', 'Transmission']);
    expect(await post('/api/fs/add_offline_download', { urls: ['magnet:?xt=urn:btih:c12fe1c06bba254a9dc9f519b335aa7c1367a88a'], path: '/local/in', tool: 'PikPak' })).toMatchObject({
      code: 400,
      message: 'tool PikPak is not available: Atrium has no PikPak storage driver, which this tool downloads through',
    });
  });
});

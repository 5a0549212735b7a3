import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BACKENDS } from '../helpers/backends.js';
import { localStorage, makeTree } from '../helpers/files.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { driverConformance, FIXTURE } from './conformance.js';
import { download, mount, names, storageRow } from './mount.js';
import { writeTree } from './peer-files.js';
import { localOnNextStart } from './server-hook.js';

// The suite's own server gets the Local storage the Strm storage shows (see server-hook.ts).
vi.mock('../helpers/server.js', async (importOriginal) => (await import('./server-hook.js')).withStartHook(await importOriginal()));

const SITE = 'http://127.0.0.1:5244';

driverConformance('Strm over a Local folder (text and binary files passed through)', async () => {
  const { base, served } = localOnNextStart('strm', '/media');
  writeTree(served, FIXTURE);
  return {
    storage: { driver: 'Strm', addition: { paths: '/media', siteUrl: SITE, downloadFileTypes: 'srt,txt,bin' } },
    caps: { write: false },
    seed: async (tree) => writeTree(served, tree),
    outsideMarker: 'outside-marker.txt',
    teardown: async () => rmSync(base, { recursive: true, force: true }),
  };
});

describe('Strm driver', () => {
  let s: TestServer;
  let admin: string;
  let movies: string;
  let music: string;
  let saved: string;
  const movie = randomBytes(300_000);
  const song = randomBytes(5000);
  const post = (url: string, body: unknown) => s.api('POST', url, { token: admin, body });

  beforeAll(async () => {
    s = await startServer(BACKENDS[0]!);
    admin = await s.login();
    movies = makeTree({
      'Film ü #1.mkv': movie,
      'Film ü #1.srt': '1\n00:00:01,000 --> 00:00:02,000\nhello\n',
      'notes.doc': 'not media',
      'Season 1/e01.mp4': 'episode one',
    });
    music = makeTree({ 'song.flac': song, 'cover.jpg': 'jpeg' });
    saved = mkdtempSync(path.join(os.tmpdir(), 'atrium-strm-saved-'));
    for (const [mp, root] of [['/local/movies', movies], ['/local/music', music]] as const) {
      expect((await post('/api/admin/storage/create', localStorage(mp, root))).code).toBe(200);
    }
    await mount(s, admin, '/strm', 'Strm', { paths: '/local/movies\n/local/music', siteUrl: `${SITE}/`, withSign: true });
  });
  afterAll(async () => {
    await s.destroy();
    for (const d of [movies, music, saved]) rmSync(d, { recursive: true, force: true });
  });

  const text = async (p: string) => {
    const d = await download(s, p);
    expect(d.status).toBe(200);
    return d.body.toString();
  };

  /** Follows a link of a .strm file to this server (its path and query), with an optional range. */
  const follow = async (link: string, range?: string) => {
    const u = new URL(link);
    expect(u.origin).toBe(SITE);
    const res = await s.inject({ method: 'GET', url: `${u.pathname}${u.search}`, headers: range ? { range } : {} });
    return { status: res.statusCode, body: res.rawPayload };
  };

  it('shows media as .strm, passes subtitles through and leaves other files out', async () => {
    expect(await names(s, admin, '/strm')).toEqual(['movies', 'music']);
    expect(await names(s, admin, '/strm/movies')).toEqual(['Season 1', 'Film ü #1.srt', 'Film ü #1.strm']);
    expect(await names(s, admin, '/strm/music')).toEqual(['song.strm']);
    expect(await text('/strm/movies/Film ü #1.srt')).toContain('hello');
    const listed = await post('/api/fs/list', { path: '/strm/movies', refresh: true });
    const strm = listed.data.content.find((o: { name: string }) => o.name === 'Film ü #1.strm');
    expect(strm.size).toBe(Buffer.byteLength(await text('/strm/movies/Film ü #1.strm')));
  });

  it('holds a signed, encoded link with the site URL that leads to the right bytes, ranges included', async () => {
    const link = await text('/strm/movies/Film ü #1.strm');
    expect(link).toMatch(new RegExp(`^${SITE}/d/local/movies/Film%20%C3%BC%20%231\\.mkv\\?sign=[\\w-]+=*:0$`));
    const whole = await follow(link);
    expect(whole.status).toBe(200);
    expect(whole.body.equals(movie)).toBe(true);
    const part = await follow(link, 'bytes=1000-200999');
    expect(part.status).toBe(206);
    expect(part.body.equals(movie.subarray(1000, 201_000))).toBe(true);
    expect((await follow(await text('/strm/music/song.strm'))).body.equals(song)).toBe(true);
    expect((await follow(await text('/strm/movies/Season 1/e01.strm'))).body.toString()).toBe('episode one');
    // A tampered link is refused by /d.
    const bad = await follow(link.replace('Film', 'Filn'));
    expect(bad.body.toString()).toMatch(/sign/);
  });

  it('answers missing names as not found, the source names too', async () => {
    for (const p of ['/strm/movies/Film ü #1.mkv', '/strm/movies/notes.doc', '/strm/nope', '/strm/movies/none.strm']) {
      const r = await post('/api/fs/get', { path: p });
      expect(r.message, p).toMatch(/object not found/);
    }
    const up = await s.inject({ method: 'PUT', url: '/api/fs/put', payload: 'x', headers: { authorization: admin, 'file-path': encodeURIComponent('/strm/movies/x.txt') } });
    expect(up.json().code).not.toBe(200);
  });

  it('writes paths without URL, unencoded, unsigned, with its own prefix and types when told so', async () => {
    await mount(s, admin, '/plain', 'Strm', { paths: '/local/movies', withoutUrl: true, encodePath: false, PathPrefix: '/p', filterFileTypes: 'doc' });
    expect(await names(s, admin, '/plain')).toEqual(['Season 1', 'Film ü #1.srt', 'notes.strm']);
    expect(await text('/plain/notes.strm')).toBe('/p/local/movies/notes.doc');
  });

  it('minFileSize (MB) leaves out media files under it, subtitles still pass', async () => {
    // 0.2 MB = 209 715 bytes: the 300 000-byte film keeps its .strm, the 11-byte episode and the 5000-byte song lose theirs
    await mount(s, admin, '/big', 'Strm', { paths: '/local/movies\n/local/music', siteUrl: SITE, minFileSize: 0.2 });
    expect(await names(s, admin, '/big/movies')).toEqual(['Season 1', 'Film ü #1.srt', 'Film ü #1.strm']);
    expect(await names(s, admin, '/big/movies/Season 1')).toEqual([]);
    expect(await names(s, admin, '/big/music')).toEqual([]);
    expect((await post('/api/fs/get', { path: '/big/music/song.strm' })).message).toMatch(/object not found/);
    expect(await text('/big/movies/Film ü #1.strm')).toBe(`${SITE}/d/local/movies/Film%20%C3%BC%20%231.mkv`);
  });

  it('refuses a storage that could not write a full URL, and a path inside itself', async () => {
    const r = await post('/api/admin/storage/create', storageRow('/nourl', 'Strm', { paths: '/local/movies' }));
    expect(r.message).toMatch(/siteUrl is required/);
    const inside = await post('/api/admin/storage/create', storageRow('/self', 'Strm', { paths: '/self/x', siteUrl: SITE }));
    expect(inside.message).toMatch(/lies inside the strm storage itself/);
  });

  it('saves the listed .strm files and subtitles to a local folder; sync removes what is gone', async () => {
    await mount(s, admin, '/saved', 'Strm', { paths: '/local/movies', siteUrl: SITE, SaveStrmToLocal: true, SaveStrmLocalPath: saved, SaveLocalMode: 'sync' });
    mkdirSync(path.join(saved, 'stale'));
    await names(s, admin, '/saved');
    expect(readdirSync(saved).sort()).toEqual(['Film ü #1.srt', 'Film ü #1.strm', 'Season 1']);
    expect(readFileSync(path.join(saved, 'Film ü #1.strm'), 'utf8')).toBe(`${SITE}/d/local/movies/Film%20%C3%BC%20%231.mkv`);
    expect(readFileSync(path.join(saved, 'Film ü #1.srt'), 'utf8')).toContain('hello');
    await names(s, admin, '/saved/Season 1');
    expect(existsSync(path.join(saved, 'Season 1', 'e01.strm'))).toBe(true);
  });

  it('is listed by the driver endpoints under OpenList\'s name and items', async () => {
    const info = await s.api('GET', '/api/admin/driver/info?driver=Strm', { token: admin });
    expect(info.data.additional.map((i: { name: string }) => i.name)).toEqual([
      'paths', 'siteUrl', 'PathPrefix', 'downloadFileTypes', 'filterFileTypes', 'encodePath', 'withoutUrl', 'withSign', 'SaveStrmToLocal', 'SaveStrmLocalPath', 'SaveLocalMode', 'minFileSize',
    ]);
    const byName = Object.fromEntries(info.data.additional.map((i: { name: string }) => [i.name, i]));
    expect(byName.PathPrefix.default).toBe('/d');
    expect(byName.filterFileTypes.default).toContain('mkv');
    expect(byName.encodePath).toMatchObject({ type: 'bool', default: 'true' });
    expect(byName.minFileSize).toMatchObject({ type: 'number', default: '0' });
    expect(info.data.config).toMatchObject({ name: 'Strm', only_proxy: true, no_upload: true });
  });
});

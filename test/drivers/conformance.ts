/**
 * The driver conformance suite: the same tests for every driver, run through the real server API
 * (storage create, /api/fs/*, PUT /api/fs/put and /form, /d with ranges) against a real peer.
 *
 * Use it from a test file of your driver:
 *
 *   import { driverConformance } from './conformance.js';
 *   driverConformance('SFTP against OpenSSH', async () => {
 *     const peer = await startMyPeer();              // started by the test, on loopback
 *     return {
 *       storage: { driver: 'SFTP', addition: { address: peer.address, username: 'u', root_folder_path: '/root' } },
 *       seed: (tree) => peer.write(tree),            // optional: fast direct writes (big folder, read-only drivers)
 *       peerRead: (p) => peer.read(p),               // optional: proves the bytes really reached the peer
 *       readOnly: { addition: {...}, dir: '/ro' },   // optional: where the peer refuses writes
 *       outsideMarker: 'marker.txt',                 // optional: a file in the parent of the root on the peer
 *       teardown: () => peer.stop(),
 *     };
 *   });
 *
 * A test whose peer program is missing passes the reason as a third argument (see
 * `missingPrograms` in ./peers.ts): the suite is then skipped visibly, or fails under CI=true.
 *
 * Paths given to `seed`/`peerRead` are relative to the storage's root ("/a/b.txt"); keys of a seed
 * tree ending in "/" are folders. A driver that cannot write sets `caps.write: false` and seeds
 * FIXTURE (exported below) in its setup; the read tests then run on that tree. Other `caps` switch
 * off what a driver genuinely cannot do (server-side copy falls back to read+put, so it stays on).
 * The suite runs on one database back end (the first available): drivers do not touch the database.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ObjectNotFound } from '../../src/drivers/types.js';
import { BACKENDS } from '../helpers/backends.js';
import { startServer, type TestServer } from '../helpers/server.js';

export interface ConformanceCaps {
  /** mkdir, put, rename, move, copy, remove (default true). */
  write: boolean;
  /** Entries of the big-folder test (default 1000; 0 skips it). */
  bigFolder: number;
  /** Odd names to exercise (default ODD_NAMES). */
  names: string[];
  /** Empty folders survive (false for stores without folders and without placeholders). */
  emptyFolders: boolean;
}

export interface ConformanceTarget {
  /** The storage to create: driver name, its addition (an object; the suite serializes it), other storage fields. */
  storage: { driver: string; addition: Record<string, unknown> } & Record<string, unknown>;
  caps?: Partial<ConformanceCaps>;
  /** Writes a tree straight into the peer (relative to the storage root). */
  seed?(tree: Record<string, string | Buffer>): Promise<void>;
  /** Reads a file straight from the peer; undefined when it does not exist there. */
  peerRead?(path: string): Promise<Buffer | undefined>;
  /** A second storage of the same driver, and a folder in it, where the peer refuses writes. */
  readOnly?: { addition: Record<string, unknown>; dir: string };
  /** Name of a file the peer holds in the parent folder of the storage root: it must stay unreachable. */
  outsideMarker?: string;
  teardown(): Promise<void>;
}

export const ODD_NAMES = [
  'héllo wörld.txt',
  '日本語 ファイル.txt',
  'emoji 😀 file.txt',
  'a+b&c=d#e?f%20g.txt',
  "quote'\"s.txt",
  '[brackets] (parens) {braces}.txt',
  'semi;colon,comma.txt',
  '  two  spaces.txt',
  '-leading-dash',
  '.hidden-dot',
  '~tilde$dollar@at!bang.txt',
];

/** The tree read-only drivers seed in their setup (writable drivers get it through the API). */
export const FIXTURE: Record<string, Buffer> = {
  '/fixture/small.txt': Buffer.from('hello conformance\n'),
  '/fixture/sub/nested.bin': Buffer.from(Array.from({ length: 4096 }, (_, i) => i % 251)),
  '/fixture/empty.txt': Buffer.alloc(0),
};

type Api = TestServer['api'];

/** Registers the suite; with `skipReason` (a missing peer program) it is registered as skipped. */
export function driverConformance(name: string, setup: () => Promise<ConformanceTarget>, skipReason?: string): void {
  describe.skipIf(skipReason !== undefined)(`driver conformance: ${name}`, () => {
    let s: TestServer;
    let target: ConformanceTarget;
    let token: string;
    let api: (url: string, body: unknown) => ReturnType<Api>;
    let caps: ConformanceCaps;
    const M = '/c';

    beforeAll(async () => {
      target = await setup();
      caps = { write: true, bigFolder: 1000, names: ODD_NAMES, emptyFolders: true, ...target.caps };
      s = await startServer(BACKENDS[0]!);
      token = await s.login();
      api = (url, body) => s.api('POST', url, { token, body });
      const { driver, addition, ...extra } = target.storage;
      const r = await api('/api/admin/storage/create', {
        mount_path: M,
        driver,
        cache_expiration: 0,
        order_by: 'name',
        order_direction: 'asc',
        ...extra,
        addition: JSON.stringify(addition),
      });
      expect(r, JSON.stringify(r)).toMatchObject({ code: 200 });
    }, 120_000);

    afterAll(async () => {
      await s?.destroy();
      await target?.teardown();
    }, 60_000);

    const list = async (p: string, extra: Record<string, unknown> = {}) => {
      const r = await api('/api/fs/list', { path: p, refresh: true, ...extra });
      expect(r.code, `list ${p}: ${r.message}`).toBe(200);
      return r.data as { content: Array<{ name: string; size: number; is_dir: boolean }> | null; total: number };
    };
    const names = async (p: string) => ((await list(p)).content ?? []).map((o) => o.name).sort();
    const get = (p: string) => api('/api/fs/get', { path: p });

    /** GET /d (following a redirect to the driver's own URL), with an optional Range. */
    const download = async (p: string, range?: string): Promise<{ status: number; body: Buffer; headers: Record<string, unknown> }> => {
      const headers: Record<string, string> = range ? { range } : {};
      const url = `/d${p.split('/').map(encodeURIComponent).join('/')}?sign=${encodeURIComponent(s.core.signer.sign(p))}`;
      const res = await s.inject({ method: 'GET', url, headers });
      if (res.statusCode === 302) {
        const r = await fetch(String(res.headers.location), { headers });
        return { status: r.status, body: Buffer.from(await r.arrayBuffer()), headers: Object.fromEntries(r.headers) };
      }
      return { status: res.statusCode, body: res.rawPayload, headers: res.headers };
    };

    const put = async (p: string, body: Buffer, headers: Record<string, string> = {}) => {
      const res = await s.inject({
        method: 'PUT',
        url: '/api/fs/put',
        headers: { authorization: token, 'file-path': encodeURIComponent(p), 'content-type': 'application/octet-stream', ...headers },
        payload: body,
      });
      return res.json() as { code: number; message: string };
    };

    /** A chunked body (no Content-Length): the size comes from X-File-Size. */
    const putChunked = async (p: string, chunks: Buffer[], declared: number) => {
      const res = await s.inject({
        method: 'PUT',
        url: '/api/fs/put',
        headers: { authorization: token, 'file-path': encodeURIComponent(p), 'x-file-size': String(declared), 'content-type': 'application/octet-stream' },
        payload: Readable.from(chunks),
      });
      return res.json() as { code: number; message: string };
    };

    /** PUT /api/fs/form: the driver gets a stream of unknown size. */
    const putForm = async (p: string, body: Buffer) => {
      const boundary = `----conf${randomBytes(8).toString('hex')}`;
      const payload = Buffer.concat([
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="blob"\r\nContent-Type: application/octet-stream\r\n\r\n`),
        body,
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
      const res = await s.inject({
        method: 'PUT',
        url: '/api/fs/form',
        headers: { authorization: token, 'file-path': encodeURIComponent(p), 'content-type': `multipart/form-data; boundary=${boundary}` },
        payload,
      });
      return res.json() as { code: number; message: string };
    };

    const expectOk = (r: { code: number; message: string }, what = '') => expect(r.code, `${what} ${r.message}`).toBe(200);

    const expectFile = async (p: string, content: Buffer) => {
      const r = await get(p);
      expect(r.code, `get ${p}: ${r.message}`).toBe(200);
      expect(r.data.is_dir).toBe(false);
      expect(r.data.size).toBe(content.length);
      const d = await download(p);
      expect(d.status).toBe(200);
      expect(d.body.equals(content), `bytes of ${p}`).toBe(true);
      if (target.peerRead) {
        const onPeer = await target.peerRead(p.slice(M.length) || '/');
        expect(onPeer?.equals(content), `bytes of ${p} on the peer`).toBe(true);
      }
    };
    const expectGone = async (p: string) => {
      const r = await get(p);
      expect(r.code, `get ${p} should fail`).toBe(500);
      expect(r.message).toMatch(/object not found/);
    };

    /** Waits for the copy/move tasks of a response (drivers without a server-side copy run them as tasks). */
    const settle = async (kind: 'copy' | 'move', data: { tasks?: Array<{ id: string }> } | null) => {
      for (const t of data?.tasks ?? []) {
        for (let i = 0; ; i++) {
          const info = await s.api('POST', `/api/admin/task/${kind}/info?tid=${t.id}`, { token });
          if (info.data.state === 2) break;
          expect([0, 1, 5, 8], `task ${kind}: ${info.data.error}`).toContain(info.data.state);
          if (i > 600) throw new Error(`task ${kind} did not finish`);
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    };

    /**
     * Writes a tree for a test to read: the target's own `seed`, else straight through the mounted
     * driver (`makeDir`, `put`), not through the API: the big folder's 1 000 files were 1 000 HTTP
     * puts per driver, and the API's writes have tests of their own above.
     */
    const seedTree = async (tree: Record<string, string | Buffer>) => {
      if (target.seed) return target.seed(tree);
      const driver = s.core.storages.resolve(M)?.storage.driver;
      if (!driver?.put || !driver.makeDir) throw new Error(`the ${target.storage.driver} driver can not be seeded: give the target a seed()`);
      const made = new Set<string>(['/']);
      const dir = async (d: string): Promise<void> => {
        if (made.has(d)) return;
        const parent = d.slice(0, d.lastIndexOf('/')) || '/';
        await dir(parent);
        const exists = await driver.get(d).then((o) => o.isDir, (err) => (err instanceof ObjectNotFound ? false : Promise.reject(err)));
        if (!exists) await driver.makeDir!(parent, d.slice(d.lastIndexOf('/') + 1));
        made.add(d);
      };
      const files = Object.entries(tree);
      for (const [p] of files) await dir(p.endsWith('/') ? p.slice(0, -1) : p.slice(0, p.lastIndexOf('/')) || '/');
      const bodies = files.filter(([k]) => !k.endsWith('/'));
      for (let i = 0; i < bodies.length; i += 8) {
        await Promise.all(
          bodies.slice(i, i + 8).map(([p, c]) => {
            const body = Buffer.from(c);
            return driver.put!(p.slice(0, p.lastIndexOf('/')) || '/', { name: p.slice(p.lastIndexOf('/') + 1), size: body.length, stream: Readable.from([body]) });
          }),
        );
      }
    };

    it('mounts with status work and lists the root', async () => {
      const r = await s.api('GET', '/api/admin/storage/list', { token });
      const row = r.data.content.find((x: { mount_path: string }) => x.mount_path === M);
      expect(row.status).toBe('work');
      await list(M);
    });

    it('lists, gets and reads files with ranges', async () => {
      if (caps.write) {
        expectOk(await api('/api/fs/mkdir', { path: `${M}/fixture/sub` }));
        for (const [p, c] of Object.entries(FIXTURE)) expectOk(await put(M + p, c), p);
      }
      expect(await names(`${M}/fixture`)).toEqual(['empty.txt', 'small.txt', 'sub']);
      const content = (await list(`${M}/fixture`)).content!;
      expect(content.find((o) => o.name === 'sub')).toMatchObject({ is_dir: true });
      expect(content.find((o) => o.name === 'small.txt')).toMatchObject({ is_dir: false, size: FIXTURE['/fixture/small.txt']!.length });
      for (const [p, c] of Object.entries(FIXTURE)) await expectFile(M + p, c);
      const dir = await get(`${M}/fixture/sub`);
      expect(dir.code).toBe(200);
      expect(dir.data.is_dir).toBe(true);

      const bin = FIXTURE['/fixture/sub/nested.bin']!;
      const mid = await download(`${M}/fixture/sub/nested.bin`, 'bytes=100-1099');
      expect(mid.status).toBe(206);
      expect(mid.body.equals(bin.subarray(100, 1100))).toBe(true);
      const tail = await download(`${M}/fixture/sub/nested.bin`, 'bytes=-10');
      expect(tail.status).toBe(206);
      expect(tail.body.equals(bin.subarray(bin.length - 10))).toBe(true);
      const open = await download(`${M}/fixture/sub/nested.bin`, 'bytes=4000-');
      expect(open.body.equals(bin.subarray(4000))).toBe(true);
    });

    it('maps a missing object to "object not found" on get, list and /d', async () => {
      await expectGone(`${M}/no-such-file.txt`);
      await expectGone(`${M}/no-such-dir/deeper.txt`);
      const l = await api('/api/fs/list', { path: `${M}/no-such-dir`, refresh: true });
      expect(l.code).toBe(500);
      expect(l.message).toMatch(/object not found/);
      const d = await download(`${M}/no-such-file.txt`);
      expect(d.body.toString()).toMatch(/object not found/);
    });

    it('never reaches outside its root', async () => {
      const m = s.core.storages.all().find((x) => x.row.mount_path === M)!;
      const driver = m.driver!;
      const seen = (await driver.list('/').catch(() => [])).map((o) => o.name);
      const up = await driver.list('/..').then((objs) => objs.map((o) => o.name), (err: unknown) => err);
      if (Array.isArray(up)) expect(up.sort()).toEqual(seen.sort());
      else expect(up).toBeInstanceOf(ObjectNotFound);
      if (target.outsideMarker) {
        expect(seen).not.toContain(target.outsideMarker);
        await expect(driver.get(`/../${target.outsideMarker}`)).rejects.toBeInstanceOf(ObjectNotFound);
        await expect(driver.link(`/../../${target.outsideMarker}`, {})).rejects.toBeInstanceOf(ObjectNotFound);
      }
    });

    describe('writing', () => {
      it('creates nested folders; a file in the way is "file exists"', async () => {
        if (!caps.write) return;
        expectOk(await api('/api/fs/mkdir', { path: `${M}/w/a/b` }));
        expectOk(await api('/api/fs/mkdir', { path: `${M}/w/a/b` }));
        if (caps.emptyFolders) expect(await names(`${M}/w/a`)).toEqual(['b']);
        expect((await get(`${M}/w/a/b`)).data.is_dir).toBe(true);
        expectOk(await put(`${M}/w/file.txt`, Buffer.from('x')));
        const r = await api('/api/fs/mkdir', { path: `${M}/w/file.txt` });
        expect(r.code).toBe(500);
        expect(r.message).toMatch(/file exists/);
      });

      it('puts known sizes, chunked bodies and streams of unknown size', async () => {
        if (!caps.write) return;
        const big = randomBytes(6 * 1024 * 1024 + 123);
        expectOk(await put(`${M}/w/known.bin`, big));
        await expectFile(`${M}/w/known.bin`, big);
        const chunks = [randomBytes(1000), randomBytes(70_000), randomBytes(5)];
        expectOk(await putChunked(`${M}/w/chunked.bin`, chunks, 71_005));
        await expectFile(`${M}/w/chunked.bin`, Buffer.concat(chunks));
        const unknown = randomBytes(11 * 1024 * 1024 + 7);
        const f = await putForm(`${M}/w/unknown.bin`, unknown);
        expect(f.code, f.message).toBe(200);
        await expectFile(`${M}/w/unknown.bin`, unknown);
        expectOk(await putForm(`${M}/w/unknown-empty.bin`, Buffer.alloc(0)));
        await expectFile(`${M}/w/unknown-empty.bin`, Buffer.alloc(0));
        expectOk(await put(`${M}/w/new-parent/deep/file.txt`, Buffer.from('parents')));
        await expectFile(`${M}/w/new-parent/deep/file.txt`, Buffer.from('parents'));
      });

      it('replaces a file only with overwrite; a failed put leaves nothing behind', async () => {
        if (!caps.write) return;
        const before = await names(`${M}/w`);
        const refused = await put(`${M}/w/known.bin`, Buffer.from('nope'), { overwrite: 'false' });
        expect(refused.code).toBe(403);
        expect(refused.message).toBe('file exists');
        expectOk(await put(`${M}/w/file.txt`, Buffer.from('second version')));
        await expectFile(`${M}/w/file.txt`, Buffer.from('second version'));
        // Shorter than declared: refused, the old content stays, no temporary file is left.
        const short = await putChunked(`${M}/w/file.txt`, [Buffer.from('trunc')], 100);
        expect(short.code).not.toBe(200);
        await expectFile(`${M}/w/file.txt`, Buffer.from('second version'));
        const shortNew = await putChunked(`${M}/w/never.txt`, [randomBytes(6 * 1024 * 1024)], 7 * 1024 * 1024);
        expect(shortNew.code).not.toBe(200);
        await expectGone(`${M}/w/never.txt`);
        expect(await names(`${M}/w`)).toEqual(before);
        if (target.peerRead) expect(await target.peerRead('/w/never.txt')).toBeUndefined();
      });

      it('renames files and folders; an existing target is refused', async () => {
        if (!caps.write) return;
        expectOk(await api('/api/fs/rename', { path: `${M}/w/chunked.bin`, name: 'renamed.bin' }));
        await expectGone(`${M}/w/chunked.bin`);
        expect((await get(`${M}/w/renamed.bin`)).data.size).toBe(71_005);
        expectOk(await put(`${M}/w/a/b/inner.txt`, Buffer.from('inner')));
        expectOk(await api('/api/fs/rename', { path: `${M}/w/a`, name: 'a2' }));
        await expectFile(`${M}/w/a2/b/inner.txt`, Buffer.from('inner'));
        await expectGone(`${M}/w/a`);
        const clash = await api('/api/fs/rename', { path: `${M}/w/renamed.bin`, name: 'file.txt' });
        expect(clash.code).toBe(403);
        expect(clash.message).toBe('file [file.txt] exists');
        const missing = await api('/api/fs/rename', { path: `${M}/w/ghost.txt`, name: 'x.txt' });
        expect(missing.message).toMatch(/object not found/);
      });

      it('moves and copies files and folder trees', async () => {
        if (!caps.write) return;
        expectOk(await api('/api/fs/mkdir', { path: `${M}/m/dst` }));
        expectOk(await put(`${M}/m/one.txt`, Buffer.from('one')));
        await seedTree({ '/m/tree/x.txt': 'x', '/m/tree/deep/y.txt': 'yy' });
        let r = await api('/api/fs/move', { src_dir: `${M}/m`, dst_dir: `${M}/m/dst`, names: ['one.txt', 'tree'] });
        expect(r.code, r.message).toBe(200);
        await settle('move', r.data);
        await expectGone(`${M}/m/one.txt`);
        await expectGone(`${M}/m/tree`);
        await expectFile(`${M}/m/dst/one.txt`, Buffer.from('one'));
        await expectFile(`${M}/m/dst/tree/deep/y.txt`, Buffer.from('yy'));

        expectOk(await api('/api/fs/mkdir', { path: `${M}/m/copy` }));
        r = await api('/api/fs/copy', { src_dir: `${M}/m/dst`, dst_dir: `${M}/m/copy`, names: ['one.txt', 'tree'] });
        expect(r.code, r.message).toBe(200);
        await settle('copy', r.data);
        await expectFile(`${M}/m/copy/one.txt`, Buffer.from('one'));
        await expectFile(`${M}/m/copy/tree/x.txt`, Buffer.from('x'));
        await expectFile(`${M}/m/copy/tree/deep/y.txt`, Buffer.from('yy'));
        await expectFile(`${M}/m/dst/tree/deep/y.txt`, Buffer.from('yy'));

        r = await api('/api/fs/copy', { src_dir: `${M}/m/dst`, dst_dir: `${M}/m/copy`, names: ['one.txt'] });
        expect(r.code).toBe(403);
        expect(r.message).toBe('file [one.txt] exists');
        expectOk(await put(`${M}/m/dst/one.txt`, Buffer.from('one v2')));
        r = await api('/api/fs/copy', { src_dir: `${M}/m/dst`, dst_dir: `${M}/m/copy`, names: ['one.txt'], overwrite: true });
        expect(r.code, r.message).toBe(200);
        await settle('copy', r.data);
        await expectFile(`${M}/m/copy/one.txt`, Buffer.from('one v2'));
        r = await api('/api/fs/move', { src_dir: `${M}/m`, dst_dir: `${M}/m/dst`, names: ['ghost'] });
        expect(r.message).toMatch(/object not found/);
      });

      it('removes files and whole folders', async () => {
        if (!caps.write) return;
        const r = await api('/api/fs/remove', { dir: `${M}/m`, names: ['copy', 'dst'] });
        expect(r.code, r.message).toBe(200);
        await expectGone(`${M}/m/copy`);
        await expectGone(`${M}/m/dst/tree/deep/y.txt`);
        expectOk(await api('/api/fs/remove', { dir: `${M}/w`, names: ['file.txt', 'not-there'] }));
        await expectGone(`${M}/w/file.txt`);
        if (target.peerRead) expect(await target.peerRead('/w/file.txt')).toBeUndefined();
      });

      it('handles unicode and odd names end to end', async () => {
        if (!caps.write) return;
        const dir = `${M}/odd dir ü #1`;
        expectOk(await api('/api/fs/mkdir', { path: dir }));
        for (const [i, n] of caps.names.entries()) {
          const body = Buffer.from(`content of ${n} #${i}`);
          const r = await put(`${dir}/${n}`, body);
          expect(r.code, `${n}: ${r.message}`).toBe(200);
        }
        expect(await names(dir)).toEqual([...caps.names].sort());
        for (const [i, n] of caps.names.entries()) await expectFile(`${dir}/${n}`, Buffer.from(`content of ${n} #${i}`));
        const first = caps.names[0]!;
        expectOk(await api('/api/fs/rename', { path: `${dir}/${first}`, name: `ré ${first} ✓` }));
        await expectFile(`${dir}/ré ${first} ✓`, Buffer.from(`content of ${first} #0`));
        expectOk(await api('/api/fs/remove', { dir, names: caps.names.slice(1) }));
        expect(await names(dir)).toEqual([`ré ${first} ✓`]);
      });
    });

    it('lists a big folder completely, with paging', async () => {
      if (caps.bigFolder === 0) return;
      const n = caps.bigFolder;
      const tree: Record<string, string> = {};
      for (let i = 0; i < n; i++) tree[`/big/f-${String(i).padStart(5, '0')}.txt`] = String(i);
      if (caps.write || target.seed) await seedTree(tree);
      const all = await list(`${M}/big`);
      expect(all.total).toBe(n);
      expect(new Set(all.content!.map((o) => o.name)).size).toBe(n);
      expect(all.content!.every((o) => o.size === Number(o.name.slice(2, 7)).toString().length)).toBe(true);
      const page = await list(`${M}/big`, { page: 3, per_page: 100 });
      expect(page.total).toBe(n);
      expect(page.content!.map((o) => o.name)[0]).toBe('f-00200.txt');
      await expectFile(`${M}/big/f-00777.txt`, Buffer.from('777'));
    }, 120_000);

    it('maps a refusal of the peer to "permission denied"', async () => {
      const ro = target.readOnly;
      if (!ro || !caps.write) return;
      const created = await api('/api/admin/storage/create', {
        mount_path: '/ro',
        driver: target.storage.driver,
        cache_expiration: 0,
        addition: JSON.stringify(ro.addition),
      });
      expect(created.code, created.message).toBe(200);
      const dir = `/ro${ro.dir === '/' ? '' : ro.dir}`;
      const items = (await list(dir)).content ?? [];
      const p = await put(`${dir}/denied.txt`, Buffer.from('no'));
      expect(p.code).toBe(500);
      expect(p.message).toMatch(/permission denied/);
      const m = await api('/api/fs/mkdir', { path: `${dir}/denied-dir` });
      expect(m.message).toMatch(/permission denied/);
      const file = items.find((o) => !o.is_dir);
      if (file) {
        const rm = await api('/api/fs/remove', { dir, names: [file.name] });
        expect(rm.message).toMatch(/permission denied/);
        const rn = await api('/api/fs/rename', { path: `${dir}/${file.name}`, name: 'renamed-denied' });
        expect(rn.message).toMatch(/permission denied/);
        expect(await names(dir)).toEqual(items.map((o) => o.name).sort());
      }
      await expectGone(`${dir}/denied.txt`);
    });
  });
}

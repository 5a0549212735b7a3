import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PEER_JSON_BYTES, MAX_PEER_JSON_DEPTH } from '../../src/drivers/peer-answer.js';
import { BACKENDS } from '../helpers/backends.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { mount } from './mount.js';

/**
 * Bytes the kernel may hold between the fake peer's writes and Atrium's reads on loopback: the
 * largest send and receive buffers TCP autotuning may grow to (this VM lets a receive buffer grow
 * to 32 MiB), and 1 MiB for what the streams hold.
 */
function socketSlack(): number {
  const max = (f: string) => {
    try {
      return Number(readFileSync(f, 'utf8').trim().split(/\s+/)[2]) || 0;
    } catch {
      return 0;
    }
  };
  return (max('/proc/sys/net/ipv4/tcp_rmem') || 6 << 20) + (max('/proc/sys/net/ipv4/tcp_wmem') || 4 << 20) + (1 << 20);
}
const SLACK = socketSlack();

/** What the fake peer answers to /api/fs/list and PUT /api/fs/put. */
type Mode = 'endless' | 'declared' | 'deep' | 'listing';

/**
 * A loopback server speaking just enough of this API to mount (GET /api/me), whose listing and
 * upload answers are hostile as `mode` says. It counts the body bytes it managed to send before
 * the client closed the connection.
 */
function fakePeer() {
  const state = { mode: 'listing' as Mode, sent: 0, closed: Promise.resolve(), entries: 20_000 };
  const envelope = (data: unknown) => JSON.stringify({ code: 200, message: 'success', data });
  const endless = (res: http.ServerResponse, headers: http.OutgoingHttpHeaders) => {
    res.writeHead(200, { 'content-type': 'application/json', ...headers });
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    res.write('{"code":200,"message":"');
    state.closed = new Promise((done) => {
      const pump = () => {
        while (!res.destroyed) {
          state.sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
      };
      res.once('close', () => done());
      pump();
    });
  };
  /** A folder index page as nginx's `autoindex_format json` writes it, hostile as `mode` says. */
  const autoindex = (res: http.ServerResponse) => {
    if (state.mode === 'endless') return endless(res, {});
    if (state.mode === 'deep') return void res.writeHead(200, { 'content-type': 'application/json' }).end(`${'['.repeat(100_000)}${']'.repeat(100_000)}`);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify([{ name: 'a.txt', type: 'file', mtime: 'Tue, 02 Jan 2024 03:04:05 GMT', size: 1 }]));
  };
  const server = http.createServer((req, res) => {
    req.resume();
    const route = (req.url ?? '').split('?')[0] ?? '';
    if (route === '/api/me') return void res.end(envelope({ username: 'admin', role: 2 }));
    if (route === '/api/fs/get') return void res.end(JSON.stringify({ code: 500, message: 'object not found', data: null }));
    if (route.startsWith('/index/')) return autoindex(res);
    if (route !== '/api/fs/list' && route !== '/api/fs/put') return void res.writeHead(404).end();
    state.sent = 0;
    if (state.mode === 'endless') return endless(res, {});
    if (state.mode === 'declared') return endless(res, { 'content-length': String(1024 * 1024 * 1024) });
    if (state.mode === 'deep') {
      const depth = 100_000;
      return void res.end(`{"code":200,"message":"","data":{"content":${'['.repeat(depth)}${']'.repeat(depth)}}}`);
    }
    if (route === '/api/fs/put') return void res.end(envelope(null));
    const content = Array.from({ length: state.entries }, (_, i) => ({ name: `file-${String(i).padStart(6, '0')}.txt`, size: i, is_dir: false, modified: '2024-01-02T03:04:05Z', created: '2024-01-02T03:04:05Z', sign: '', thumb: '', type: 0, hash_info: null }));
    res.end(envelope({ content, total: content.length, readme: '', header: '', write: true, provider: 'Local' }));
  });
  return { server, state };
}

describe('answers of a peer are read within bounds', () => {
  let s: TestServer;
  let admin: string;
  const peer = fakePeer();
  const list = () => s.api('POST', '/api/fs/list', { token: admin, body: { path: '/peer', refresh: true } });

  beforeAll(async () => {
    await new Promise<void>((r) => peer.server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(peer.server.address() as AddressInfo).port}`;
    s = await startServer(BACKENDS[0]!);
    admin = await s.login();
    await mount(s, admin, '/peer', 'AList V3', { url: base, token: 'peer-token', root_folder_path: '/' });
    await mount(s, admin, '/index', 'AutoIndex', { url: `${base}/index/` });
  }, 60_000);
  afterAll(async () => {
    await s?.destroy();
    peer.server.closeAllConnections();
    await new Promise((r) => peer.server.close(r));
  });

  it('a big folder still lists in full', async () => {
    peer.state.mode = 'listing';
    const r = await list();
    expect(r.code, r.message).toBe(200);
    expect(r.data.total).toBe(peer.state.entries);
    expect(r.data.content[peer.state.entries - 1].name).toBe('file-019999.txt');
  });

  it('an endless listing answer stops at the bound with a clear error, and the storage answers again after', async () => {
    peer.state.mode = 'endless';
    const r = await list();
    expect(r.code).toBe(500);
    expect(r.message).toMatch(new RegExp(`^http://\\S+/api/fs/list answered more than ${MAX_PEER_JSON_BYTES} bytes$`));
    await peer.state.closed;
    // The peer got to send the bound and what the sockets buffer on the way, not more.
    expect(peer.state.sent).toBeGreaterThan(MAX_PEER_JSON_BYTES);
    expect(peer.state.sent).toBeLessThan(MAX_PEER_JSON_BYTES + SLACK);
    peer.state.mode = 'listing';
    expect((await list()).code).toBe(200);
  });

  it('a Content-Length over the bound fails before the body is read', async () => {
    peer.state.mode = 'declared';
    const r = await list();
    expect(r.code).toBe(500);
    expect(r.message).toMatch(/\/api\/fs\/list answered more than 16777216 bytes$/);
    await peer.state.closed;
    expect(peer.state.sent).toBeLessThan(SLACK);
  });

  it('JSON nested deeper than the bound is refused, not parsed', async () => {
    peer.state.mode = 'deep';
    const r = await list();
    expect(r.code).toBe(500);
    expect(r.message).toMatch(new RegExp(`/api/fs/list answered JSON nested deeper than ${MAX_PEER_JSON_DEPTH} levels$`));
  });

  it("an upload's endless answer fails the upload with the same error", async () => {
    peer.state.mode = 'endless';
    const up = await s.inject({ method: 'PUT', url: '/api/fs/put', payload: 'some bytes', headers: { authorization: admin, 'file-path': encodeURIComponent('/peer/up.txt'), 'content-type': 'text/plain' } });
    expect(up.json().code).toBe(500);
    expect(up.json().message).toMatch(/\/api\/fs\/put answered more than 16777216 bytes$/);
    await peer.state.closed;
    expect(peer.state.sent).toBeLessThan(MAX_PEER_JSON_BYTES + SLACK);
  });

  it('an AutoIndex page stops at its own bound (64 MiB), and its JSON index at the same depth', async () => {
    const listIndex = () => s.api('POST', '/api/fs/list', { token: admin, body: { path: '/index', refresh: true } });
    peer.state.mode = 'listing';
    expect((await listIndex()).data.content.map((o: { name: string }) => o.name)).toEqual(['a.txt']);
    peer.state.mode = 'endless';
    const big = await listIndex();
    expect(big.code).toBe(500);
    expect(big.message).toMatch(/\/index\/ answered more than 67108864 bytes$/);
    await peer.state.closed;
    expect(peer.state.sent).toBeLessThan(64 * 1024 * 1024 + SLACK);
    peer.state.mode = 'deep';
    const deep = await listIndex();
    expect(deep.code).toBe(500);
    expect(deep.message).toMatch(new RegExp(`/index/ answered JSON nested deeper than ${MAX_PEER_JSON_DEPTH} levels$`));
  });
});

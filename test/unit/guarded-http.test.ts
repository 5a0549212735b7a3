import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { openGuarded } from '../../src/net/guarded-http.js';

/**
 * A raw HTTP peer: `answer(n, i)` decides the i-th request (from 0) on the n-th connection (from
 * 0): 'ok' answers 200 and keeps the connection open, 'drop' closes it without an answer (as a
 * peer whose idle timeout fired just as the request arrived).
 */
function peer(answer: (conn: number, req: number) => 'ok' | 'drop') {
  const sockets = new Set<net.Socket>();
  let connections = 0;
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    const conn = connections++;
    let pending = '';
    let req = 0;
    socket.on('data', (d) => {
      pending += d.toString('latin1');
      while (pending.includes('\r\n\r\n')) {
        pending = pending.slice(pending.indexOf('\r\n\r\n') + 4);
        if (answer(conn, req++) === 'drop') return void socket.destroy();
        socket.write(`HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: keep-alive\r\n\r\nconn ${conn}`);
      }
    });
  });
  return {
    connections: () => connections,
    listen: () => new Promise<string>((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}/f`))),
    stop: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.end();
        server.close(() => resolve());
      }),
  };
}

const peers: Array<ReturnType<typeof peer>> = [];
afterEach(async () => {
  await Promise.all(peers.splice(0).map((p) => p.stop()));
});

async function get(url: string): Promise<string> {
  const { res } = await openGuarded(url, { allowPrivate: true });
  let body = '';
  for await (const d of res) body += d;
  await new Promise((r) => setImmediate(r)); // the connection back in the pool
  return `${res.statusCode} ${body}`;
}

describe('openGuarded on kept-alive connections', () => {
  it('makes a request again on a new connection when the kept-alive one was closed under it', async () => {
    const p = peer((conn, req) => (conn === 0 && req === 1 ? 'drop' : 'ok'));
    peers.push(p);
    const url = await p.listen();
    expect(await get(url)).toBe('200 conn 0');
    expect(await get(url)).toBe('200 conn 1');
    expect(p.connections()).toBe(2);
  });

  it('keeps the failure of a new connection: no second try', async () => {
    const p = peer(() => 'drop');
    peers.push(p);
    const url = await p.listen();
    await expect(get(url)).rejects.toThrow(/socket hang up/);
    expect(p.connections()).toBe(1);
  });

  it('names the refused connect of a peer that stopped, whatever connection was kept alive to it', async () => {
    const p = peer(() => 'ok');
    peers.push(p); // stopped again after the test: closing a stopped server only reports that it was
    const url = await p.listen();
    expect(await get(url)).toBe('200 conn 0');
    await p.stop();
    await expect(get(url)).rejects.toThrow(/connect ECONNREFUSED/);
  });
});

import net from 'node:net';

/** A TCP proxy on loopback the test controls: `cut()` drops every connection and refuses new ones until `restore()`. */
export interface TcpProxy {
  port: number;
  /** Connections accepted and forwarded so far. */
  connections(): number;
  cut(): void;
  restore(): void;
  /** Drops the open connections but keeps accepting (what a restart of the peer looks like). */
  reset(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const open = new Set<net.Socket>();
  let down = false;
  let accepted = 0;
  const server = net.createServer((client) => {
    if (down) {
      client.destroy();
      return;
    }
    accepted++;
    const upstream = net.connect(targetPort, targetHost);
    open.add(client);
    open.add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const dropAll = () => {
    for (const s of open) s.destroy();
    open.clear();
  };
  return {
    port: (server.address() as net.AddressInfo).port,
    connections: () => accepted,
    cut: () => {
      down = true;
      dropAll();
    },
    restore: () => {
      down = false;
    },
    reset: dropAll,
    close: () => {
      down = true;
      dropAll();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

import type { AddressInfo, Server } from 'node:net';

/** A protocol server on a port of its own. */
export interface ProtocolListener {
  /** Where it listens, for the start-up message. */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Listens on `host:port` (all addresses when `host` is empty); resolves with the port taken. */
export function listenOn(server: Pick<Server, 'once' | 'off' | 'listen' | 'address'>, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host || undefined, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

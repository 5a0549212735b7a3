import type { AddressInfo, Server } from 'node:net';
import type { Core } from '../core.js';

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

/**
 * Starts the protocol servers the config enables (`sftp.enable`, `ftp.enable`, `s3.enable`).
 * Each front's module is imported only when it is enabled: the built server keeps them in
 * chunks of their own (scripts/build-server.mjs), so a default start does not read them.
 */
export async function startProtocolListeners(core: Core): Promise<ProtocolListener[]> {
  const started: ProtocolListener[] = [];
  try {
    if (core.config.sftp.enable) started.push(await (await import('./sftp/server.js')).startSftpServer(core));
    if (core.config.ftp.enable) started.push(await (await import('./ftp/server.js')).startFtpServer(core));
    if (core.config.s3.enable) started.push(await (await import('./s3/server.js')).startS3Server(core));
  } catch (err) {
    await Promise.all(started.map((l) => l.close()));
    throw err;
  }
  return started;
}

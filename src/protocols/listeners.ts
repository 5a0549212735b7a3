import type { Core } from '../core.js';
import type { ProtocolListener } from './listen-on.js';

export type { ProtocolListener } from './listen-on.js';

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

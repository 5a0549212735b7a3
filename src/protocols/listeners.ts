import type { Core } from '../core.js';
import { startFtpServer } from './ftp/server.js';
import { startSftpServer } from './sftp/server.js';

/** A protocol server on a port of its own. */
export interface ProtocolListener {
  /** Where it listens, for the start-up message. */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Starts the protocol servers the config enables (`sftp.enable`, `ftp.enable`). */
export async function startProtocolListeners(core: Core): Promise<ProtocolListener[]> {
  const started: ProtocolListener[] = [];
  try {
    if (core.config.sftp.enable) started.push(await startSftpServer(core));
    if (core.config.ftp.enable) started.push(await startFtpServer(core));
  } catch (err) {
    await Promise.all(started.map((l) => l.close()));
    throw err;
  }
  return started;
}

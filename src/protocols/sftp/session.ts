import type { SFTPWrapper } from 'ssh2';
import type { Logger } from '../../logger.js';
import type { SessionPrincipal } from '../live-session.js';
import { type SessionOptions, SftpChannel } from './channel.js';
import { serveFiles } from './requests-files.js';
import { servePaths } from './requests-paths.js';

/** Serves one SFTP channel for one principal (see SftpChannel). */
export function serveSftp(sftp: SFTPWrapper, principal: SessionPrincipal, log: Logger, opts: SessionOptions): void {
  const ch = new SftpChannel(sftp, principal, log, opts);
  serveFiles(ch);
  servePaths(ch);
  const closeAll = () => ch.closeAll();
  sftp.on('close', closeAll);
  sftp.on('error', closeAll);
  // The client's EOF: close our side too, or OpenSSH waits for the channel to close.
  sftp.on('end', () => {
    closeAll();
    sftp.end();
  });
}

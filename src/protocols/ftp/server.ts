import net from 'node:net';
import { parseListen } from '../../config/load.js';
import type { Core } from '../../core.js';
import { listenOn, type ProtocolListener } from '../listen-on.js';
import { FtpSession } from './session.js';
import { FtpTls } from './tls.js';

/** The FTP server (config `ftp`, wire-api.md §15.3): passive mode, TLS when configured (ftp/tls.ts). */
export async function startFtpServer(core: Core, listen = core.config.ftp.listen): Promise<ProtocolListener> {
  const { host, port } = parseListen('ftp.listen', listen);
  const log = core.log.child({ service: 'ftp' });
  const sockets = new Set<net.Socket>();
  const tls = new FtpTls(core.settings);
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    new FtpSession(core, socket, core.config.ftp, log, tls).start();
  });
  const actual = await listenOn(server, port, host);
  server.on('error', (err: Error) => log.error({ err }, 'ftp server error'));
  return {
    url: `ftp://${host || '0.0.0.0'}:${actual}`,
    port: actual,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

import { rm } from 'node:fs/promises';
import net, { type Socket } from 'node:net';
import path from 'node:path';
import type * as Ssh2 from 'ssh2';
import type { Connection } from 'ssh2';
import { parseListen } from '../../config/load.js';
import type { Core } from '../../core.js';
import { lazyRequire } from '../../util/lazy-require.js';
import { listenOn, type ProtocolListener } from '../listen-on.js';
import type { ConnectionHandle } from '../../auth/account-sessions.js';
import { SessionPrincipal } from '../live-session.js';
import { authenticate, type SshLogin } from './auth.js';
import { loadHostKeys } from './host-key.js';
import type { ReadHold } from './handles.js';
import { serveSftp } from './session.js';
import { SPOOL_FOLDER } from './spool.js';
import { sshCiphers } from './ciphers.js';
import { storageSpace } from './space.js';

const loadSsh2 = lazyRequire<typeof Ssh2>('ssh2');

/**
 * The SFTP server (config `sftp`, wire-api.md §15.4): SSH with the host key kept in the data
 * folder, password and public-key logins, and only the `sftp` subsystem (no shell, no exec).
 */
export async function startSftpServer(core: Core, listen = core.config.sftp.listen): Promise<ProtocolListener> {
  const ssh2 = loadSsh2();
  const { host, port } = parseListen('sftp.listen', listen);
  const hostKeys = await loadHostKeys(ssh2, core.dataDir, core.config.sftp.rsa_host_key);
  // Spools of uploads cut short by a crash: nobody owns them any more.
  await rm(path.join(core.config.temp_dir, SPOOL_FOLDER), { recursive: true, force: true });
  const log = core.log.child({ service: 'sftp' });
  const clients = new Set<Connection>();
  const banner = core.settings.get('announcement');
  const server = new ssh2.Server({ hostKeys, ident: 'Atrium', banner: banner ? `${banner}\n` : undefined, algorithms: { cipher: sshCiphers() } }, (client, info) => {
    clients.add(client);
    // ssh2 keeps the connection's socket as `_sock` (lib/server.js): uploads pause it while the storage is behind.
    const socket = (client as unknown as { _sock?: unknown })._sock;
    const hold = socket instanceof net.Socket ? readHold(socket) : undefined;
    let login: SshLogin | undefined;
    let registered: ConnectionHandle | undefined;
    let closed = false;
    // The connection is one of the account's sessions until it closes (GET /api/me/sessions can end it).
    const register = (l: SshLogin) =>
      core.sessions.connect(l.user, 'sftp', { ip: info.ip, ua: info.header?.identRaw }, () => client.end()).then(
        (h) => (closed ? h.close() : (registered = h)),
        (err: unknown) => {
          log.warn({ user: l.user.username, ip: info.ip, reason: (err as Error).message }, 'sftp session refused');
          client.end();
        },
      );
    client.on('authentication', (ctx) => {
      authenticate(ssh2, core, ctx, info.ip).then(
        (l) => {
          if (!l) return;
          login = l;
          void register(l);
        },
        (err: unknown) => {
          log.error({ err }, 'sftp authentication failed');
          ctx.reject();
        },
      );
    });
    client.on('ready', () => {
      client.on('session', (accept) => {
        const session = accept();
        session.on('sftp', (acceptSftp) => {
          if (!login) return;
          // Every request of the channel is decided on the account as it is then.
          const principal = new SessionPrincipal(core, login.user, { front: 'ftp', origin: { front: 'sftp', ip: info.ip } }, login.credential, () => registered?.touch());
          serveSftp(acceptSftp(), principal, log.child({ user: login.user.username, ip: info.ip }), {
            tempDir: core.config.temp_dir,
            partials: core.uploads.partials,
            spaceOf: (view, p) => storageSpace(view.storageOf(p)),
            readHold: hold,
            endConnection: () => client.end(),
          });
        });
      });
    });
    client.on('error', (err) => log.debug({ err, ip: info.ip }, 'sftp connection error'));
    client.on('close', () => {
      closed = true;
      registered?.close();
      clients.delete(client);
    });
  });
  // Our own listener hands each connection to ssh2, so that its socket's writes can be batched.
  const tcp = net.createServer((socket) => {
    batchWrites(socket);
    server.injectSocket(socket);
  });
  const actual = await listenOn(tcp, port, host);
  tcp.on('error', (err: Error) => log.error({ err }, 'sftp server error'));
  return {
    url: `sftp://${host || '0.0.0.0'}:${actual}`,
    port: actual,
    close: async () => {
      for (const c of clients) c.end();
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
    },
  };
}

/** Pauses the socket while any upload of the connection holds it (ssh2 reads it in flowing mode). */
function readHold(socket: Socket): ReadHold {
  let holds = 0;
  return {
    hold: () => {
      if (holds++ === 0) socket.pause();
    },
    release: () => {
      if (--holds === 0 && !socket.destroyed) socket.resume();
    },
  };
}

/**
 * The packets ssh2 sends in one turn of the event loop leave in one write: SFTP clients keep many
 * requests in flight, and ssh2 writes every answer packet (a status of 28 bytes, or 32 KiB of a
 * file) to the socket on its own, one system call each. The first write of a turn corks the
 * socket; it is uncorked once the turn's I/O callbacks (and the answers they made) have run.
 */
function batchWrites(socket: Socket): void {
  let corked = false;
  const uncork = () => {
    corked = false;
    socket.uncork();
  };
  const write = socket.write;
  socket.write = function (this: Socket, ...args: Parameters<Socket['write']>) {
    if (!corked) {
      corked = true;
      socket.cork();
      setImmediate(uncork);
    }
    return write.apply(this, args);
  } as Socket['write'];
}

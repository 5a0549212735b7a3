import type { ConnectionHandle } from '../../auth/account-sessions.js';
import type net from 'node:net';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { can, PERM } from '../../auth/permissions.js';
import type { FtpConfig } from '../../config/defaults.js';
import type { Core } from '../../core.js';
import { ROLE_GUEST } from '../../db/users.js';
import type { Obj } from '../../drivers/types.js';
import { AppError } from '../../errors.js';
import { replyOf } from './replies.js';
import type { Logger } from '../../logger.js';
import { lsLine } from '../ls-line.js';
import { mayConnect, type View } from '../../view/view.js';
import { appPasswordCredential, decidedStream, requireHeld, SessionPrincipal } from '../live-session.js';
import { endDataSocket, PassiveListener, parsePortMap } from './passive.js';
import { type FtpTls, secureDataSocket, serverTls } from './tls.js';
import type { SecureContext as TlsContext } from 'node:tls';

const MAX_LINE = 8192;
/** How long after the end of an upload's data the control connection must still be open for the upload to count as finished. */
const CONTROL_GRACE_MS = 50;

/** The command already sent its own reply (AUTH TLS, whose reply precedes the handshake). */
class Sent extends Error {}

/** A reply to send: an FTP code and its text (several lines for multi-line replies). */
class Reply extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

const FEATURES = ['UTF8', 'EPSV', 'PASV', 'SIZE', 'MDTM', 'MFMT', 'REST STREAM', 'MLST type*;size*;modify*;', 'TVFS'];

/** `YYYYMMDDHHMMSS` in UTC, as MDTM and MLSD give times. */
const ftpTime = (d: Date) => d.toISOString().replace(/[-:T]/g, '').slice(0, 14);

function parseFtpTime(s: string): Date | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:\.\d+)?$/.exec(s);
  if (!m) return undefined;
  const d = new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!));
  return Number.isNaN(d.getTime()) ? undefined : d;
}

const mlsFacts = (o: Obj) => `type=${o.isDir ? 'dir' : 'file'};size=${o.size};modify=${ftpTime(o.modified)}; ${o.name}`;

/**
 * One FTP control connection (wire-api.md §15.3), passive mode only: login (users by password
 * with the login lockout; `anonymous`/`guest` as the guest, the password being the path
 * password), then folder listings, downloads with REST, uploads streamed into `fs` put, mkdir,
 * delete, rename, all through the user's view (view/) with the same rules as every other front.
 * Every command is decided on the account and rules as they are then (SessionPrincipal), and a
 * transfer again while it runs and before an upload is stored; a principal refused (deleted,
 * disabled, re-passworded, its FTP/SFTP read bit or app password gone) is answered `530` and
 * the control connection closes.
 */
export class FtpSession {
  private username = '';
  private principal?: SessionPrincipal;
  /** The current folder, a client path (below the base path as it is at each command). */
  private cwd = '/';
  private passive?: PassiveListener;
  private restOffset = 0;
  /** RNFR's path as the client named it, decided again at RNTO. */
  private renameFrom?: string;
  private transfer?: net.Socket;
  private buffer = '';
  private queue: Promise<void> = Promise.resolve();
  private idleTimer?: NodeJS.Timeout;
  private closed = false;
  /** This connection as one of the account's sessions (auth/account-sessions.ts), once logged in. */
  private registered?: ConnectionHandle;
  /** The control connection runs in TLS (implicit, or after AUTH TLS). */
  private secure = false;
  /** PROT P: data connections run in TLS too. */
  private protectData = false;

  constructor(
    private readonly core: Core,
    private socket: net.Socket,
    private readonly config: FtpConfig,
    private readonly log: Logger,
    private readonly tls: FtpTls,
  ) {}

  start(): void {
    let context: TlsContext | undefined;
    try {
      context = this.tls.implicit ? this.tls.context() : undefined;
    } catch (err) {
      this.log.error({ err }, 'ftp_implicit_tls is on but the certificate or key cannot be read');
      this.socket.destroy();
      return;
    }
    if (context) {
      this.socket = serverTls(this.socket, context);
      this.secure = true;
      this.protectData = true;
    }
    const banner = this.core.settings.get('announcement').trim();
    const lines = banner ? banner.split(/\r?\n/).map((l) => ` ${l}`) : [];
    this.send(220, [...lines, 'Atrium FTP Endpoint'].join('\n'));
    this.listen();
    this.touch();
  }

  private listen(): void {
    this.socket.setEncoding('utf8');
    this.socket.on('data', (chunk: string) => this.onData(chunk));
    this.socket.on('close', () => this.cleanup());
    this.socket.on('error', () => this.cleanup());
  }

  /** AUTH TLS: the reply goes out in clear, then the same connection continues in TLS. */
  private startTls(context: TlsContext): void {
    const plain = this.socket;
    plain.removeAllListeners('data');
    plain.removeAllListeners('close');
    plain.removeAllListeners('error');
    plain.on('error', () => this.cleanup());
    this.socket = serverTls(plain, context);
    this.secure = true;
    this.buffer = '';
    this.listen();
  }

  private touch(): void {
    this.registered?.touch();
    clearTimeout(this.idleTimer);
    if (this.config.idle_timeout <= 0) return;
    this.idleTimer = setTimeout(() => {
      this.send(421, 'Idle timeout, closing the connection');
      this.socket.end();
    }, this.config.idle_timeout * 1000);
    this.idleTimer.unref();
  }

  private cleanup(): void {
    this.closed = true;
    this.registered?.close();
    clearTimeout(this.idleTimer);
    this.passive?.close();
    this.transfer?.destroy(new Error('the control connection closed'));
  }

  private send(code: number, text: string): void {
    if (this.closed || this.socket.destroyed) return;
    const lines = text.split('\n');
    if (lines.length === 1) {
      this.socket.write(`${code} ${text}\r\n`);
      return;
    }
    const last = lines.pop()!;
    this.socket.write(`${code}-${lines.join('\r\n')}\r\n${code} ${last}\r\n`);
  }

  private onData(chunk: string): void {
    this.buffer += chunk;
    if (this.buffer.length > MAX_LINE && !this.buffer.includes('\n')) {
      this.send(500, 'Command line too long');
      this.socket.destroy();
      return;
    }
    let nl: number;
    while ((nl = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, nl).replace(/\r$/, '');
      this.buffer = this.buffer.slice(nl + 1);
      this.touch();
      const space = line.indexOf(' ');
      const cmd = (space < 0 ? line : line.slice(0, space)).toUpperCase();
      const arg = space < 0 ? '' : line.slice(space + 1);
      // ABOR acts at once on a running transfer, then takes its turn for its reply.
      if (cmd === 'ABOR') this.transfer?.destroy(new Error('aborted'));
      this.queue = this.queue.then(() => this.handle(cmd, arg));
    }
  }

  private async handle(cmd: string, arg: string): Promise<void> {
    if (this.closed) return;
    try {
      const [code, text] = await this.command(cmd, arg);
      this.send(code, text);
    } catch (err) {
      if (err instanceof Sent) return;
      const { code, text } = this.failure(err, cmd);
      this.send(code, text);
      if (this.principal?.endedBy(err)) this.end();
    }
  }

  /** Closes the control connection of a session whose principal was refused. */
  private end(): void {
    this.log.info({ user: this.username, reason: this.principal?.ended?.message }, 'ftp session ended: the account no longer admits it');
    this.socket.end();
    this.cleanup();
  }

  private failure(err: unknown, cmd: string): { code: number; text: string } {
    if (err instanceof Reply) return { code: err.code, text: err.message };
    if (this.principal?.endedBy(err)) return { code: 530, text: (err as Error).message };
    const { code, text, expected } = replyOf(err);
    if (!expected) this.log.error({ err, cmd, user: this.username, remote: this.socket.remoteAddress }, 'ftp command failed');
    return { code, text };
  }

  /** The principal's view as the account and rules are now. */
  private view(): Promise<View> {
    if (!this.principal) throw new Reply(530, 'Please login with USER and PASS');
    return this.principal.view();
  }

  /** A command's path argument (absolute, or relative to the current folder) as a client path. */
  private clientPath(arg: string): string {
    return arg.trim() === '' ? this.cwd : arg.startsWith('/') ? arg : path.posix.join(this.cwd, arg);
  }

  /** A command's path argument as a virtual path of the view. */
  private resolve(view: View, arg: string): string {
    return view.virtual(this.clientPath(arg));
  }

  private async command(cmd: string, arg: string): Promise<[number, string]> {
    switch (cmd) {
      case 'USER':
        if (this.tls.mandatory && !this.secure) return [534, 'TLS is required: use AUTH TLS first'];
        this.username = arg.trim();
        this.principal = undefined;
        return [331, 'Password required'];
      case 'PASS':
        if (this.tls.mandatory && !this.secure) return [534, 'TLS is required: use AUTH TLS first'];
        return this.login(arg);
      case 'QUIT':
        setImmediate(() => this.socket.end());
        return [221, 'Goodbye'];
      case 'NOOP':
        return [200, 'OK'];
      case 'FEAT': {
        const tlsFeatures = this.tls.configured() ? ['AUTH TLS', 'PBSZ', 'PROT'] : [];
        return [211, ['Features:', ...tlsFeatures, ...FEATURES].map((f, i) => (i === 0 ? f : ` ${f}`)).concat('End').join('\n')];
      }
      case 'OPTS':
        return /^utf8( on)?$/i.test(arg.trim()) ? [200, 'UTF8 mode is always on'] : [501, 'Option not understood'];
      case 'SYST':
        return [215, 'UNIX Type: L8'];
      case 'AUTH': {
        const context = this.tls.context();
        if (!context) return [502, 'TLS is not configured (ftp_tls_public_cert_path, ftp_tls_private_key_path)'];
        if (!/^(TLS|TLS-C|SSL)$/i.test(arg.trim())) return [504, 'Only AUTH TLS is supported'];
        if (this.secure) return [503, 'TLS is already on'];
        // The reply must leave in clear before the handshake starts.
        this.send(234, 'AUTH TLS successful');
        this.startTls(context);
        throw new Sent();
      }
      case 'PBSZ':
        if (!this.secure) return [503, 'PBSZ needs AUTH TLS first'];
        return [200, 'PBSZ=0'];
      case 'PROT': {
        if (!this.secure) return [503, 'PROT needs AUTH TLS first'];
        const level = arg.trim().toUpperCase();
        if (level === 'P') this.protectData = true;
        else if (level === 'C' && !this.tls.mandatory) this.protectData = false;
        else return [level === 'C' ? 534 : 504, level === 'C' ? 'TLS is required for data connections' : 'Only PROT P and C are supported'];
        return [200, `Protection level set to ${level}`];
      }
      case 'PORT':
      case 'EPRT':
        return [502, 'Active mode is not supported, use passive mode (PASV or EPSV)'];
    }
    return this.fileCommand(cmd, arg);
  }

  /** The commands of a signed-in session: each takes the view as the account is now. */
  private async fileCommand(cmd: string, arg: string): Promise<[number, string]> {
    const view = await this.view();
    switch (cmd) {
      case 'PWD':
      case 'XPWD':
        return [257, `"${this.cwd.replace(/"/g, '""')}" is the current folder`];
      case 'CWD':
      case 'XCWD':
        return this.cwdTo(view, arg);
      case 'CDUP':
      case 'XCUP':
        return this.cwdTo(view, '..');
      case 'TYPE':
        return /^[AI]( N)?$|^L 8$/i.test(arg.trim()) ? [200, `Type set to ${arg.trim().toUpperCase()} (transfers are binary)`] : [504, 'Type not supported'];
      case 'MODE':
        return arg.trim().toUpperCase() === 'S' ? [200, 'Mode S'] : [504, 'Only stream mode is supported'];
      case 'STRU':
        return arg.trim().toUpperCase() === 'F' ? [200, 'Structure F'] : [504, 'Only file structure is supported'];
      case 'PASV':
      case 'EPSV':
        return this.openPassive(cmd === 'EPSV');
      case 'REST': {
        const n = Number(arg.trim());
        if (!Number.isSafeInteger(n) || n < 0) return [501, 'REST needs a byte offset'];
        this.restOffset = n;
        return [350, `Restarting at ${n}`];
      }
      case 'LIST':
      case 'NLST':
      case 'MLSD':
        return this.listing(view, cmd, arg);
      case 'RETR':
        return this.retrieve(view, arg);
      case 'STOR':
      case 'APPE':
        return this.store(view, arg, cmd === 'APPE');
      case 'ABOR':
        return [226, 'Aborted'];
      default:
        return this.pathCommand(view, cmd, arg);
    }
  }

  /** The commands on one or two paths: attributes, removal, folders, renames. */
  private async pathCommand(view: View, cmd: string, arg: string): Promise<[number, string]> {
    switch (cmd) {
      case 'MLST': {
        const p = this.resolve(view, arg);
        const obj = await this.core.uploads.partials.stat(view, p);
        return [250, ['Listing', ` ${mlsFacts({ ...obj, name: view.client(p) })}`, 'End'].join('\n')];
      }
      case 'SIZE': {
        const obj = await this.core.uploads.partials.stat(view, this.resolve(view, arg));
        if (obj.isDir) return [550, 'Not a file'];
        return [213, String(obj.size)];
      }
      case 'MDTM':
        return [213, ftpTime((await view.stat(this.resolve(view, arg))).modified)];
      case 'MFMT': {
        const space = arg.indexOf(' ');
        const when = parseFtpTime(arg.slice(0, space));
        if (space < 0 || !when) return [501, 'MFMT needs a time (YYYYMMDDHHMMSS) and a path'];
        await view.setModified(this.resolve(view, arg.slice(space + 1)), when);
        return [213, `Modify=${ftpTime(when)}; ${arg.slice(space + 1)}`];
      }
      case 'DELE':
        await view.removePath(this.resolve(view, arg), 'file');
        return [250, 'Deleted'];
      case 'RMD':
      case 'XRMD':
        await view.removePath(this.resolve(view, arg), 'empty-folder');
        return [250, 'Folder removed'];
      case 'MKD':
      case 'XMKD': {
        const p = this.resolve(view, arg);
        await view.makeFolder(p);
        return [257, `"${view.client(p).replace(/"/g, '""')}" created`];
      }
      case 'RNFR':
        this.renameFrom = undefined;
        await view.stat(this.resolve(view, arg));
        this.renameFrom = this.clientPath(arg);
        return [350, 'Ready for RNTO'];
      case 'RNTO': {
        const from = this.renameFrom;
        this.renameFrom = undefined;
        if (!from) return [503, 'RNFR first'];
        await view.renamePath(view.virtual(from), this.resolve(view, arg), false);
        return [250, 'Renamed'];
      }
      default:
        return [502, `${cmd} is not implemented`];
    }
  }

  private async login(password: string): Promise<[number, string]> {
    if (!this.username) return [503, 'USER first'];
    const anonymous = this.username === 'anonymous' || this.username === 'guest';
    let user;
    if (anonymous) {
      user = await this.core.repos.users.byRole(ROLE_GUEST);
    } else {
      try {
        user = await this.core.accounts.checkPassword(this.username, password, this.socket.remoteAddress ?? '', { front: 'ftp', ip: this.socket.remoteAddress });
      } catch (err) {
        if (err instanceof AppError && err.kind === 'TooManyRequests') return [421, err.message];
        return [530, 'Login incorrect'];
      }
    }
    if (!mayConnect(user)) return [530, 'Login incorrect'];
    // One of the account's sessions until the connection closes; refused beyond max_sessions (421, the connection closes).
    try {
      this.registered?.close();
      this.registered = await this.core.sessions.connect(user, 'ftp', { ip: this.socket.remoteAddress ?? '' }, () => {
        this.socket.end();
        this.cleanup();
      });
    } catch (err) {
      if (err instanceof AppError && err.kind === 'TooManyRequests') {
        setImmediate(() => this.socket.end());
        return [421, err.message];
      }
      throw err;
    }
    if (this.closed) this.registered.close();
    const credential = anonymous ? undefined : await appPasswordCredential(this.core, user, password);
    this.principal = new SessionPrincipal(this.core, user, { front: 'ftp', password: anonymous ? password : '', origin: { front: 'ftp', ip: this.socket.remoteAddress } }, credential);
    this.cwd = '/';
    return [230, 'Logged in'];
  }

  private async cwdTo(view: View, arg: string): Promise<[number, string]> {
    const p = this.resolve(view, arg);
    await view.folder(p);
    this.cwd = view.client(p);
    return [250, `Folder changed to ${this.cwd}`];
  }

  private async openPassive(extended: boolean): Promise<[number, string]> {
    this.passive?.close();
    const local = this.socket.localAddress ?? '127.0.0.1';
    const listener = new PassiveListener(this.socket.remoteAddress ?? '', this.config.enable_pasv_conn_ip_check);
    await listener.listen(local, parsePortMap(this.core.settings.get('ftp_pasv_port_map')), this.config.find_pasv_port_attempts);
    this.passive = listener;
    const port = listener.exposedPort;
    if (extended) return [229, `Entering Extended Passive Mode (|||${port}|)`];
    const publicHost = this.core.settings.get('ftp_public_host').trim();
    const host = /^\d+\.\d+\.\d+\.\d+$/.test(publicHost) ? publicHost : local.replace(/^::ffff:/, '');
    if (!/^\d+\.\d+\.\d+\.\d+$/.test(host)) return [425, 'PASV needs an IPv4 address, use EPSV'];
    return [227, `Entering Passive Mode (${host.replace(/\./g, ',')},${port >> 8},${port & 255})`];
  }

  /**
   * Runs `work` on the data connection of the last PASV/EPSV, with the 150 / 226 replies; once
   * the client has opened it (maybe long after the command), the transfer is decided again on
   * the view as it is then (`decide`).
   */
  private async withData(decide: (view: View) => void, work: (data: net.Socket) => Promise<void>): Promise<[number, string]> {
    const listener = this.passive;
    this.passive = undefined;
    if (!listener) throw new Reply(425, 'Use PASV or EPSV first');
    let data: net.Socket;
    try {
      data = await listener.accept(this.config.connection_timeout * 1000 || 30_000);
    } catch (err) {
      listener.close();
      throw new Reply(425, (err as Error).message);
    }
    try {
      decide(await this.view());
    } catch (err) {
      data.destroy();
      listener.close();
      throw err;
    }
    const context = this.protectData ? this.tls.context() : undefined;
    const timeoutMs = this.config.connection_timeout * 1000 || 30_000;
    this.send(150, 'Opening data connection');
    try {
      if (context) data = await secureDataSocket(data, context, timeoutMs);
    } catch (err) {
      listener.close();
      throw new Reply(425, (err as Error).message);
    }
    this.transfer = data;
    try {
      await work(data);
      await endDataSocket(data, timeoutMs);
    } catch (err) {
      data.destroy();
      if (err instanceof Reply || err instanceof AppError) throw err;
      // A dropped data connection or a failed stream: its text (paths, peers) stays in the log.
      this.log.warn({ err, user: this.username, remote: this.socket.remoteAddress }, 'ftp transfer aborted');
      throw new Reply(426, 'Transfer aborted');
    } finally {
      this.transfer = undefined;
      listener.close();
    }
    return [226, 'Transfer complete'];
  }

  private async listing(view: View, cmd: string, arg: string): Promise<[number, string]> {
    const target = arg.split(' ').filter((a) => a !== '' && !a.startsWith('-')).join(' ');
    const p = this.resolve(view, target);
    const partials = this.core.uploads.partials;
    const obj = await partials.stat(view, p);
    // The user's interrupted uploads are listed with their size so far (only to that user).
    const entries = obj.isDir ? await partials.entries(view, p, await view.entries(p)) : [obj];
    const owner = view.user.username.replace(/\s/g, '_') || 'ftp';
    const writable = can(view.user, PERM.FTP_WRITE);
    const mode = (o: Obj) => (o.isDir ? (writable ? 0o755 : 0o555) : writable ? 0o644 : 0o444);
    const line = (o: Obj) => (cmd === 'NLST' ? o.name : cmd === 'MLSD' ? mlsFacts(o) : lsLine(o, mode(o), owner));
    return this.withData((now) => requireHeld(now, p), async (data) => {
      const body = entries.map((o) => `${line(o)}\r\n`).join('');
      await new Promise<void>((resolve, reject) => {
        data.once('error', reject);
        data.end(body, () => resolve());
      });
    });
  }

  /** A download, decided at its start and again while it runs (decidedStream). */
  private async retrieve(view: View, arg: string): Promise<[number, string]> {
    const offset = this.restOffset;
    this.restOffset = 0;
    const p = this.resolve(view, arg);
    const { stream } = await view.openRead(p, offset);
    const decided = decidedStream(async () => requireHeld(await this.view(), p));
    try {
      return await this.withData((now) => requireHeld(now, p), async (data) => {
        await pipeline(stream, decided, data);
      });
    } finally {
      stream.destroy();
    }
  }

  /**
   * An upload (STOR, `REST n` + STOR, APPE), decided at its start, while it runs, and once more
   * before it is committed: the bytes go into the user's partial of the name (uploads/partials.ts),
   * from 0, from the REST offset, or (APPE) from the partial's end or the file's; a transfer that
   * ends normally is committed atomically, an interrupted one stays a partial for a resume.
   */
  private async store(view: View, arg: string, append: boolean): Promise<[number, string]> {
    const p = this.resolve(view, arg);
    const rest = this.restOffset;
    this.restOffset = 0;
    const existing = await view.checkUpload(p, true);
    const partials = this.core.uploads.partials;
    const partial = await partials.find(view, p);
    const offset = append ? (partial?.received ?? existing?.size ?? 0) : rest;
    // Resuming the stored file itself (no partial): it seeds the partial.
    const seed = !partial && existing && offset > 0 && offset <= existing.size ? async () => (await view.openRead(p, 0, { recorded: false })).stream : undefined;
    const decide = (now: View) => {
      requireHeld(now, p);
      now.checkPut(p);
    };
    let refused: unknown;
    const decided = decidedStream(async () => {
      try {
        decide(await this.view());
      } catch (err) {
        refused = err;
        throw err;
      }
    });
    const release = view.holdTransfer();
    const write = await partials.begin(view, p, offset, { fresh: offset === 0, seed }).catch((err: unknown) => {
      release();
      throw err;
    });
    try {
      return await this.withData(decide, async (data) => {
        data.on('error', (err) => decided.destroy(err));
        data.pipe(decided);
        // The account's upload rate paces the bytes on their way to the partial (view/meters.ts).
        const written = await write.stream(offset, view.pacedUpload(decided));
        if (refused) throw refused;
        if (written.interrupted || !(await this.controlStillOpen())) throw new Reply(426, `Transfer interrupted: ${write.size} bytes kept, resume with REST ${write.size} and STOR, or APPE`);
        const now = await this.view();
        decide(now);
        await write.commit(now, p);
      });
    } catch (err) {
      if (refused || this.principal?.endedBy(err)) await write.drop();
      else await write.keep();
      throw err;
    } finally {
      release();
    }
  }

  /**
   * Whether the control connection is still open a moment after a data connection ended: a
   * client killed mid-upload closes both at once (its data connection's end is no end of file),
   * while one that finished waits for the 226.
   */
  private async controlStillOpen(): Promise<boolean> {
    await new Promise((resolve) => setTimeout(resolve, CONTROL_GRACE_MS));
    return !this.closed && !this.socket.destroyed;
  }
}

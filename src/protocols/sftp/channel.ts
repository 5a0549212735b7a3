import type { Attributes, SFTPWrapper } from 'ssh2';
import { can, PERM } from '../../auth/permissions.js';
import type { Obj } from '../../drivers/types.js';
import type { Logger } from '../../logger.js';
import type { View } from '../../view/view.js';
import { requireHeld, type SessionPrincipal } from '../live-session.js';
import { DataSender } from './data-sender.js';
import type { Partials } from '../../uploads/partials.js';
import { DirHandle, DownloadHandle, FileReadHandle, type ReadHold, UploadHandle } from './handles.js';
import { SftpStatus, STATUS, statusOf } from './status.js';
import { PartialUploadHandle } from './partial-handle.js';
import type { VfsStats } from './openssh-ext.js';

export { SftpStatus, STATUS } from './status.js';
/** Entries per READDIR answer: a big folder is sent in pages. */
export const READDIR_PAGE = 200;

export type Handle = FileReadHandle | DownloadHandle | UploadHandle | PartialUploadHandle | DirHandle;


export interface SessionOptions {
  /** temp_dir: spools of uploads written out of order go into a folder of it. */
  tempDir: string;
  /** Uploads write into their user's partial (kept when the connection drops, for a resume). */
  partials: Partials;
  /** File system figures of the storage holding a virtual path the view may read; undefined when it reports none. */
  spaceOf(view: View, virtualPath: string): Promise<VfsStats | undefined>;
  /** Stops reading the connection while an upload's storage is behind (the SSH socket). */
  readHold?: ReadHold;
  /** Ends the SSH connection (the session's principal was refused). */
  endConnection(): void;
}

/**
 * One SFTP channel: its open handles and the decision of every request. Each request takes the
 * principal's view as it is at that moment (SessionPrincipal); one on a handle also checks that
 * the handle's path is still the principal's (requireHeld). Every request is answered once,
 * errors as SFTP status codes; when the principal is refused (deleted, disabled, re-passworded,
 * its FTP/SFTP read bit or its credential gone), the request is answered with that refusal and
 * the connection ends, dropping the open uploads (nothing of them is stored).
 */
export class SftpChannel {
  private readonly handles = new Map<number, Handle>();
  private nextHandle = 1;
  /** Set once the channel is gone: a handle opened after that is dropped at once (its descriptor closed, its upload aborted). */
  private gone = false;
  readonly sender: DataSender;

  constructor(
    readonly sftp: SFTPWrapper,
    readonly principal: SessionPrincipal,
    readonly log: Logger,
    readonly opts: SessionOptions,
  ) {
    this.sender = new DataSender(sftp, log);
  }

  /** The principal's view now; throws what refuses it. */
  view(): Promise<View> {
    return this.principal.view();
  }

  /** The view now and an open handle (of `kind`, when given) whose path it still holds. */
  async held<T extends Handle>(buf: Buffer, kind?: new (...a: never[]) => T): Promise<{ view: View; h: T }> {
    const view = await this.view();
    const h = this.handle(buf);
    if (kind && !(h instanceof kind)) throw new SftpStatus(STATUS.FAILURE, 'the handle is not of the right kind for this request');
    requireHeld(view, h.path);
    return { view, h: h as T };
  }

  handle(buf: Buffer): Handle {
    const h = buf.length === 4 ? this.handles.get(buf.readUInt32BE()) : undefined;
    if (!h) throw new SftpStatus(STATUS.FAILURE, 'invalid handle');
    return h;
  }

  addHandle(h: Handle): Buffer {
    const id = this.nextHandle++;
    if (this.gone) drop(h);
    else this.handles.set(id, h);
    const buf = Buffer.alloc(4);
    buf.writeUInt32BE(id);
    return buf;
  }

  /** Takes a handle out of the table (CLOSE). */
  release(buf: Buffer): void {
    this.handles.delete(buf.readUInt32BE());
  }

  /** Runs a request, answering its failure as a status; a refused principal ends the connection after the answer. */
  run(reqId: number, what: string, work: () => Promise<void>): void {
    work().catch((err: unknown) => {
      const { code, message, expected } = statusOf(err);
      if (!expected) this.log.error({ err, reqId }, `sftp ${what} failed`);
      this.sftp.status(reqId, code, message);
      if (this.principal.endedBy(err)) this.end();
    });
  }

  ok(reqId: number): void {
    this.sftp.status(reqId, STATUS.OK);
  }

  attrsOf(view: View, obj: Obj): Attributes {
    const mtime = Math.floor(obj.modified.getTime() / 1000);
    return { mode: (obj.isDir ? 0o040000 : 0o100000) | this.modeOf(view, obj), uid: 0, gid: 0, size: obj.size, atime: mtime, mtime };
  }

  modeOf(view: View, obj: Obj): number {
    const writable = can(view.user, PERM.FTP_WRITE);
    return obj.isDir ? (writable ? 0o755 : 0o555) : writable ? 0o644 : 0o444;
  }

  /** Drops every handle (uploads store nothing) and stops sending. */
  closeAll(): void {
    this.gone = true;
    for (const h of this.handles.values()) drop(h);
    this.handles.clear();
    this.sender.close();
  }

  /** Ends the channel and the connection. */
  private end(): void {
    if (this.gone) return;
    this.closeAll();
    this.log.info({ reason: this.principal.ended?.message }, 'sftp session ended: the account no longer admits it');
    this.sftp.end();
    this.opts.endConnection();
  }
}

function drop(h: Handle): void {
  if (h instanceof UploadHandle) h.abort(new Error('the connection closed before the file was closed'));
  else if (h instanceof PartialUploadHandle) h.abort();
  else if (h instanceof DownloadHandle || h instanceof FileReadHandle) h.close();
}

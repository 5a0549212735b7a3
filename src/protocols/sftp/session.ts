import { open } from 'node:fs';
import type { Attributes, SFTPWrapper } from 'ssh2';
import { can, PERM } from '../../auth/permissions.js';
import type { Obj } from '../../drivers/types.js';
import { AppError, type ErrorKind } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { lsLine } from '../ls-line.js';
import type { View } from '../../view/view.js';
import { DATA_HEADER, DataSender } from './data-sender.js';
import { DirHandle, DownloadHandle, FileReadHandle, type ReadHold, UnsupportedWrite, UploadHandle } from './handles.js';
import { advertiseExtensions, limitsBody, MAX_DATA, sendExtendedReply, statvfsBody, VFS_FLAG, type VfsStats } from './openssh-ext.js';
import { Spool } from './spool.js';

/** SFTP v3 status codes and open flags (draft-ietf-secsh-filexfer-02). */
export const STATUS = { OK: 0, EOF: 1, NO_SUCH_FILE: 2, PERMISSION_DENIED: 3, FAILURE: 4, BAD_MESSAGE: 5, OP_UNSUPPORTED: 8 } as const;
const FLAG = { READ: 0x01, WRITE: 0x02, APPEND: 0x04, CREAT: 0x08, TRUNC: 0x10, EXCL: 0x20 } as const;
/** Entries per READDIR answer: a big folder is sent in pages. */
export const READDIR_PAGE = 200;

class SftpStatus extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

type Handle = FileReadHandle | DownloadHandle | UploadHandle | DirHandle;

/** The one mapping of error kinds to SFTP statuses; kinds not named here are a failure with their text. */
const STATUS_OF: Partial<Record<ErrorKind, number>> = {
  NotFound: STATUS.NO_SUCH_FILE,
  // A hidden path is answered as if it did not exist.
  Hidden: STATUS.NO_SUCH_FILE,
  Forbidden: STATUS.PERMISSION_DENIED,
  PasswordRequired: STATUS.PERMISSION_DENIED,
  Unauthorized: STATUS.PERMISSION_DENIED,
  Unsupported: STATUS.OP_UNSUPPORTED,
};

function statusOf(err: unknown): { code: number; message: string } {
  if (err instanceof SftpStatus) return { code: err.code, message: err.message };
  if (err instanceof UnsupportedWrite) return { code: STATUS.OP_UNSUPPORTED, message: err.message };
  const code = err instanceof AppError ? (STATUS_OF[err.kind] ?? STATUS.FAILURE) : STATUS.FAILURE;
  if (code === STATUS.NO_SUCH_FILE) return { code, message: 'No such file' };
  return { code, message: (err as Error)?.message ?? 'failure' };
}

export interface SessionOptions {
  /** temp_dir: spools of uploads written out of order go into a folder of it. */
  tempDir: string;
  /** File system figures of the storage holding a virtual path; undefined when it reports none. */
  spaceOf(virtualPath: string): Promise<VfsStats | undefined>;
  /** Stops reading the connection while an upload's storage is behind (the SSH socket). */
  readHold?: ReadHold;
}

/**
 * Serves one SFTP channel for one user over the user's view (view/): every request is answered once, errors as
 * SFTP status codes; uploads still open when the channel goes away are dropped, storing nothing.
 */
export function serveSftp(sftp: SFTPWrapper, ufs: View, log: Logger, opts: SessionOptions): void {
  const handles = new Map<number, Handle>();
  let nextHandle = 1;
  const owner = ufs.user.username.replace(/\s/g, '_') || 'atrium';
  const writable = can(ufs.user, PERM.FTP_WRITE);
  const sender = new DataSender(sftp, log);

  const attrsOf = (obj: Obj): Attributes => {
    const mtime = Math.floor(obj.modified.getTime() / 1000);
    return { mode: (obj.isDir ? 0o040000 : 0o100000) | modeOf(obj), uid: 0, gid: 0, size: obj.size, atime: mtime, mtime };
  };
  const modeOf = (obj: Obj) => (obj.isDir ? (writable ? 0o755 : 0o555) : writable ? 0o644 : 0o444);

  /** Set once the channel is gone: a handle opened after that is dropped at once (its descriptor closed, its upload aborted). */
  let gone = false;
  const drop = (h: Handle) => {
    if (h instanceof UploadHandle) h.abort(new Error('the connection closed before the file was closed'));
    else if (h instanceof DownloadHandle || h instanceof FileReadHandle) h.close();
  };
  const addHandle = (h: Handle): Buffer => {
    const id = nextHandle++;
    if (gone) drop(h);
    else handles.set(id, h);
    const buf = Buffer.alloc(4);
    buf.writeUInt32BE(id);
    return buf;
  };
  const handleOf = <T extends Handle>(buf: Buffer, kind: new (...a: never[]) => T): T => {
    const h = buf.length === 4 ? handles.get(buf.readUInt32BE()) : undefined;
    if (!h) throw new SftpStatus(STATUS.FAILURE, 'invalid handle');
    if (!(h instanceof kind)) throw new SftpStatus(STATUS.FAILURE, 'the handle is not of the right kind for this request');
    return h;
  };
  const anyHandle = (buf: Buffer): Handle => {
    const h = buf.length === 4 ? handles.get(buf.readUInt32BE()) : undefined;
    if (!h) throw new SftpStatus(STATUS.FAILURE, 'invalid handle');
    return h;
  };

  /** Runs a request, answering its failure as a status. */
  const run = (reqId: number, what: string, work: () => Promise<void>) => {
    work().catch((err: unknown) => {
      const { code, message } = statusOf(err);
      if (code === STATUS.FAILURE && !(err instanceof AppError)) log.warn({ err, user: ufs.user.username }, `sftp ${what} failed`);
      sftp.status(reqId, code, message);
    });
  };
  const ok = (reqId: number) => sftp.status(reqId, STATUS.OK);

  sftp.on('REALPATH', (reqId, p) =>
    run(reqId, 'realpath', async () => {
      const clean = ufs.client(ufs.virtual(p));
      sftp.name(reqId, [{ filename: clean, longname: clean, attrs: {} as Attributes }]);
    }),
  );

  const stat = (reqId: number, p: string) =>
    run(reqId, 'stat', async () => {
      sftp.attrs(reqId, attrsOf(await ufs.stat(ufs.virtual(p))));
    });
  sftp.on('STAT', stat);
  sftp.on('LSTAT', stat);

  sftp.on('FSTAT', (reqId, buf) =>
    run(reqId, 'fstat', async () => {
      const h = anyHandle(buf);
      if (h instanceof UploadHandle) {
        const now = Math.floor(Date.now() / 1000);
        sftp.attrs(reqId, { mode: 0o100000 | (writable ? 0o644 : 0o444), uid: 0, gid: 0, size: await h.size(), atime: now, mtime: now });
      } else if (h instanceof DownloadHandle || h instanceof FileReadHandle) sftp.attrs(reqId, attrsOf(h.obj));
      else sftp.attrs(reqId, attrsOf(await ufs.stat(h.path)));
    }),
  );

  sftp.on('OPEN', (reqId, filename, flags) =>
    run(reqId, 'open', async () => {
      const p = ufs.virtual(filename);
      if (!(flags & FLAG.WRITE)) {
        const { obj, localPath } = await ufs.readable(p);
        if (localPath) {
          const fd = await new Promise<number>((resolve, reject) => open(localPath, 'r', (err, n) => (err ? reject(err) : resolve(n))));
          sftp.handle(reqId, addHandle(new FileReadHandle(p, obj, fd)));
          return;
        }
        sftp.handle(reqId, addHandle(new DownloadHandle(p, obj, obj.size, async (start) => (await ufs.openRead(p, start)).stream)));
        return;
      }
      const existing = await ufs.checkUpload(p, !(flags & FLAG.EXCL));
      if (!existing && !(flags & FLAG.CREAT)) throw new SftpStatus(STATUS.NO_SUCH_FILE, 'No such file');
      // Without TRUNC an existing file is updated in place: its content seeds the spool.
      const update = existing !== undefined && existing.size > 0 && !(flags & FLAG.TRUNC);
      const upload = new UploadHandle(p, {
        start: (stream) => ufs.upload(p, stream, true),
        spool: () => Spool.create(opts.tempDir),
        seed: update ? async () => (await ufs.openRead(p)).stream : undefined,
        append: (flags & FLAG.APPEND) !== 0,
        readHold: opts.readHold,
      });
      sftp.handle(reqId, addHandle(upload));
    }),
  );

  sftp.on('READ', (reqId, buf, offset, len) =>
    run(reqId, 'read', async () => {
      // A longer read is answered with at most MAX_DATA bytes, as the limits extension tells.
      const n = Math.min(len, MAX_DATA);
      const h = anyHandle(buf);
      if (h instanceof FileReadHandle) {
        const out = sender.take(n);
        let got: number;
        try {
          got = await h.read(out, DATA_HEADER, n, offset);
        } catch (err) {
          sender.give(out);
          throw err;
        }
        if (got > 0) sender.send(reqId, out, got);
        else {
          sender.give(out);
          sftp.status(reqId, STATUS.EOF);
        }
        return;
      }
      const data = await handleOf(buf, DownloadHandle).read(offset, n);
      if (data) sftp.data(reqId, data);
      else sftp.status(reqId, STATUS.EOF);
    }),
  );

  sftp.on('WRITE', (reqId, buf, offset, data) =>
    run(reqId, 'write', async () => {
      await handleOf(buf, UploadHandle).write(offset, data);
      ok(reqId);
    }),
  );

  sftp.on('CLOSE', (reqId, buf) =>
    run(reqId, 'close', async () => {
      const h = anyHandle(buf);
      handles.delete(buf.readUInt32BE());
      if (h instanceof UploadHandle) {
        await h.close();
        if (h.modified) await ufs.setModified(h.path, h.modified);
      } else if (h instanceof DownloadHandle || h instanceof FileReadHandle) h.close();
      ok(reqId);
    }),
  );

  sftp.on('OPENDIR', (reqId, p) =>
    run(reqId, 'opendir', async () => {
      const dir = ufs.virtual(p);
      sftp.handle(reqId, addHandle(new DirHandle(dir, await ufs.entries(dir))));
    }),
  );

  sftp.on('READDIR', (reqId, buf) =>
    run(reqId, 'readdir', async () => {
      const page = handleOf(buf, DirHandle).next(READDIR_PAGE);
      if (page.length === 0) {
        sftp.status(reqId, STATUS.EOF);
        return;
      }
      sftp.name(
        reqId,
        page.map((o) => ({ filename: o.name, longname: lsLine(o, modeOf(o), owner), attrs: attrsOf(o) })),
      );
    }),
  );

  sftp.on('MKDIR', (reqId, p) =>
    run(reqId, 'mkdir', async () => {
      await ufs.makeFolder(ufs.virtual(p));
      ok(reqId);
    }),
  );
  sftp.on('RMDIR', (reqId, p) =>
    run(reqId, 'rmdir', async () => {
      await ufs.removePath(ufs.virtual(p), 'empty-folder');
      ok(reqId);
    }),
  );
  sftp.on('REMOVE', (reqId, p) =>
    run(reqId, 'remove', async () => {
      await ufs.removePath(ufs.virtual(p), 'file');
      ok(reqId);
    }),
  );
  sftp.on('RENAME', (reqId, from, to) =>
    run(reqId, 'rename', async () => {
      await ufs.renamePath(ufs.virtual(from), ufs.virtual(to), false);
      ok(reqId);
    }),
  );

  /** Applies the parts of a setstat Atrium can keep: times; sizes of files being written; modes are not kept. */
  const setstat = async (p: string, attrs: Attributes, upload?: UploadHandle) => {
    if (attrs.size !== undefined) {
      if (upload) await upload.truncate(attrs.size);
      else if (attrs.size !== (await ufs.stat(p)).size) throw new SftpStatus(STATUS.OP_UNSUPPORTED, 'changing the size of a closed file is not supported');
    }
    if (attrs.mtime === undefined) return;
    const modified = new Date(attrs.mtime * 1000);
    if (upload) {
      await ufs.checkUpload(p, true);
      upload.modified = modified;
    } else await ufs.setModified(p, modified);
  };
  sftp.on('SETSTAT', (reqId, p, attrs) =>
    run(reqId, 'setstat', async () => {
      await setstat(ufs.virtual(p), attrs);
      ok(reqId);
    }),
  );
  sftp.on('FSETSTAT', (reqId, buf, attrs) =>
    run(reqId, 'fsetstat', async () => {
      const h = anyHandle(buf);
      if (h instanceof DirHandle) throw new SftpStatus(STATUS.OP_UNSUPPORTED, 'setting attributes of an open folder is not supported');
      await setstat(h.path, attrs, h instanceof UploadHandle ? h : undefined);
      ok(reqId);
    }),
  );

  sftp.on('READLINK', (reqId) => sftp.status(reqId, STATUS.OP_UNSUPPORTED, 'symbolic links are not supported'));
  sftp.on('SYMLINK', (reqId) => sftp.status(reqId, STATUS.OP_UNSUPPORTED, 'symbolic links are not supported'));

  const extended = advertiseExtensions(sftp, log);
  /** Answers statvfs for a path: its storage's figures, or unsupported when it reports none. */
  const statvfs = async (reqId: number, p: string) => {
    const space = await opts.spaceOf(p);
    if (!space) throw new SftpStatus(STATUS.OP_UNSUPPORTED, 'this storage reports no space figures');
    if (!writable) space.flag |= VFS_FLAG.RDONLY;
    if (!sendExtendedReply(sftp, reqId, statvfsBody(space), log)) throw new SftpStatus(STATUS.OP_UNSUPPORTED, 'statvfs is not supported');
  };
  sftp.on('EXTENDED', (reqId, name, data) => {
    if (name === 'posix-rename@openssh.com') {
      run(reqId, 'posix-rename', async () => {
        const [from, to] = readStrings(data, 2);
        if (from === undefined || to === undefined) throw new SftpStatus(STATUS.BAD_MESSAGE, 'malformed posix-rename request');
        await ufs.renamePath(ufs.virtual(from), ufs.virtual(to), true);
        ok(reqId);
      });
    } else if (name === 'statvfs@openssh.com' && extended) {
      run(reqId, 'statvfs', async () => {
        const [p] = readStrings(data, 1);
        if (p === undefined) throw new SftpStatus(STATUS.BAD_MESSAGE, 'malformed statvfs request');
        await ufs.stat(ufs.virtual(p));
        await statvfs(reqId, ufs.virtual(p));
      });
    } else if (name === 'fstatvfs@openssh.com' && extended) {
      run(reqId, 'fstatvfs', async () => {
        const buf = readBytes(data);
        if (!buf) throw new SftpStatus(STATUS.BAD_MESSAGE, 'malformed fstatvfs request');
        await statvfs(reqId, anyHandle(buf).path);
      });
    } else if (name === 'limits@openssh.com' && extended) {
      run(reqId, 'limits', async () => {
        if (!sendExtendedReply(sftp, reqId, limitsBody(), log)) throw new SftpStatus(STATUS.OP_UNSUPPORTED, 'limits is not supported');
      });
    } else sftp.status(reqId, STATUS.OP_UNSUPPORTED, `${name} is not supported`);
  });

  const closeAll = () => {
    gone = true;
    for (const h of handles.values()) drop(h);
    handles.clear();
    sender.close();
  };
  sftp.on('close', closeAll);
  sftp.on('error', closeAll);
  // The client's EOF: close our side too, or OpenSSH waits for the channel to close.
  sftp.on('end', () => {
    closeAll();
    sftp.end();
  });
}

/** The first SSH string of a request's data, as bytes. */
function readBytes(data: Buffer | undefined): Buffer | undefined {
  if (!data || data.length < 4) return undefined;
  const len = data.readUInt32BE(0);
  return 4 + len <= data.length ? data.subarray(4, 4 + len) : undefined;
}

/** `count` SSH strings from a request's data. */
function readStrings(data: Buffer | undefined, count: number): Array<string | undefined> {
  const out: Array<string | undefined> = [];
  let p = 0;
  for (let i = 0; i < count; i++) {
    if (!data || p + 4 > data.length) {
      out.push(undefined);
      continue;
    }
    const len = data.readUInt32BE(p);
    p += 4;
    if (p + len > data.length) {
      out.push(undefined);
      continue;
    }
    out.push(data.toString('utf8', p, p + len));
    p += len;
  }
  return out;
}

import { open } from 'node:fs';
import type { Attributes } from 'ssh2';
import type { Obj } from '../../drivers/types.js';
import { can, PERM } from '../../auth/permissions.js';
import type { View } from '../../view/view.js';
import { requireHeld } from '../live-session.js';
import { DATA_HEADER } from './data-sender.js';
import { DirHandle, DownloadHandle, FileReadHandle, UploadHandle } from './handles.js';
import { PartialUploadHandle } from './partial-handle.js';
import { MAX_DATA } from './openssh-ext.js';
import { type SftpChannel, SftpStatus, STATUS } from './channel.js';
import { Spool } from './spool.js';

/** SFTP v3 open flags (draft-ietf-secsh-filexfer-02). */
const FLAG = { READ: 0x01, WRITE: 0x02, APPEND: 0x04, CREAT: 0x08, TRUNC: 0x10, EXCL: 0x20 } as const;

/** The requests on files: open, read, write, close, and their attributes. */
export function serveFiles(ch: SftpChannel): void {
  const { sftp } = ch;

  sftp.on('OPEN', (reqId, filename, flags) =>
    ch.run(reqId, 'open', async () => {
      const view = await ch.view();
      const p = view.virtual(filename);
      sftp.handle(reqId, ch.addHandle(flags & FLAG.WRITE ? await openUpload(ch, view, p, flags) : await openRead(view, p)));
    }),
  );

  sftp.on('READ', (reqId, buf, offset, len) =>
    ch.run(reqId, 'read', async () => {
      const { h } = await ch.held(buf);
      // A longer read is answered with at most MAX_DATA bytes, as the limits extension tells.
      const n = Math.min(len, MAX_DATA);
      if (h instanceof FileReadHandle) return readLocal(ch, reqId, h, offset, n);
      if (!(h instanceof DownloadHandle)) throw new SftpStatus(STATUS.FAILURE, 'the handle is not of the right kind for this request');
      const data = await h.read(offset, n);
      if (data) sftp.data(reqId, data);
      else sftp.status(reqId, STATUS.EOF);
    }),
  );

  sftp.on('WRITE', (reqId, buf, offset, data) =>
    ch.run(reqId, 'write', async () => {
      const { view, h } = await ch.held(buf);
      if (!(h instanceof UploadHandle || h instanceof PartialUploadHandle)) throw new SftpStatus(STATUS.FAILURE, 'the handle is not of the right kind for this request');
      view.checkPut(h.path);
      await h.write(offset, data);
      ch.ok(reqId);
    }),
  );

  sftp.on('CLOSE', (reqId, buf) =>
    ch.run(reqId, 'close', async () => {
      const h = ch.handle(buf);
      ch.release(buf);
      if (h instanceof UploadHandle || h instanceof PartialUploadHandle) {
        // The upload is decided again before it is stored (UploadOptions.beforeEnd).
        // A partial's time is applied as it is committed; a streamed upload's after.
        await h.close();
        if (h.modified && h instanceof UploadHandle) await (await ch.view()).setModified(h.path, h.modified);
      } else {
        if (h instanceof DownloadHandle || h instanceof FileReadHandle) h.close();
        await ch.view();
      }
      ch.ok(reqId);
    }),
  );

  sftp.on('FSTAT', (reqId, buf) =>
    ch.run(reqId, 'fstat', async () => {
      const { view, h } = await ch.held(buf);
      if (h instanceof UploadHandle || h instanceof PartialUploadHandle) {
        const now = Math.floor(Date.now() / 1000);
        const mode = 0o100000 | (can(view.user, PERM.FTP_WRITE) ? 0o644 : 0o444);
        sftp.attrs(reqId, { mode, uid: 0, gid: 0, size: await h.size(), atime: now, mtime: now });
      } else if (h instanceof DownloadHandle || h instanceof FileReadHandle) sftp.attrs(reqId, ch.attrsOf(view, h.obj));
      else sftp.attrs(reqId, ch.attrsOf(view, await view.stat(h.path)));
    }),
  );

  sftp.on('SETSTAT', (reqId, p, attrs) =>
    ch.run(reqId, 'setstat', async () => {
      const view = await ch.view();
      await setstat(view, view.virtual(p), attrs);
      ch.ok(reqId);
    }),
  );
  sftp.on('FSETSTAT', (reqId, buf, attrs) =>
    ch.run(reqId, 'fsetstat', async () => {
      const { view, h } = await ch.held(buf);
      if (h instanceof DirHandle) throw new SftpStatus(STATUS.OP_UNSUPPORTED, 'setting attributes of an open folder is not supported');
      await setstat(view, h.path, attrs, h instanceof UploadHandle || h instanceof PartialUploadHandle ? h : undefined);
      ch.ok(reqId);
    }),
  );
}

/** A file opened for reading: positional reads of a local file, or one stream of the storage's link. */
async function openRead(view: View, p: string): Promise<FileReadHandle | DownloadHandle> {
  const { obj, localPath, open: openAt, sent } = await view.readable(p);
  if (localPath) {
    const fd = await new Promise<number>((resolve, reject) => open(localPath, 'r', (err, n) => (err ? reject(err) : resolve(n)))).catch((err: unknown) => {
      sent(0, err);
      throw err;
    });
    return new FileReadHandle(p, obj, fd, sent);
  }
  return new DownloadHandle(p, obj, obj.size, openAt, sent);
}

/**
 * A file opened for writing, decided once more right before it is stored: on a storage that takes
 * a finished file by a rename (Local), into the user's partial of the name, resumable after a
 * dropped connection (an open without TRUNC continues it); elsewhere streamed into one put.
 */
async function openUpload(ch: SftpChannel, view: View, p: string, flags: number): Promise<UploadHandle | PartialUploadHandle> {
  const existing = await view.checkUpload(p, !(flags & FLAG.EXCL));
  if (view.storageOf(p).driver?.putFile) return openPartial(ch, view, p, flags, existing);
  if (!existing && !(flags & FLAG.CREAT)) throw new SftpStatus(STATUS.NO_SUCH_FILE, 'No such file');
  // Without TRUNC an existing file is updated in place: its content seeds the spool.
  const update = existing !== undefined && existing.size > 0 && !(flags & FLAG.TRUNC);
  return new UploadHandle(p, {
    start: (stream) => view.upload(p, stream, true),
    spool: () => Spool.create(ch.opts.tempDir),
    seed: update ? async () => (await view.openRead(p, 0, { recorded: false })).stream : undefined,
    append: (flags & FLAG.APPEND) !== 0,
    readHold: ch.opts.readHold,
    beforeEnd: async () => {
      const now = await ch.view();
      requireHeld(now, p);
      now.checkPut(p);
    },
  });
}

/** An upload into the user's partial of `p`: continued without TRUNC, begun afresh with it. */
async function openPartial(ch: SftpChannel, view: View, p: string, flags: number, existing: Obj | undefined): Promise<PartialUploadHandle> {
  const partial = await ch.opts.partials.find(view, p);
  if (!existing && !partial && !(flags & FLAG.CREAT)) throw new SftpStatus(STATUS.NO_SUCH_FILE, 'No such file');
  // Without TRUNC the partial (or else the stored file, which seeds it) is continued.
  const resume = !(flags & FLAG.TRUNC) && (partial !== undefined || (existing?.size ?? 0) > 0);
  const offset = resume ? (partial?.received ?? existing!.size) : 0;
  const seed = resume && !partial ? async () => (await view.openRead(p, 0, { recorded: false })).stream : undefined;
  // The handle holds one of the account's transfers until it is closed (view/meters.ts).
  const done = view.holdTransfer();
  const write = await ch.opts.partials.begin(view, p, offset, { fresh: !resume, seed }).catch((err: unknown) => {
    done();
    throw err;
  });
  return new PartialUploadHandle(p, write, {
    append: (flags & FLAG.APPEND) !== 0,
    pace: (n) => view.uploadDelay(n),
    done,
    beforeEnd: async () => {
      const now = await ch.view();
      requireHeld(now, p);
      now.checkPut(p);
      return now;
    },
  });
}

/** One positional read of a local file into a DATA answer's own buffer. */
async function readLocal(ch: SftpChannel, reqId: number, h: FileReadHandle, offset: number, n: number): Promise<void> {
  const out = ch.sender.take(n);
  let got: number;
  try {
    got = await h.read(out, DATA_HEADER, n, offset);
  } catch (err) {
    ch.sender.give(out);
    throw err;
  }
  if (got > 0) ch.sender.send(reqId, out, got);
  else {
    ch.sender.give(out);
    ch.sftp.status(reqId, STATUS.EOF);
  }
}

/** Applies the parts of a setstat Atrium can keep: times; sizes of files being written; modes are not kept. */
async function setstat(view: View, p: string, attrs: Attributes, upload?: UploadHandle | PartialUploadHandle): Promise<void> {
  if (attrs.size !== undefined) {
    if (upload) {
      view.checkPut(p);
      await upload.truncate(attrs.size);
    } else if (attrs.size !== (await view.stat(p)).size) throw new SftpStatus(STATUS.OP_UNSUPPORTED, 'changing the size of a closed file is not supported');
  }
  if (attrs.mtime === undefined) return;
  const modified = new Date(attrs.mtime * 1000);
  if (upload) {
    await view.checkUpload(p, true);
    upload.modified = modified;
  } else await view.setModified(p, modified);
}

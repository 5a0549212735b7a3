import type { Attributes } from 'ssh2';
import { can, PERM } from '../../auth/permissions.js';
import { lsLine } from '../ls-line.js';
import type { View } from '../../view/view.js';
import { DirHandle } from './handles.js';
import { advertiseExtensions, limitsBody, sendExtendedReply, statvfsBody, VFS_FLAG } from './openssh-ext.js';
import { READDIR_PAGE, type SftpChannel, SftpStatus, STATUS } from './channel.js';

/** The requests on paths: names, attributes, folders, removal, renames and the OpenSSH extensions. */
export function servePaths(ch: SftpChannel): void {
  const { sftp } = ch;
  /** A request on one client path, through the view as it is now. */
  const onPath = (what: string, work: (reqId: number, view: View, p: string) => Promise<void>) => (reqId: number, clientPath: string) =>
    ch.run(reqId, what, async () => {
      const view = await ch.view();
      await work(reqId, view, view.virtual(clientPath));
    });

  sftp.on(
    'REALPATH',
    onPath('realpath', async (reqId, view, p) => {
      const clean = view.client(p);
      sftp.name(reqId, [{ filename: clean, longname: clean, attrs: {} as Attributes }]);
    }),
  );
  // The user's interrupted upload of the name shows its size so far (OpenSSH reput reads it).
  const stat = onPath('stat', async (reqId, view, p) => sftp.attrs(reqId, ch.attrsOf(view, await ch.opts.partials.stat(view, p))));
  sftp.on('STAT', stat);
  sftp.on('LSTAT', stat);

  sftp.on(
    'OPENDIR',
    onPath('opendir', async (reqId, view, p) => {
      sftp.handle(reqId, ch.addHandle(new DirHandle(p, await ch.opts.partials.entries(view, p, await view.entries(p)))));
    }),
  );
  sftp.on('READDIR', (reqId, buf) =>
    ch.run(reqId, 'readdir', async () => {
      const { view, h } = await ch.held(buf, DirHandle);
      const page = h.next(READDIR_PAGE);
      if (page.length === 0) return sftp.status(reqId, STATUS.EOF);
      // Entries listed at OPENDIR that a rule added since hides are left out.
      const owner = view.user.username.replace(/\s/g, '_') || 'atrium';
      const shown = view.visible(h.path, page).map((o) => ({ filename: o.name, longname: lsLine(o, ch.modeOf(view, o), owner), attrs: ch.attrsOf(view, o) }));
      sftp.name(reqId, shown);
    }),
  );

  /** A change of one path, answered OK once done. */
  const change = (what: string, work: (view: View, p: string) => Promise<void>) =>
    onPath(what, async (reqId, view, p) => {
      await work(view, p);
      ch.ok(reqId);
    });
  sftp.on('MKDIR', change('mkdir', (view, p) => view.makeFolder(p)));
  sftp.on('RMDIR', change('rmdir', (view, p) => view.removePath(p, 'empty-folder')));
  sftp.on('REMOVE', change('remove', (view, p) => view.removePath(p, 'file')));
  sftp.on('RENAME', (reqId, from, to) =>
    ch.run(reqId, 'rename', async () => {
      const view = await ch.view();
      await view.renamePath(view.virtual(from), view.virtual(to), false);
      ch.ok(reqId);
    }),
  );

  sftp.on('READLINK', (reqId) => sftp.status(reqId, STATUS.OP_UNSUPPORTED, 'symbolic links are not supported'));
  sftp.on('SYMLINK', (reqId) => sftp.status(reqId, STATUS.OP_UNSUPPORTED, 'symbolic links are not supported'));
  serveExtended(ch);
}

/** The OpenSSH extensions advertised in the VERSION packet (openssh-ext.ts). */
function serveExtended(ch: SftpChannel): void {
  const { sftp, log } = ch;
  const extended = advertiseExtensions(sftp, log);
  /** Answers statvfs for a path: its storage's figures, or unsupported when it reports none. */
  const statvfs = async (reqId: number, view: View, p: string) => {
    const space = await ch.opts.spaceOf(view, p);
    if (!space) throw new SftpStatus(STATUS.OP_UNSUPPORTED, 'this storage reports no space figures');
    if (!can(view.user, PERM.FTP_WRITE)) space.flag |= VFS_FLAG.RDONLY;
    if (!sendExtendedReply(sftp, reqId, statvfsBody(space), log)) throw new SftpStatus(STATUS.OP_UNSUPPORTED, 'statvfs is not supported');
  };
  const requests: Record<string, (reqId: number, data: Buffer | undefined) => Promise<void>> = {
    'posix-rename@openssh.com': async (reqId, data) => {
      const [from, to] = readStrings(data, 2);
      if (from === undefined || to === undefined) throw new SftpStatus(STATUS.BAD_MESSAGE, 'malformed posix-rename request');
      const view = await ch.view();
      await view.renamePath(view.virtual(from), view.virtual(to), true);
      ch.ok(reqId);
    },
  };
  if (extended) {
    requests['statvfs@openssh.com'] = async (reqId, data) => {
      const [clientPath] = readStrings(data, 1);
      if (clientPath === undefined) throw new SftpStatus(STATUS.BAD_MESSAGE, 'malformed statvfs request');
      const view = await ch.view();
      const p = view.virtual(clientPath);
      await view.stat(p);
      await statvfs(reqId, view, p);
    };
    requests['fstatvfs@openssh.com'] = async (reqId, data) => {
      const buf = readBytes(data);
      if (!buf) throw new SftpStatus(STATUS.BAD_MESSAGE, 'malformed fstatvfs request');
      const { view, h } = await ch.held(buf);
      await statvfs(reqId, view, h.path);
    };
    requests['limits@openssh.com'] = async (reqId) => {
      await ch.view();
      if (!sendExtendedReply(sftp, reqId, limitsBody(), log)) throw new SftpStatus(STATUS.OP_UNSUPPORTED, 'limits is not supported');
    };
  }
  sftp.on('EXTENDED', (reqId, name, data) => {
    const request = Object.hasOwn(requests, name) ? requests[name] : undefined;
    if (!request) return sftp.status(reqId, STATUS.OP_UNSUPPORTED, `${name} is not supported`);
    ch.run(reqId, name.replace(/@openssh\.com$/, ''), () => request(reqId, data));
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

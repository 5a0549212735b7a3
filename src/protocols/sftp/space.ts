import { statfs } from 'node:fs/promises';
import type { Mounted } from '../../fs/storages.js';
import { LocalDriver } from '../../drivers/local/index.js';
import { VFS_FLAG, type VfsStats } from './openssh-ext.js';

/**
 * Space figures of a storage (the view's storageOf a path the user may read), for `statvfs@openssh.com`: a Local
 * storage answers its root's file system (statfs); other storages report none (undefined).
 */
export async function storageSpace(mounted: Mounted): Promise<VfsStats | undefined> {
  const driver = mounted.driver;
  if (!(driver instanceof LocalDriver)) return undefined;
  const st = await statfs(driver.root);
  return {
    bsize: st.bsize,
    frsize: st.bsize,
    blocks: st.blocks,
    bfree: st.bfree,
    bavail: st.bavail,
    files: st.files,
    ffree: st.ffree,
    favail: st.ffree,
    fsid: mounted.row.id,
    flag: VFS_FLAG.NOSUID,
    namemax: 255,
  };
}
